#include "model/model.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "model/layers.hpp"
#include "model/lime.hpp"

namespace srbench::model {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

// Offsets of one block's tensors in the flat buffer (kNone: absent, e.g. RMSNorm biases).
struct BlockOffsets {
  size_t ln1w, ln1b, qkvw, qkvb, ow, ob, ln2w, ln2b, fcw, fcb, projw, projb;
  size_t attn_spline = kNone, mlp_spline = kNone;  // spline values (shared ones: the same offset in every block)
  size_t router = kNone;                           // LIMe's blocks.{l}.attn.router (l >= 1)
};

size_t offset_or_none(const ParamLayout& layout, const std::string& name) {
  const ParamInfo* p = layout.find(name);
  return p ? p->offset : kNone;
}

}  // namespace

// Everything forward saves for backward, the gradients of activations, and fixed tables.
template <typename S>
struct Workspace {
  // fixed
  std::vector<BlockOffsets> blocks;
  size_t tok_emb = 0, pos_emb = kNone, lnfw = 0, lnfb = kNone, headw = 0, headb = 0;
  std::vector<S> sinusoid;  // (max_len, C) for `sinusoidal`
  std::vector<S> rope;      // (max_len, hs/2, 2) cos, sin for `rope`
  std::vector<S> slopes;    // (H) for `alibi`
  SplineShape mlp_spline, attn_spline;

  // sized by (B, T); grown only when a call needs more
  int64_t cap_rows = 0, cap_att = 0, cap_scratch = 0;
  std::vector<S> res;                                  // (2L+1, N, C): residual stream
  std::vector<S> ln1, ln1_mean, ln1_rstd;              // (L, N, C), (L, N), (L, N)
  std::vector<S> qkv;                                  // (L, N, 3C), after LIMe mixing and RoPE
  std::vector<S> kv_raw, dkv_raw, lime_tmp;            // LIMe: raw k̂, v̂ of every layer (2·L·N·C, lime.hpp), their
                                                       // gradients, and (N·C) scratch
  std::vector<S> att;                                  // (L, B, H, T, T)
  std::vector<S> scores;                               // (L, B, H, T, T) spline-score: the scores s_ij
  std::vector<S> attnorm;                              // (L, B, H, T) spline attention: Σ_j|·| + ε per row
  std::vector<S> phi;                                  // (L, N, 2C) spline-kernel: φ(q) | φ(k)
  std::vector<S> atty;                                 // (L, N, C): heads concatenated
  std::vector<S> ln2, ln2_mean, ln2_rstd;              // like ln1
  std::vector<S> fc, act;                              // (L, N, F): before / after activation
  std::vector<S> lnf, lnf_mean, lnf_rstd;              // (N, C), (N), (N)
  std::vector<S> logits, dlogits, losses;              // (N, V), (N, V), (N)
  std::vector<S> dres, dln, datty, dqkv, dact;         // activation gradients, one layer at a time
  std::vector<S> kbias_keep;                           // (C) the key-bias gradient kept across the qkv backward
  std::vector<S> scratch;                              // (threads, T, T)
  std::vector<S> qk, dphi;                             // (N, 2C) spline-kernel backward, one layer at a time
};

template <typename S>
BasicModel<S>::BasicModel(const ModelConfig& cfg) : cfg_(cfg) {
  cfg_.validate();
  layout_ = ParamLayout(cfg_);
  params_.assign(layout_.total(), S(0));
  grads_.assign(layout_.total(), S(0));
  ws_ = std::make_unique<Workspace<S>>();
  auto& w = *ws_;
  const int C = cfg_.d_model, H = cfg_.heads, hs = cfg_.head_size();
  for (int l = 0; l < cfg_.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    auto at = [&](const std::string& n) { return offset_or_none(layout_, b + n); };
    w.blocks.push_back({at("ln1.weight"), at("ln1.bias"), at("attn.q.weight"), at("attn.q.bias"),
                        at("attn.o.weight"), at("attn.o.bias"), at("ln2.weight"), at("ln2.bias"),
                        at("mlp.fc.weight"), at("mlp.fc.bias"), at("mlp.proj.weight"), at("mlp.proj.bias")});
    auto spline = [&](const SplineConfig& sc, const char* own, const char* shared) {
      return offset_or_none(layout_, sc.share == SplineShare::Layer ? b + own : std::string(shared));
    };
    w.blocks.back().attn_spline = spline(cfg_.attn_spline, "attn.kernel.values", "spline.attn.values");
    w.blocks.back().mlp_spline = spline(cfg_.mlp_spline, "mlp.act.values", "spline.mlp.values");
    w.blocks.back().router = at("attn.router");
  }
  auto shape = [](const SplineConfig& sc) {
    return SplineShape{sc.keypoints, sc.range, sc.extrapolate == Extrapolate::Linear};
  };
  w.mlp_spline = shape(cfg_.mlp_spline);
  w.attn_spline = shape(cfg_.attn_spline);
  w.tok_emb = layout_.at("tok_emb").offset;
  w.pos_emb = offset_or_none(layout_, "pos_emb");
  w.lnfw = layout_.at("ln_f.weight").offset;
  w.lnfb = offset_or_none(layout_, "ln_f.bias");
  w.headw = layout_.at("head.weight").offset;
  w.headb = layout_.at("head.bias").offset;
  if (cfg_.position == Position::Sinusoidal) {
    w.sinusoid.resize(static_cast<size_t>(cfg_.max_len) * C);
    for (int t = 0; t < cfg_.max_len; ++t)
      for (int i = 0; 2 * i < C; ++i) {
        const double omega = std::pow(10000.0, -2.0 * i / C);
        w.sinusoid[static_cast<size_t>(t) * C + 2 * i] = static_cast<S>(std::sin(t * omega));
        w.sinusoid[static_cast<size_t>(t) * C + 2 * i + 1] = static_cast<S>(std::cos(t * omega));
      }
  }
  if (cfg_.position == Position::Rope) {
    w.rope.resize(static_cast<size_t>(cfg_.max_len) * hs);
    for (int t = 0; t < cfg_.max_len; ++t)
      for (int i = 0; 2 * i < hs; ++i) {
        const double theta = std::pow(10000.0, -2.0 * i / hs);
        w.rope[static_cast<size_t>(t) * hs + 2 * i] = static_cast<S>(std::cos(t * theta));
        w.rope[static_cast<size_t>(t) * hs + 2 * i + 1] = static_cast<S>(std::sin(t * theta));
      }
  }
  if (cfg_.position == Position::Alibi) {
    for (int h = 0; h < H; ++h) w.slopes.push_back(static_cast<S>(std::pow(2.0, -8.0 * (h + 1) / H)));
  }
}

template <typename S>
BasicModel<S>::~BasicModel() = default;
template <typename S>
BasicModel<S>::BasicModel(BasicModel&&) noexcept = default;
template <typename S>
BasicModel<S>& BasicModel<S>::operator=(BasicModel&&) noexcept = default;

template <typename S>
std::span<S> BasicModel<S>::param(std::string_view name) {
  const auto& p = layout_.at(name);
  return {params_.data() + p.offset, p.size};
}
template <typename S>
std::span<const S> BasicModel<S>::param(std::string_view name) const {
  const auto& p = layout_.at(name);
  return {params_.data() + p.offset, p.size};
}
template <typename S>
std::span<S> BasicModel<S>::grad(std::string_view name) {
  const auto& p = layout_.at(name);
  return {grads_.data() + p.offset, p.size};
}
template <typename S>
std::span<const S> BasicModel<S>::grad(std::string_view name) const {
  const auto& p = layout_.at(name);
  return {grads_.data() + p.offset, p.size};
}

template <typename S>
std::span<S> BasicModel<S>::spline_values() {
  const auto blk = layout_.spline_block();
  return {params_.data() + blk.offset, blk.size};
}
template <typename S>
std::span<const S> BasicModel<S>::spline_values() const {
  const auto blk = layout_.spline_block();
  return {params_.data() + blk.offset, blk.size};
}
template <typename S>
std::span<S> BasicModel<S>::spline_grads() {
  const auto blk = layout_.spline_block();
  return {grads_.data() + blk.offset, blk.size};
}
template <typename S>
std::span<const S> BasicModel<S>::spline_grads() const {
  const auto blk = layout_.spline_block();
  return {grads_.data() + blk.offset, blk.size};
}
template <typename S>
void BasicModel<S>::set_spline_values(std::span<const S> values) {
  const auto blk = layout_.spline_block();
  if (values.size() != blk.size)
    throw ModelError("set_spline_values: got " + std::to_string(values.size()) + " values, this model's splines hold " +
                     std::to_string(blk.size) + " (same spline settings and layers needed)");
  std::copy(values.begin(), values.end(), params_.begin() + static_cast<std::ptrdiff_t>(blk.offset));
}

std::vector<double> spline_init_values(const SplineConfig& sc, SplineInit init) {
  const int K = sc.keypoints;
  const double R = sc.range, h = sc.step();
  std::vector<double> v(static_cast<size_t>(K));
  for (int k = 0; k < K; ++k) {
    const double x = -R + k * h;
    double y = 0;
    switch (init) {
      case SplineInit::Gelu: y = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); break;
      case SplineInit::Relu: y = x > 0 ? x : 0.0; break;
      case SplineInit::Identity: y = x; break;
      case SplineInit::Exp: y = std::exp(x); break;
      case SplineInit::Elu1: y = x > 0 ? x + 1.0 : std::exp(x); break;
      case SplineInit::Zero: y = 0.0; break;
    }
    v[static_cast<size_t>(k)] = y;
  }
  return v;
}

namespace {

// A LIMe router W_l (rows H, cols (l+1)·H), model.md: `uniform` U(−a, a) with a = √(3/fan_in),
// fan_in = cols, drawn row-major from `uniform01` (values in (0, 1)); `identity` zeros. Then the
// current layer's block (the last H columns) is set to the identity.
template <typename S, typename Uniform01>
void init_router(S* x, int64_t rows, int64_t cols, bool uniform, Uniform01& uniform01) {
  const double a = std::sqrt(3.0 / static_cast<double>(cols));
  for (int64_t e = 0; e < rows * cols; ++e) x[e] = uniform ? static_cast<S>(a * (2.0 * uniform01() - 1.0)) : S(0);
  for (int64_t i = 0; i < rows; ++i) {
    S* row = x + i * cols + (cols - rows);
    std::fill(row, row + rows, S(0));
    row[i] = S(1);
  }
}

}  // namespace

template <typename S>
void BasicModel<S>::init(uint64_t seed) {
  // One generator, tensors in layout order; normals by Box–Muller (the same on every platform,
  // unlike std::normal_distribution).
  std::mt19937_64 gen(seed);
  auto uniform = [&] { return (static_cast<double>(gen() >> 11) + 0.5) * 0x1.0p-53; };  // (0, 1)
  auto normal = [&] {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  };
  const double std_resid = 0.02 / std::sqrt(2.0 * cfg_.layers);
  auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (const auto& p : layout_.tensors()) {
    S* x = params_.data() + p.offset;
    const bool is_norm = ends_with(p.name, "ln1.weight") || ends_with(p.name, "ln2.weight") ||
                         p.name == "ln_f.weight";
    if (p.group == ParamGroup::Router) {
      init_router(x, p.shape[0], p.shape[1], cfg_.lime_init == "uniform", uniform);
    } else if (p.spline != SplineSite::None) {  // deterministic: no random numbers drawn
      const auto v = p.spline == SplineSite::Mlp ? spline_init_values(cfg_.mlp_spline, cfg_.mlp_init())
                                                 : spline_init_values(cfg_.attn_spline, cfg_.attn_init());
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(v[i]);
    } else if (is_norm) {
      std::fill(x, x + p.size, S(1));
    } else if (!p.decay) {  // biases
      std::fill(x, x + p.size, S(0));
    } else {
      const double sd = ends_with(p.name, "attn.o.weight") || ends_with(p.name, "mlp.proj.weight") ? std_resid : 0.02;
      for (size_t i = 0; i < p.size; ++i) x[i] = static_cast<S>(sd * normal());
    }
  }
}

template <typename S>
void BasicModel<S>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), S(0));
}

template <typename S>
const S* BasicModel<S>::logits() const {
  return ws_->logits.data();
}

namespace {

void check_layer(int l, int layers, int last_batch, const char* what) {
  if (last_batch == 0)
    throw ModelError(std::string(what) + ": no forward call yet (call forward before reading activations)");
  if (l < 0 || l >= layers)
    throw ModelError(std::string(what) + ": layer " + std::to_string(l) + " is outside [0, " +
                     std::to_string(layers) + ")");
}

}  // namespace

// The offsets below repeat forward_backward's layout of the last call: att (L, B, H, T, T),
// qkv (L, N, 3C) with v in columns [2C, 3C) (under LIMe the mixed values), res (2L+1, N, C) with
// block l's output at 2l+2.
template <typename S>
const S* BasicModel<S>::attention(int l) const {
  check_layer(l, cfg_.layers, last_B_, "attention");
  const int64_t att_size = static_cast<int64_t>(last_B_) * cfg_.heads * last_T_ * last_T_;
  return ws_->att.data() + l * att_size;
}

template <typename S>
const S* BasicModel<S>::values(int l) const {
  check_layer(l, cfg_.layers, last_B_, "values");
  const int64_t N = static_cast<int64_t>(last_B_) * last_T_;
  return ws_->qkv.data() + l * N * 3 * cfg_.d_model + 2 * cfg_.d_model;
}

template <typename S>
const S* BasicModel<S>::block_output(int l) const {
  check_layer(l, cfg_.layers, last_B_, "block_output");
  const int64_t N = static_cast<int64_t>(last_B_) * last_T_;
  return ws_->res.data() + (2 * l + 2) * N * cfg_.d_model;
}

namespace {

template <typename S>
void grow(std::vector<S>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

template <typename S>
void zero(std::vector<S>& v, int64_t n) {
  std::fill(v.begin(), v.begin() + n, S(0));
}

}  // namespace

template <typename S>
S BasicModel<S>::forward_backward(const int32_t* tokens, const int32_t* targets, int B, int T, bool need_grads) {
  // ---- check the input ----
  if (B < 1 || T < 1)
    throw ModelError("forward: batch size and length must be >= 1, got B=" + std::to_string(B) +
                     ", T=" + std::to_string(T));
  if (T > cfg_.max_len)
    throw ModelError("forward: sequence length " + std::to_string(T) + " exceeds model.max_len " +
                     std::to_string(cfg_.max_len) + " (raise max_len to evaluate longer sequences)");
  if (need_grads && !targets) throw ModelError("forward_backward: gradients need targets");
  const int V = cfg_.vocab, C = cfg_.d_model, H = cfg_.heads, F = cfg_.mlp_hidden(), L = cfg_.layers;
  const int64_t N = static_cast<int64_t>(B) * T;
  auto where = [&](int64_t n) {
    return "[example " + std::to_string(n / T) + ", position " + std::to_string(n % T) + "]";
  };
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (tokens[n] < 0 || tokens[n] >= V)
      throw ModelError("forward: token id " + std::to_string(tokens[n]) + " at " + where(n) +
                       " is outside the vocabulary [0, " + std::to_string(V) + ")");
    if (targets) {
      if (targets[n] >= V || targets[n] < kNotScored)
        throw ModelError("forward: target " + std::to_string(targets[n]) + " at " + where(n) +
                         " is outside the vocabulary [0, " + std::to_string(V) + ") and not -1 (unscored)");
      if (targets[n] >= 0) ++count;
    }
  }

  // ---- workspace ----
  auto& w = *ws_;
  const int64_t att_size = static_cast<int64_t>(B) * H * T * T;
  if (N > w.cap_rows) {
    w.cap_rows = N;
    grow(w.res, (2 * L + 1) * N * C);
    for (auto* v : {&w.ln1, &w.ln2, &w.atty}) grow(*v, L * N * C);
    for (auto* v : {&w.ln1_mean, &w.ln1_rstd, &w.ln2_mean, &w.ln2_rstd}) grow(*v, L * N);
    grow(w.qkv, L * N * 3 * C);
    if (cfg_.lime == Lime::Static) {
      grow(w.kv_raw, L * N * 2 * C);
      grow(w.dkv_raw, L * N * 2 * C);
      grow(w.lime_tmp, N * C);
    }
    grow(w.fc, L * N * F);
    grow(w.act, L * N * F);
    grow(w.lnf, N * C);
    grow(w.lnf_mean, N);
    grow(w.lnf_rstd, N);
    grow(w.logits, N * V);
    grow(w.dlogits, N * V);
    grow(w.losses, N);
    for (auto* v : {&w.dres, &w.dln, &w.datty}) grow(*v, N * C);
    grow(w.dqkv, N * 3 * C);
    grow(w.dact, N * F);
  }
  if (att_size > w.cap_att) {
    w.cap_att = att_size;
    grow(w.att, L * att_size);
    if (cfg_.attention == Attention::SplineScore) grow(w.scores, L * att_size);
  }
  const int64_t rows_bht = static_cast<int64_t>(B) * H * T;  // spline attention: one denominator per row
  if (cfg_.attn_has_spline()) grow(w.attnorm, L * rows_bht);
  if (cfg_.attention == Attention::SplineKernel) {  // grow() does nothing when the size suffices
    grow(w.phi, L * N * 2 * C);
    grow(w.qk, N * 2 * C);
    grow(w.dphi, N * 2 * C);
  }
  const int64_t scratch_size = static_cast<int64_t>(omp_get_max_threads()) * T * T;
  if (need_grads && scratch_size > w.cap_scratch) {
    w.cap_scratch = scratch_size;
    grow(w.scratch, scratch_size);
  }
  last_B_ = B;
  last_T_ = T;
  scored_ = count;

  S* P = params_.data();
  const bool layer_norm = cfg_.norm == Norm::Layer;
  auto norm_forward = [&](S* out, S* mean, S* rstd, const S* inp, size_t wo, size_t bo) {
    if (layer_norm) layernorm_forward(out, mean, rstd, inp, P + wo, P + bo, static_cast<int>(N), C);
    else rmsnorm_forward(out, rstd, inp, P + wo, static_cast<int>(N), C);
  };
  auto act_forward = [&](S* out, const S* inp, const BlockOffsets& o) {
    if (cfg_.activation == Activation::Gelu) gelu_forward(out, inp, N * F);
    else if (cfg_.activation == Activation::Relu) relu_forward(out, inp, N * F);
    else spline_forward(out, inp, P + o.mlp_spline, N * F, w.mlp_spline);
  };
  const int n = static_cast<int>(N);
  const bool lime = cfg_.lime == Lime::Static;
  auto res = [&](int i) { return w.res.data() + i * N * C; };
  auto per_layer = [&](std::vector<S>& v, int l, int64_t width) { return v.data() + l * N * width; };

  // ---- forward ----
  const S* pos = cfg_.position == Position::Learned      ? P + w.pos_emb
                 : cfg_.position == Position::Sinusoidal ? w.sinusoid.data()
                                                         : nullptr;
  encoder_forward(res(0), tokens, P + w.tok_emb, pos, B, T, C);
  for (int l = 0; l < L; ++l) {
    const BlockOffsets& o = w.blocks[l];
    S* ln1 = per_layer(w.ln1, l, C);
    S* qkv = per_layer(w.qkv, l, 3 * C);
    S* atty = per_layer(w.atty, l, C);
    S* att = w.att.data() + l * att_size;
    S* ln2 = per_layer(w.ln2, l, C);
    S* fc = per_layer(w.fc, l, F);
    S* act = per_layer(w.act, l, F);
    // h = h + Attn(LN1(h))
    norm_forward(ln1, per_layer(w.ln1_mean, l, 1), per_layer(w.ln1_rstd, l, 1), res(2 * l), o.ln1w, o.ln1b);
    matmul_forward(qkv, ln1, P + o.qkvw, P + o.qkvb, n, C, 3 * C);
    if (lime) lime_forward(qkv, w.kv_raw.data(), w.lime_tmp.data(), l >= 1 ? P + o.router : nullptr, l, L, N, C, H);
    if (cfg_.position == Position::Rope) rope_forward(qkv, w.rope.data(), B, T, C, H);
    const S* slopes = cfg_.position == Position::Alibi ? w.slopes.data() : nullptr;
    if (cfg_.attention == Attention::Softmax)
      attention_forward(atty, att, qkv, slopes, B, T, C, H);
    else if (cfg_.attention == Attention::SplineScore)
      spline_score_attention_forward(atty, att, w.scores.data() + l * att_size, w.attnorm.data() + l * rows_bht, qkv,
                                     slopes, P + o.attn_spline, w.attn_spline, B, T, C, H);
    else
      spline_kernel_attention_forward(atty, att, w.attnorm.data() + l * rows_bht, per_layer(w.phi, l, 2 * C), qkv,
                                      P + o.attn_spline, w.attn_spline, B, T, C, H);
    matmul_forward(res(2 * l + 1), atty, P + o.ow, P + o.ob, n, C, C);
    residual_forward(res(2 * l + 1), res(2 * l + 1), res(2 * l), N * C);
    // h = h + proj(act(fc(LN2(h))))
    norm_forward(ln2, per_layer(w.ln2_mean, l, 1), per_layer(w.ln2_rstd, l, 1), res(2 * l + 1), o.ln2w, o.ln2b);
    matmul_forward(fc, ln2, P + o.fcw, P + o.fcb, n, C, F);
    act_forward(act, fc, o);
    matmul_forward(res(2 * l + 2), act, P + o.projw, P + o.projb, n, F, C);
    residual_forward(res(2 * l + 2), res(2 * l + 2), res(2 * l + 1), N * C);
  }
  norm_forward(w.lnf.data(), w.lnf_mean.data(), w.lnf_rstd.data(), res(2 * L), w.lnfw, w.lnfb);
  matmul_forward(w.logits.data(), w.lnf.data(), P + w.headw, P + w.headb, n, C, V);
  if (!targets || count == 0) return S(0);

  const S scale = S(1) / static_cast<S>(count);
  crossentropy_forward_backward(w.losses.data(), need_grads ? w.dlogits.data() : nullptr, w.logits.data(),
                                targets, scale, n, V);
  double total = 0;
  for (int64_t i = 0; i < N; ++i) total += w.losses[i];
  const S loss = static_cast<S>(total / static_cast<double>(count));
  if (!need_grads) return loss;

  // ---- backward ----
  S* G = grads_.data();
  auto norm_backward = [&](S* dinp, const S* dout, const S* inp, const S* mean, const S* rstd, size_t wo,
                           size_t bo) {
    if (layer_norm) layernorm_backward(dinp, G + wo, G + bo, dout, inp, P + wo, mean, rstd, n, C);
    else rmsnorm_backward(dinp, G + wo, dout, inp, P + wo, rstd, n, C);
  };
  // logits = head(LN_f(h))
  matmul_backward(w.dln.data(), G + w.headw, G + w.headb, w.dlogits.data(), w.lnf.data(), P + w.headw, n, C, V);
  zero(w.dres, N * C);
  if (lime) zero(w.dkv_raw, L * N * 2 * C);
  norm_backward(w.dres.data(), w.dln.data(), res(2 * L), w.lnf_mean.data(), w.lnf_rstd.data(), w.lnfw, w.lnfb);
  for (int l = L - 1; l >= 0; --l) {
    const BlockOffsets& o = w.blocks[l];
    // res(2l+2) = res(2l+1) + proj(act(fc(LN2(res(2l+1))))); dres holds d res(2l+2).
    matmul_backward(w.dact.data(), G + o.projw, G + o.projb, w.dres.data(), per_layer(w.act, l, F), P + o.projw,
                    n, F, C);
    // in place: dact becomes the gradient of the activation's input
    if (cfg_.activation == Activation::Gelu) gelu_backward(w.dact.data(), per_layer(w.fc, l, F), w.dact.data(), N * F);
    else if (cfg_.activation == Activation::Relu) relu_backward(w.dact.data(), per_layer(w.fc, l, F), w.dact.data(), N * F);
    else
      spline_backward(w.dact.data(), G + o.mlp_spline, w.dact.data(), per_layer(w.fc, l, F), P + o.mlp_spline, N * F,
                      w.mlp_spline);
    matmul_backward(w.dln.data(), G + o.fcw, G + o.fcb, w.dact.data(), per_layer(w.ln2, l, C), P + o.fcw, n, C, F);
    norm_backward(w.dres.data(), w.dln.data(), res(2 * l + 1), per_layer(w.ln2_mean, l, 1),
                  per_layer(w.ln2_rstd, l, 1), o.ln2w, o.ln2b);
    // res(2l+1) = res(2l) + o(Attn(qkv(LN1(res(2l))))); dres now holds d res(2l+1).
    matmul_backward(w.datty.data(), G + o.ow, G + o.ob, w.dres.data(), per_layer(w.atty, l, C), P + o.ow, n, C, C);
    if (cfg_.attention == Attention::Softmax)
      attention_backward(w.dqkv.data(), w.scratch.data(), w.datty.data(), per_layer(w.qkv, l, 3 * C),
                         w.att.data() + l * att_size, B, T, C, H);
    else if (cfg_.attention == Attention::SplineScore)
      spline_score_attention_backward(w.dqkv.data(), G + o.attn_spline, w.scratch.data(), w.datty.data(),
                                      per_layer(w.qkv, l, 3 * C), w.att.data() + l * att_size,
                                      w.scores.data() + l * att_size, w.attnorm.data() + l * rows_bht,
                                      P + o.attn_spline, w.attn_spline, B, T, C, H);
    else
      spline_kernel_attention_backward(w.dqkv.data(), G + o.attn_spline, w.scratch.data(), w.qk.data(),
                                       w.dphi.data(), w.datty.data(), per_layer(w.qkv, l, 3 * C),
                                       w.att.data() + l * att_size, w.attnorm.data() + l * rows_bht,
                                       per_layer(w.phi, l, 2 * C), P + o.attn_spline, w.attn_spline, B, T, C, H);
    if (cfg_.position == Position::Rope) rope_backward(w.dqkv.data(), w.rope.data(), B, T, C, H);
    // LIMe: the router's gradient, the raw k̂|v̂ gradients of layers <= l; dqkv's k|v columns
    // become the complete gradient of this layer's raw k̂|v̂.
    if (lime)
      lime_backward(w.dqkv.data(), l >= 1 ? G + o.router : nullptr, w.dkv_raw.data(), w.lime_tmp.data(),
                    w.kv_raw.data(), l >= 1 ? P + o.router : nullptr, l, L, N, C, H);
    // Under softmax attention without RoPE the key bias adds q_i·b_k to every score of row i, a
    // shift softmax ignores: ∂loss/∂b_k is exactly 0. Under LIMe too: layer m's key bias adds
    // the same vector Σ_j W_l[i, m·H + j]·b_{m,j} to every key of every layer l >= m that mixes
    // it, again a per-row shift. Keep it exactly 0 rather than summing the rounding noise of dK
    // over positions (which would also drive AdamW steps of order lr).
    const bool key_bias_inert = cfg_.attention == Attention::Softmax && cfg_.position != Position::Rope;
    std::vector<S>& kbias_keep = w.kbias_keep;
    if (key_bias_inert) kbias_keep.assign(G + o.qkvb + C, G + o.qkvb + 2 * C);
    matmul_backward(w.dln.data(), G + o.qkvw, G + o.qkvb, w.dqkv.data(), per_layer(w.ln1, l, C), P + o.qkvw, n, C,
                    3 * C);
    if (key_bias_inert) std::copy(kbias_keep.begin(), kbias_keep.end(), G + o.qkvb + C);
    norm_backward(w.dres.data(), w.dln.data(), res(2 * l), per_layer(w.ln1_mean, l, 1), per_layer(w.ln1_rstd, l, 1),
                  o.ln1w, o.ln1b);
  }
  encoder_backward(G + w.tok_emb, cfg_.position == Position::Learned ? G + w.pos_emb : nullptr, w.dres.data(),
                   tokens, B, T, C);
  return loss;
}

template class BasicModel<float>;
template class BasicModel<double>;

}  // namespace srbench::model
