// A training smoke test: a 2-layer d64 model learns to copy the previous token of random
// sequences (an induction-free, attention-only rule) to > 95% accuracy in a few hundred steps.
#include <catch2/catch.hpp>
#include <omp.h>

#include <random>

#include "model/model.hpp"
#include "model/optim.hpp"

using namespace srbench::model;

namespace {

// Random tokens; the target at t ≥ 1 is the token at t − 1 (position 0 is not scored).
void copy_batch(std::mt19937_64& gen, int B, int T, int V, std::vector<int32_t>& tokens,
                std::vector<int32_t>& targets) {
  tokens.resize(static_cast<size_t>(B) * T);
  targets.resize(tokens.size());
  for (int i = 0; i < B * T; ++i) {
    tokens[i] = static_cast<int32_t>(gen() % V);
    targets[i] = i % T == 0 ? kNotScored : tokens[i - 1];
  }
}

double accuracy(Model& m, const std::vector<int32_t>& tokens, const std::vector<int32_t>& targets, int B, int T) {
  m.forward(tokens.data(), targets.data(), B, T);
  const int V = m.config().vocab;
  int right = 0, total = 0;
  for (int i = 0; i < B * T; ++i) {
    if (targets[i] < 0) continue;
    const float* z = m.logits() + static_cast<size_t>(i) * V;
    int best = 0;
    for (int v = 1; v < V; ++v)
      if (z[v] > z[best]) best = v;
    right += best == targets[i];
    ++total;
  }
  return static_cast<double>(right) / total;
}

}  // namespace

// [long]: left out of the sanitizer subset (scripts/sanitize.sh): hundreds of steps of kernels the other tests cover.
TEST_CASE("training: a small model learns to copy the previous token", "[training][long]") {
  // One thread: this checks learning, not threading (and stays quick on a loaded machine).
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  for (auto pos : {Position::Learned, Position::Rope}) {
    INFO(to_string(pos));
    ModelConfig cfg;
    cfg.vocab = 16;
    cfg.layers = 2;
    cfg.d_model = 64;
    cfg.heads = 4;
    cfg.max_len = 32;
    cfg.position = pos;
    Model m(cfg);
    m.init(1);
    AdamW opt(m.layout());
    TrainSettings st;
    st.steps = 300;
    st.warmup = 20;
    st.lr = 3e-3;
    const int B = 32, T = 16;
    std::mt19937_64 gen(2);
    std::vector<int32_t> tokens, targets;
    copy_batch(gen, B, T, cfg.vocab, tokens, targets);
    const double before = accuracy(m, tokens, targets, B, T);
    double first_loss = 0, last_loss = 0;
    for (int s = 0; s < st.steps; ++s) {
      copy_batch(gen, B, T, cfg.vocab, tokens, targets);
      const StepResult r = train_step(m, opt, tokens.data(), targets.data(), B, T, s, st);
      REQUIRE(r.finite);
      if (s == 0) first_loss = r.loss;
      last_loss = r.loss;
    }
    copy_batch(gen, B, T, cfg.vocab, tokens, targets);  // held-out sequences
    const double after = accuracy(m, tokens, targets, B, T);
    CHECK(before < 0.2);
    CHECK(after > 0.95);
    CHECK(last_loss < 0.2 * first_loss);
  }
  omp_set_num_threads(saved_threads);
}
