#include "model/params.hpp"

namespace srbench::model {

const char* to_string(ParamGroup g) {
  switch (g) {
    case ParamGroup::Main: return "main";
    case ParamGroup::Spline: return "spline";
    case ParamGroup::Router: return "router";
  }
  return "?";
}

void ParamLayout::add(std::string name, std::vector<int64_t> shape, bool decay, SplineSite spline, ParamGroup group) {
  ParamInfo p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.size = 1;
  for (auto s : p.shape) p.size *= static_cast<size_t>(s);
  p.offset = total_;
  p.decay = decay;
  p.group = spline == SplineSite::None ? group : ParamGroup::Spline;
  p.spline = spline;
  total_ += p.size;
  tensors_.push_back(std::move(p));
}

ParamLayout::ParamLayout(const ModelConfig& cfg) {
  if (cfg.recurrent()) {  // recurrent.md
    add_recurrent(cfg);
    return;
  }
  if (cfg.arch == Arch::Mamba) {  // linear-rnn.md
    add_mamba(cfg);
    return;
  }
  if (cfg.arch == Arch::DeltaNet) {
    add_deltanet(cfg);
    return;
  }
  if (cfg.arch == Arch::Gla) {
    add_gla(cfg);
    return;
  }
  const int64_t V = cfg.vocab, d = cfg.d_model, F = cfg.mlp_hidden();
  const bool bias = cfg.norm == Norm::Layer;
  auto norm = [&](const std::string& prefix) {
    add(prefix + ".weight", {d}, false);
    if (bias) add(prefix + ".bias", {d}, false);
  };
  add("tok_emb", {V, d}, true);
  if (cfg.position == Position::Learned) add("pos_emb", {cfg.max_len, d}, true);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    norm(b + "ln1");
    for (const char* p : {"q", "k", "v"}) add(b + "attn." + p + ".weight", {d, d}, true);
    for (const char* p : {"q", "k", "v"}) add(b + "attn." + p + ".bias", {d}, false);
    add(b + "attn.o.weight", {d, d}, true);
    add(b + "attn.o.bias", {d}, false);
    if (cfg.position == Position::Relative) {  // Transformer-XL's u, v and W_R (chomsky.md §7.3)
      add(b + "attn.rel.u", {cfg.heads, cfg.head_size()}, false);
      add(b + "attn.rel.v", {cfg.heads, cfg.head_size()}, false);
      add(b + "attn.rel.proj.weight", {d, d}, true);
    }
    norm(b + "ln2");
    add(b + "mlp.fc.weight", {F, d}, true);
    add(b + "mlp.fc.bias", {F}, false);
    add(b + "mlp.proj.weight", {d, F}, true);
    add(b + "mlp.proj.bias", {d}, false);
  }
  norm("ln_f");
  add("head.weight", {V, d}, true);
  add("head.bias", {V}, false);
  if (cfg.lime == Lime::Static)
    for (int64_t l = 1; l < cfg.layers; ++l)
      add("blocks." + std::to_string(l) + ".attn.router", {cfg.heads, (l + 1) * cfg.heads}, false, SplineSite::None,
          ParamGroup::Router);

  spline_block_.offset = total_;
  const bool mlp = cfg.mlp_has_spline(), attn = cfg.attn_has_spline();
  const int64_t Km = cfg.mlp_spline.keypoints, Ka = cfg.attn_spline.keypoints;
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    if (attn && cfg.attn_spline.share == SplineShare::Layer) add(b + "attn.kernel.values", {Ka}, false, SplineSite::Attn);
    if (mlp && cfg.mlp_spline.share == SplineShare::Layer) add(b + "mlp.act.values", {Km}, false, SplineSite::Mlp);
  }
  if (attn && cfg.attn_spline.share == SplineShare::Model) add("spline.attn.values", {Ka}, false, SplineSite::Attn);
  if (mlp && cfg.mlp_spline.share == SplineShare::Model) add("spline.mlp.values", {Km}, false, SplineSite::Mlp);
  spline_block_.size = total_ - spline_block_.offset;
}

const ParamInfo* ParamLayout::find(std::string_view name) const {
  for (const auto& p : tensors_)
    if (p.name == name) return &p;
  return nullptr;
}

const ParamInfo& ParamLayout::at(std::string_view name) const {
  if (const auto* p = find(name)) return *p;
  throw ModelError("no parameter named '" + std::string(name) + "' in this model");
}

}  // namespace srbench::model
