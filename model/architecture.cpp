#include "model/architecture.hpp"

#include "model/deltanet.hpp"
#include "model/gla.hpp"
#include "model/mamba.hpp"
#include "model/recurrent.hpp"
#include "model/transformer.hpp"

namespace srbench::model {

template <typename S>
std::unique_ptr<Architecture<S>> make_architecture(const ModelConfig& cfg) {
  if (cfg.recurrent()) return std::make_unique<RecurrentStack<S>>(cfg);  // recurrent.md
  if (cfg.arch == Arch::Mamba) return std::make_unique<MambaStack<S>>(cfg);  // linear-rnn.md
  if (cfg.arch == Arch::DeltaNet) return std::make_unique<DeltaNetStack<S>>(cfg);
  if (cfg.arch == Arch::Gla) return std::make_unique<GlaStack<S>>(cfg);
  return std::make_unique<Transformer<S>>(cfg);
}

template std::unique_ptr<Architecture<float>> make_architecture<float>(const ModelConfig&);
template std::unique_ptr<Architecture<double>> make_architecture<double>(const ModelConfig&);

}  // namespace srbench::model
