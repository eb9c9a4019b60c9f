// No heap allocation inside a training step after the first (forward_backward, gradient
// clipping, AdamW): this executable replaces malloc and its relatives with counting wrappers
// around glibc's own (so operator new, Eigen's aligned_malloc and std::vector are all seen),
// then counts the allocations of steps 2 and 3 for models exercising every kernel.
#include <omp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "model/mamba_mixer.hpp"
#include "model/model.hpp"
#include "model/optim.hpp"
#include "model/recurrent_workspace.hpp"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
std::atomic<long> g_bytes{0};  // bytes asked for while counting
inline void note(size_t bytes) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(static_cast<long>(bytes), std::memory_order_relaxed);
  }
}
}  // namespace

extern "C" {
void* malloc(size_t n) {
  note(n);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t s) {
  note(n * s);
  return __libc_calloc(n, s);
}
void* realloc(void* p, size_t n) {
  note(n);
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  note(n);
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  note(n);
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  note(n);
  void* p = __libc_memalign(a, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace {

using namespace srbench::model;

// Allocations counted during steps 2 and 3 (step 1 may size the workspace); with mixed_lengths
// the rows have lengths 1 … 32 (read by a bidirectional model).
long allocations_after_first_step(const ModelConfig& cfg, int threads, bool mixed_lengths = false) {
  omp_set_num_threads(threads);
  Model m(cfg);
  m.init(3);
  AdamW opt(m.layout());
  TrainSettings st;
  st.steps = 10;
  st.warmup = 1;
  const int B = 32, T = 32, n = B * T;
  std::vector<int32_t> tokens(n), targets(n), lengths(B, T);
  for (int i = 0; i < n; ++i) {
    tokens[i] = (i * 7 + 3) % cfg.vocab;
    targets[i] = i % T == 0 ? kNotScored : tokens[i - 1];
  }
  if (mixed_lengths)
    for (int b = 0; b < B; ++b) lengths[b] = 1 + b % T;
  const RowLengths rows{mixed_lengths ? lengths.data() : nullptr, nullptr};
  train_step(m, opt, tokens.data(), targets.data(), B, T, 0, st, rows);
  g_allocations = 0;
  g_counting = true;
  for (int s = 1; s < 3; ++s) train_step(m, opt, tokens.data(), targets.data(), B, T, s, st, rows);
  g_counting = false;
  return g_allocations.load();
}

ModelConfig config_s() {  // performance.md's S
  ModelConfig c;
  c.vocab = 32;
  c.d_model = 64;
  c.layers = 2;
  c.heads = 4;
  c.max_len = 64;
  return c;
}

}  // namespace

TEST_CASE("the counting hook sees allocations (malloc, new, vector)", "[alloc]") {
  g_allocations = 0;
  g_counting = true;
  void* p = std::malloc(1 << 20);
  auto* q = new std::vector<float>(1000);
  g_counting = false;
  std::free(p);
  delete q;
  CHECK(g_allocations.load() == 3);  // malloc, new of the vector, its storage
}

TEST_CASE("no allocation in training steps after the first: S, softmax, learned positions", "[alloc]") {
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    CHECK(allocations_after_first_step(config_s(), threads) == 0);
  }
}

TEST_CASE("no allocation in training steps after the first: splines, every attention and position",
          "[alloc][splines]") {
  struct Variant {
    const char* name;
    Attention attention;
    Activation activation;
    Position position;
    Norm norm;
  };
  const Variant variants[] = {
      {"spline MLP, spline-score, alibi", Attention::SplineScore, Activation::Spline, Position::Alibi, Norm::Layer},
      {"spline-kernel, rope, rms", Attention::SplineKernel, Activation::Spline, Position::Rope, Norm::Rms},
      {"softmax, relu, sinusoidal", Attention::Softmax, Activation::Relu, Position::Sinusoidal, Norm::Layer},
      {"spline-score, none", Attention::SplineScore, Activation::Gelu, Position::None, Norm::Rms},
      {"softmax, relative", Attention::Softmax, Activation::Gelu, Position::Relative, Norm::Layer},
  };
  for (const Variant& v : variants) {
    ModelConfig c = config_s();
    c.attention = v.attention;
    c.activation = v.activation;
    c.position = v.position;
    c.norm = v.norm;
    for (int threads : {1, 2}) {
      INFO(v.name << ", threads " << threads);
      CHECK(allocations_after_first_step(c, threads) == 0);
    }
  }
}

// ---- recurrent.md: no allocation in a step, and the workspace estimate is what reserve allocates

namespace {

ModelConfig recurrent_config(Arch arch) {
  ModelConfig c = config_s();
  c.arch = arch;
  c.stack_size = 6, c.stack_cell_size = 4;
  c.tape_size = 8, c.tape_cell_size = 4, c.tape_mlp = 16;
  c.gated = c.output_gate = arch == Arch::DeltaNet;  // deltanet with every optional part
  return c;
}

}  // namespace

TEST_CASE("no allocation in training steps after the first: every recurrent arch", "[alloc][recurrent]") {
  for (Arch arch : {Arch::Rnn, Arch::Lstm, Arch::Gru, Arch::StackRnn, Arch::TapeRnn, Arch::Mamba, Arch::DeltaNet, Arch::Gla})
    for (int threads : {1, 2}) {
      INFO(to_string(arch) << ", threads " << threads);
      CHECK(allocations_after_first_step(recurrent_config(arch), threads) == 0);
    }
}

TEST_CASE("recurrent_workspace_bytes is what the first forward_backward allocates beyond the logits",
          "[alloc][recurrent]") {
  omp_set_num_threads(1);
  for (Arch arch : {Arch::Rnn, Arch::Lstm, Arch::Gru, Arch::StackRnn, Arch::TapeRnn})
    for (bool grads : {false, true}) {
      INFO(to_string(arch) << (grads ? ", with gradients" : ", forward only"));
      const ModelConfig cfg = recurrent_config(arch);
      const int B = 8, T = 12, n = B * T;
      std::vector<int32_t> tokens(n), targets(n);
      for (int i = 0; i < n; ++i) tokens[i] = targets[i] = (i * 5 + 1) % cfg.vocab;
      {  // the same shapes once, so that sgemm's per-thread packing buffer has its size
        Model warm(cfg);
        warm.forward_backward(tokens.data(), targets.data(), B, T, true);
      }
      Model m(cfg);
      m.init(1);
      g_bytes = 0;
      g_counting = true;
      m.forward_backward(tokens.data(), targets.data(), B, T, grads);
      g_counting = false;
      // the model's own buffers: logits and their gradient (N·V each) and the losses (N)
      const long own = static_cast<long>(sizeof(float)) * (2L * n * cfg.vocab + n);
      CHECK(g_bytes.load() - own == recurrent_workspace_bytes(cfg, B, T, grads));
    }
}

TEST_CASE("the Mamba mixer: memory() is what its first forward and backward allocate, and later steps "
          "allocate nothing", "[alloc][mamba]") {
  omp_set_num_threads(1);
  MambaDims m;
  m.B = 3, m.T = 37, m.d = 8, m.E = 16, m.N = 4, m.R = 2, m.K = 4;
  const int64_t n = m.rows();
  std::vector<float> u(static_cast<size_t>(n * m.d), 0.5f), dout(u.size(), 0.25f), out(u.size()), du(u.size());
  std::vector<std::vector<float>> w, g;
  for (int64_t size : {2L * m.E * m.d, 1L * m.E * m.K, 1L * m.E, 1L * (m.R + 2 * m.N) * m.E, 1L * m.E * m.R,
                       1L * m.E, 1L * m.E * m.N, 1L * m.E, 1L * m.d * m.E}) {
    w.emplace_back(static_cast<size_t>(size), 0.1f);
    g.emplace_back(static_cast<size_t>(size), 0.0f);
  }
  const MambaWeights<float> wt{w[0].data(), w[1].data(), w[2].data(), w[3].data(), w[4].data(),
                               w[5].data(), w[6].data(), w[7].data(), w[8].data()};
  const MambaGrads<float> gr{g[0].data(), g[1].data(), g[2].data(), g[3].data(), g[4].data(),
                             g[5].data(), g[6].data(), g[7].data(), g[8].data()};
  auto step = [&](MambaMixer<float>& mix, bool grads) {
    mix.reserve(m, grads);
    mix.forward(out.data(), u.data(), wt, m);
    if (grads) mix.backward(du.data(), gr, dout.data(), u.data(), wt, m);
  };
  for (bool grads : {false, true}) {
    INFO((grads ? "forward and backward" : "forward only"));
    {  // the same shapes once, so that sgemm's per-thread packing buffer has its size
      MambaMixer<float> warm;
      step(warm, true);
    }
    MambaMixer<float> mix;
    g_bytes = 0;
    g_allocations = 0;
    g_counting = true;
    step(mix, grads);
    g_counting = false;
    CHECK(g_bytes.load() == mix.memory(m, grads).total());
    g_allocations = 0;
    g_counting = true;
    step(mix, grads);
    step(mix, grads);
    g_counting = false;
    CHECK(g_allocations.load() == 0);
  }
}

TEST_CASE("no allocation in training steps after the first: bidirectional, mixed lengths", "[alloc][bidirectional]") {
  struct Variant {
    const char* name;
    Attention attention;
    Position position;
  };
  const Variant variants[] = {
      {"softmax, alibi", Attention::Softmax, Position::Alibi},
      {"spline-score, rope", Attention::SplineScore, Position::Rope},
      {"spline-kernel, learned", Attention::SplineKernel, Position::Learned},
      {"softmax, relative", Attention::Softmax, Position::Relative},
      {"spline-score, relative", Attention::SplineScore, Position::Relative},
  };
  for (const Variant& v : variants) {
    ModelConfig c = config_s();
    c.causal = false;
    c.attention = v.attention;
    c.position = v.position;
    for (int threads : {1, 2}) {
      INFO(v.name << ", threads " << threads);
      CHECK(allocations_after_first_step(c, threads, true) == 0);
    }
  }
}

// ---- the forward-only evaluation path (Model::infer): memory linear in T --------------------

namespace {

// Bytes the first infer of a fresh model allocates for B examples of T positions.
long infer_bytes(const ModelConfig& cfg, int B, int T) {
  std::vector<int32_t> tokens(static_cast<size_t>(B) * T), targets(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = targets[i] = static_cast<int32_t>((i * 5 + 1) % cfg.vocab);
  Model m(cfg);
  m.init(1);
  g_bytes = 0;
  g_counting = true;
  m.infer(tokens.data(), targets.data(), B, T);
  g_counting = false;
  return g_bytes.load();
}

}  // namespace

TEST_CASE("infer allocates memory linear in T: no T×T attention matrix, every attention and position",
          "[alloc][infer]") {
  omp_set_num_threads(2);
  struct Variant {
    const char* name;
    Attention attention;
    Position position;
    bool causal;
  };
  const Variant variants[] = {{"softmax, learned, causal", Attention::Softmax, Position::Learned, true},
                              {"softmax, relative, bidirectional", Attention::Softmax, Position::Relative, false},
                              {"spline-score, alibi, bidirectional", Attention::SplineScore, Position::Alibi, false},
                              {"spline-kernel, rope, causal", Attention::SplineKernel, Position::Rope, true}};
  for (const Variant& v : variants) {
    INFO(v.name);
    ModelConfig c = config_s();
    c.max_len = 2048;
    c.attention = v.attention;
    c.position = v.position;
    c.causal = v.causal;
    const int B = 4;
    const long at1k = infer_bytes(c, B, 1024), at2k = infer_bytes(c, B, 2048);
    // One layer's attention weights at T = 2048 alone would be B·H·T²·4 bytes = 256 MB. A group's
    // buffers (4096 rows whatever T: about 16 MB here) do not grow with T; the logits, the strips
    // and the relative positions grow linearly: going from T = 1024 to 2048 adds a few MB, where
    // a T² term would add three quarters of its size at 2048.
    const long one_matrix = static_cast<long>(B) * c.heads * 2048L * 2048L * 4;
    INFO("bytes at T=1024: " << at1k << ", at T=2048: " << at2k);
    CHECK(at2k < one_matrix / 8);
    CHECK(at2k - at1k < one_matrix / 64);
  }
}

TEST_CASE("mamba's, deltanet's and gla's evaluation memory is linear in T: equal steps of T add equal bytes",
          "[alloc][infer][mamba][deltanet][gla]") {
  omp_set_num_threads(2);
  for (Arch arch : {Arch::Mamba, Arch::DeltaNet, Arch::Gla}) {
    INFO(to_string(arch));
    ModelConfig c = recurrent_config(arch);
    c.max_len = 2048;
    const int B = 4;
    infer_bytes(c, B, 512);  // once first: sgemm's per-thread packing buffers get their size
    const long at512 = infer_bytes(c, B, 512), at1k = infer_bytes(c, B, 1024), at2k = infer_bytes(c, B, 2048);
    INFO("bytes at T=512: " << at512 << ", 1024: " << at1k << ", 2048: " << at2k);
    // a + b·T: the step 1024 -> 2048 adds twice the step 512 -> 1024 (a T² term would add 6x, a
    // fixed state per position nothing); per position, at most 16 values of width E (mamba) or of
    // the widest of d and the MLP (deltanet) a layer: the states are recomputed a chunk at a time,
    // never kept per position (mamba's (T, E, N), deltanet's (T, H, K, K))
    const long step1 = at1k - at512, step2 = at2k - at1k;
    CHECK(step1 > 0);
    CHECK(std::labs(step2 - 2 * step1) <= step1 / 100);
    const long per_position = step1 / (static_cast<long>(B) * 512);
    const long width = arch == Arch::Mamba ? c.expand * c.d_model : std::max(c.d_model, c.resolved_mlp_hidden());
    CHECK(per_position < 16L * c.layers * width * static_cast<long>(sizeof(float)));
  }
}

// ---- what a call allocates, as the model reports it (model/memory.hpp) -------------------------

namespace {

// Bytes the first forward_backward (need_grads) or infer (!need_grads && infer) of a fresh model
// allocates for B examples of T positions, after a model of the same config has run the same
// shapes (so that sgemm's per-thread packing buffers have their size), beyond what the second
// call allocates (what every call allocates and frees: Eigen's blocks for LIMe's products).
long first_call_bytes(const ModelConfig& cfg, int B, int T, bool need_grads, bool infer) {
  const int n = B * T;
  std::vector<int32_t> tokens(n), targets(n);
  for (int i = 0; i < n; ++i) tokens[i] = targets[i] = (i * 5 + 1) % cfg.vocab;
  auto call = [&](Model& m) {
    if (infer) m.infer(tokens.data(), targets.data(), B, T);
    else m.forward_backward(tokens.data(), targets.data(), B, T, need_grads);
  };
  {
    Model warm(cfg);
    warm.init(1);
    call(warm);
  }
  Model m(cfg);
  m.init(1);
  auto counted = [&] {
    g_bytes = 0;
    g_counting = true;
    call(m);
    g_counting = false;
    return g_bytes.load();
  };
  const long first = counted();
  return first - counted();
}

}  // namespace

TEST_CASE("forward_backward_memory and infer_memory are what the first calls allocate: every variant, every arch",
          "[alloc][memory][infer]") {
  struct Variant {
    const char* name;
    Attention attention;
    Position position;
    Lime lime;
    bool causal;
    Arch arch;
  };
  const Variant variants[] = {
      {"softmax, learned", Attention::Softmax, Position::Learned, Lime::None, true, Arch::Transformer},
      {"spline-score, alibi", Attention::SplineScore, Position::Alibi, Lime::None, true, Arch::Transformer},
      {"spline-score, relative, bidirectional", Attention::SplineScore, Position::Relative, Lime::None, false,
       Arch::Transformer},
      {"softmax, relative", Attention::Softmax, Position::Relative, Lime::None, true, Arch::Transformer},
      {"LIMe, rope", Attention::Softmax, Position::Rope, Lime::Static, true, Arch::Transformer},
      {"spline-kernel, sinusoidal, bidirectional", Attention::SplineKernel, Position::Sinusoidal, Lime::None, false,
       Arch::Transformer},
      {"lstm", Attention::Softmax, Position::Learned, Lime::None, true, Arch::Lstm},
      {"stack_rnn", Attention::Softmax, Position::Learned, Lime::None, true, Arch::StackRnn},
      {"mamba", Attention::Softmax, Position::Learned, Lime::None, true, Arch::Mamba},
      {"deltanet", Attention::Softmax, Position::Learned, Lime::None, true, Arch::DeltaNet},
      {"gla", Attention::Softmax, Position::Learned, Lime::None, true, Arch::Gla},
  };
  const int B = 8, T = 12;
  for (const Variant& v : variants)
    for (int threads : {1, 2}) {
      INFO(v.name << ", threads " << threads);
      omp_set_num_threads(threads);
      ModelConfig c = v.arch == Arch::Transformer ? config_s() : recurrent_config(v.arch);
      c.attention = v.attention, c.position = v.position, c.lime = v.lime, c.causal = v.causal;
      for (bool grads : {true, false}) {
        INFO((grads ? "with gradients" : "forward only"));
        CHECK(first_call_bytes(c, B, T, grads, false) == forward_backward_memory(c, B, T, grads, threads).total());
      }
      CHECK(first_call_bytes(c, B, T, false, true) == infer_memory(c, B, T, threads).total());
    }
}

TEST_CASE("forward_backward_memory: a transformer's saved activations, and what spline-score attention and LIMe add",
          "[alloc][memory][splines][lime]") {
  // model.md's buffers kept for backward: the residual stream (2L+1 rows of N·C), the two norms'
  // outputs and statistics, q|k|v, the heads, the MLP's two tensors, the attention weights
  // (L·B·H·T²), the final norm's output and statistics.
  const ModelConfig c = config_s();
  const int64_t B = 8, T = 12, N = B * T, L = c.layers, C = c.d_model, H = c.heads, F = c.mlp_hidden();
  const int64_t saved = 4 * ((2 * L + 1) * N * C + 2 * L * N * C + 4 * L * N + 3 * L * N * C + L * N * C + 2 * L * N * F +
                             L * B * H * T * T + N * C + 2 * N);
  CHECK(forward_backward_memory(c, B, T, true, 1).saved == saved);
  ModelConfig score = c;
  score.attention = Attention::SplineScore;  // its scores (L,B,H,T,T) and row denominators (L,B,H,T)
  CHECK(forward_backward_memory(score, B, T, true, 1).saved - saved == 4 * (L * B * H * T * T + L * B * H * T));
  ModelConfig lime = c;
  lime.lime = Lime::Static;  // every layer's raw k|v (L,N,2C) saved; their gradients (L,N,2C) and (N,C) besides
  const CallMemory plain = forward_backward_memory(c, B, T, true, 1), mixed = forward_backward_memory(lime, B, T, true, 1);
  CHECK(mixed.saved - plain.saved == 4 * L * N * 2 * C);
  CHECK(mixed.scratch - plain.scratch == 4 * (L * N * 2 * C + N * C));
}
