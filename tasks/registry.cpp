// The name -> builder registry of every task, in the catalogue's order.
#include "tasks/parity.hpp"
#include "tasks/modcount.hpp"
#include "tasks/flipflop.hpp"
#include "tasks/ffl.hpp"
#include "tasks/dyck.hpp"
#include "tasks/copy.hpp"
#include "tasks/add.hpp"
#include "tasks/modadd.hpp"
#include "tasks/mano.hpp"
#include "tasks/needle.hpp"
#include "tasks/mqar.hpp"
#include "tasks/permutation.hpp"
#include "tasks/quaternion.hpp"
#include "tasks/gridworld.hpp"
#include "tasks/text.hpp"
#include "tasks/chomsky.hpp"

namespace srbench::tasks {

const std::vector<TaskInfo>& task_registry() {
  static const std::vector<TaskInfo> registry = {
      parity_info(),
      modcount_info(),
      flipflop_info(),
      ffl_info(),
      dyck_info(),
      copy_info(),
      add_info(),
      modadd_info(),
      mano_info(),
      needle_info(),
      mqar_info(),
      permutation_info(),
      quaternion_info(),
      gridworld_info(),
      text_info(),
      // The Chomsky-hierarchy tasks (chomsky.md), by level.
      even_pairs_info(),
      modular_arithmetic_info(),
      parity_check_info(),
      cycle_navigation_info(),
      stack_manipulation_info(),
      reverse_string_info(),
      modular_arithmetic_brackets_info(),
      solve_equation_info(),
      duplicate_string_info(),
      missing_duplicate_string_info(),
      odds_first_info(),
      binary_addition_info(),
      binary_multiplication_info(),
      compute_sqrt_info(),
      bucket_sort_info(),
  };
  return registry;
}

}  // namespace srbench::tasks
