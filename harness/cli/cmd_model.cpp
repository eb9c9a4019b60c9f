// `srbench init-checkpoint` and `srbench forward`: a fresh checkpoint, and one forward+backward
// pass whose logits, loss and gradients go to a file — the bridge for checking the model against
// any other framework (model.md, "Checkpoint").
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "common/batch_file.hpp"
#include "harness/cli/cli.hpp"
#include "harness/results/results.hpp"
#include "model/checkpoint.hpp"
#include "model/model.hpp"

namespace po = boost::program_options;

namespace srbench::harness {

namespace {

// UsageError unless `option` was given.
void require(const po::variables_map& vm, const char* option, const char* command) {
  if (!vm.count(option))
    throw UsageError(std::string("missing --") + option + " (see srbench " + command + " --help)");
}

// UsageError unless the folder that will hold `path` exists (a missing folder is a typo, not a
// runtime failure).
void require_output_folder(const std::string& path, const char* option) {
  const auto folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw UsageError(std::string(option) + " " + path + ": the folder " + folder.string() + " does not exist");
}

}  // namespace

int cmd_init_checkpoint(const Args& args) {
  po::options_description opts(
      "srbench init-checkpoint --vocab V [--set KEY=VALUE ...] [--seed S] --out CK.h5:\n"
      "write a freshly initialised model (model.md init) as an HDF5 checkpoint\n\noptions");
  std::vector<std::string> sets;
  int vocab = 0;
  uint64_t seed = 0;
  std::string out;
  opts.add_options()
      ("help,h", "show this help")
      ("set", po::value(&sets)->composing(),
       "model config KEY=VALUE (repeatable; any key of model.md's `model:` section, nested ones "
       "dotted, e.g. --set d_model=32 --set position=rope)")
      ("vocab", po::value(&vocab), "vocabulary size V (required)")
      ("seed", po::value(&seed)->default_value(0), "initialisation seed")
      ("out", po::value(&out), "checkpoint file to write (required)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  require(vm, "vocab", "init-checkpoint");
  require(vm, "out", "init-checkpoint");
  if (vocab < 1) throw UsageError("--vocab must be at least 1, got " + std::to_string(vocab));
  require_output_folder(out, "--out");

  model::ModelConfig cfg;
  std::set<std::string> given;
  for (const auto& s : sets) {
    auto [key, value] = split_assignment(s, "--set");
    if (key.rfind("model.", 0) == 0) key = key.substr(6);  // `model.d_model` as in a suite file
    if (key == "vocab") throw UsageError("--set vocab: give the vocabulary size with --vocab");
    if (!given.insert(key).second) throw UsageError("--set " + key + " is given twice");
    cfg.set(key, value);  // ModelError naming the key
  }
  cfg.check_applies({given.begin(), given.end()});  // recurrent.md: a key its arch does not have
  cfg.vocab = vocab;
  model::Model m(cfg);  // validates: ModelError naming the key
  m.init(seed);
  model::save_checkpoint(m, out);
  std::cout << "wrote " << out << ": " << m.num_params() << " parameters in " << m.layout().tensors().size()
            << " tensors (";
  if (!cfg.transformer()) std::cout << "arch " << model::to_string(cfg.arch) << ", ";
  std::cout << "layers " << cfg.layers << ", d_model " << cfg.d_model;
  if (cfg.linear()) std::cout << ", norm " << model::to_string(cfg.resolved_norm());
  if (cfg.transformer())
    std::cout << ", heads " << cfg.heads << ", position " << model::to_string(cfg.position) << ", norm "
              << model::to_string(cfg.norm);
  std::cout << ", vocab " << cfg.vocab << ", seed " << seed << ")\n";
  return 0;
}

int cmd_forward(const Args& args) {
  po::options_description opts(
      "srbench forward --checkpoint CK.h5 --batch IN.h5 --out OUT.h5:\n"
      "one forward and backward pass of a checkpoint on a batch. IN.h5 holds datasets `tokens` and\n"
      "`targets` (integer [B,T]; target -1 = not scored) and optionally `lengths` and `input_lengths`\n"
      "(integer [B]: each row's own length and input-tape length, in [1, T]; default T); OUT.h5 receives\n"
      "`logits` [B,T,V] float32,\n"
      "`loss` (scalar float32, mean cross-entropy over the scored positions) and `grads/<param name>`\n"
      "(the gradient of that loss, same names and shapes as the parameters); with --attention also\n"
      "`attention/<layer>` [B,H,T,T] float32, the attention weights of head h, query i, key j\n\noptions");
  std::string checkpoint, batch_path, out;
  opts.add_options()
      ("help,h", "show this help")
      ("checkpoint", po::value(&checkpoint),
       "checkpoint file (model.md layout), or a run file saved with save_checkpoint (required)")
      ("batch", po::value(&batch_path), "batch file with `tokens` and `targets` (required)")
      ("out", po::value(&out), "result file to write (required)")
      ("attention", "also write each layer's attention weights (a model with attention)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  require(vm, "checkpoint", "forward");
  require(vm, "batch", "forward");
  require(vm, "out", "forward");
  require_output_folder(out, "--out");

  model::Model m = load_model_file(checkpoint);
  const TokenBatch batch = read_token_batch(batch_path, m.config().vocab, m.config().max_len);
  std::vector<std::vector<float>> attention;  // per layer [B,H,T,T], from a forward pass of its own
  if (vm.count("attention")) {
    if (!m.has_attention())
      throw UsageError(std::string("--attention: the model (arch ") + model::to_string(m.config().arch) + ") has no attention");
    m.forward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, batch.rows());
    const size_t n = static_cast<size_t>(batch.B) * m.config().heads * batch.T * batch.T;
    for (int l = 0; l < m.config().layers; ++l) attention.emplace_back(m.attention(l), m.attention(l) + n);
  }
  m.zero_grads();
  const float loss = m.forward_backward(batch.tokens.data(), batch.targets.data(), batch.B, batch.T, true, batch.rows());
  const int64_t B = batch.B, T = batch.T, V = m.config().vocab;
  h5::write_file_atomically(out, [&](hid_t file) {
    h5::write_array(file, "logits", m.logits(), {B, T, V});
    h5::write_array(file, "loss", &loss, {});
    h5::Id grads = h5::create_group(file, "grads");
    for (const auto& p : m.layout().tensors()) h5::write_array(grads, p.name, m.grads() + p.offset, p.shape);
    if (!attention.empty()) {
      h5::Id group = h5::create_group(file, "attention");
      for (size_t l = 0; l < attention.size(); ++l)
        h5::write_array(group, std::to_string(l), attention[l].data(), {B, m.config().heads, T, T});
    }
  });
  std::cout << "loss " << loss << " over " << m.scored() << " scored positions (B " << B << ", T " << T
            << "); wrote " << out << "\n";
  return 0;
}

}  // namespace srbench::harness
