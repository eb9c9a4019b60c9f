// A saved model: a checkpoint file (/model) or a run file saved with save_checkpoint
// (/runs/<run_id>/checkpoint).
#include "harness/results/results.hpp"
#include "model/checkpoint.hpp"

namespace srbench::harness {


model::Model load_model_file(const std::string& path) {
  const h5::Id file = [&] {
    try {
      return h5::open_file(path, "checkpoint");
    } catch (const h5::Error& e) {
      throw model::ModelError(e.what());
    }
  }();
  if (h5::has_link(file, "model")) return model::load_checkpoint(path);
  if (!h5::has_link(file, "runs"))
    throw model::ModelError(path + ": neither a checkpoint (/model) nor a run file (/runs/<id>/checkpoint)");
  try {
    const h5::Id runs = h5::open_group(file, "runs");
    const auto names = h5::link_names(runs);
    if (names.size() != 1)
      throw model::ModelError(path + ": holds several runs; give a checkpoint file or a single run's file");
    const h5::Id run = h5::open_group(runs, names[0]);
    if (!h5::has_link(run, "checkpoint"))
      throw model::ModelError(path + ": run " + names[0] + " has no checkpoint (train it with `save_checkpoint: true`)");
    return model::read_checkpoint(h5::open_group(run, "checkpoint"));
  } catch (const h5::Error& e) {
    throw model::ModelError(e.what());
  }
}

}  // namespace srbench::harness
