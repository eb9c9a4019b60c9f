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

namespace {

TaskInfo at_level(const char* level, TaskInfo info) {
  info.level = level;
  return info;
}

}  // namespace

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
      at_level("R", even_pairs_info()),
      at_level("R", modular_arithmetic_info()),
      at_level("R", parity_check_info()),
      at_level("R", cycle_navigation_info()),
      at_level("DCF", stack_manipulation_info()),
      at_level("DCF", reverse_string_info()),
      at_level("DCF", modular_arithmetic_brackets_info()),
      at_level("DCF", solve_equation_info()),
      at_level("CS", duplicate_string_info()),
      at_level("CS", missing_duplicate_string_info()),
      at_level("CS", odds_first_info()),
      at_level("CS", binary_addition_info()),
      at_level("CS", binary_multiplication_info()),
      at_level("CS", compute_sqrt_info()),
      at_level("CS", bucket_sort_info()),
  };
  return registry;
}

}  // namespace srbench::tasks
