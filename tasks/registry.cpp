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
  };
  return registry;
}

}  // namespace srbench::tasks
