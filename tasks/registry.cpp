// The name -> builder registry of every task, in the catalogue's order.
#include "tasks/parity.hpp"

namespace srbench::tasks {

const std::vector<TaskInfo>& task_registry() {
  static const std::vector<TaskInfo> registry = {
      parity_info(),
  };
  return registry;
}

}  // namespace srbench::tasks
