// The name -> builder registry of every task, in the catalogue's order.
#include "tasks/parity.hpp"
#include "tasks/start_token.hpp"
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

// Adds the `start_token` parameter (tasks/start_token.hpp) to a task without the tape layout.
TaskInfo with_start_token(TaskInfo info) {
  info.params.push_back(start_token_param());
  info.build = [build = std::move(info.build)](const ParamReader& p, const TaskContext& c) -> std::unique_ptr<Task> {
    std::unique_ptr<Task> task = build(p, c);
    if (p.boolean("start_token")) task = std::make_unique<StartTokenTask>(std::move(task));
    return task;
  };
  return info;
}

}  // namespace

const std::vector<TaskInfo>& task_registry() {
  static const std::vector<TaskInfo> registry = {
      with_start_token(parity_info()),
      with_start_token(modcount_info()),
      with_start_token(flipflop_info()),
      with_start_token(ffl_info()),
      with_start_token(dyck_info()),
      with_start_token(copy_info()),
      with_start_token(add_info()),
      with_start_token(modadd_info()),
      with_start_token(mano_info()),
      with_start_token(needle_info()),
      with_start_token(mqar_info()),
      with_start_token(permutation_info()),
      with_start_token(quaternion_info()),
      with_start_token(gridworld_info()),
      with_start_token(text_info()),
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
