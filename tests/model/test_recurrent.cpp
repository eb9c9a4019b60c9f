// The recurrent models (recurrent.md): the forward pass against a plain reference written from
// the spec's equations, every parameter tensor's gradient against central finite differences
// (double), the float model against the double one, right padding, bit-identical results for
// any thread count, and the parameter layout as the spec lists it.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "model/model.hpp"
#include "model/recurrent_workspace.hpp"
#include "recurrent_helpers.hpp"
#include "tests/model/fd_check.hpp"

using namespace srbench::model;
using srbench::test::kRecurrentArchs;
using srbench::test::RowBatch;

namespace {

// B 3, T 7: the stack (2 cells) reaches its bottom's handling (2·2 < 7), the tape (3 cells) is
// shorter than T, and the input lengths 7, 4, 3 jump beyond it (4) and by a multiple of it (3).
RowBatch test_batch(const ModelConfig& cfg, uint64_t seed) {
  std::vector<int32_t> input = cfg.arch == Arch::TapeRnn ? std::vector<int32_t>{7, 4, 3} : std::vector<int32_t>{};
  return srbench::test::padded_batch(3, 7, cfg.vocab, seed, {7, 5, 6}, input);
}

std::string name_of(const ModelConfig& c) {
  return std::string(to_string(c.arch)) + (c.arch == Arch::Rnn ? std::string("/") + to_string(c.nonlinearity) : "") +
         ", layers " + std::to_string(c.layers) + ", vocab " + std::to_string(c.vocab);
}

std::vector<ModelConfig> configs() {
  std::vector<ModelConfig> out;
  for (Arch a : kRecurrentArchs)
    for (int layers : {1, 2}) out.push_back(srbench::test::recurrent_config(a, layers));
  ModelConfig relu = srbench::test::recurrent_config(Arch::Rnn);
  relu.nonlinearity = Nonlinearity::Relu;
  out.push_back(relu);
  // a vocabulary of 25 >= B·T = 21: layer 0 takes the embedding as a dense input (embedding_input)
  for (Arch a : kRecurrentArchs) {
    ModelConfig wide = srbench::test::recurrent_config(a, 2);
    wide.vocab = 25;
    out.push_back(wide);
  }
  return out;
}

}  // namespace

TEST_CASE("recurrent: forward matches a plain reference written from recurrent.md", "[recurrent][reference]") {
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> m(cfg);
    srbench::test::perturb(m, 11);
    for (uint64_t seed : {1, 2}) {
      RowBatch b = test_batch(cfg, seed);
      if (seed == 2) b.input_lengths.clear();  // tape_rnn: L = T without input lengths
      const double loss = srbench::test::loss_at(m, b);
      const auto r = srbench::test::ref::forward(m, b);
      double worst = 0, largest = 0;
      for (size_t i = 0; i < r.logits.size(); ++i) {
        worst = std::max(worst, std::abs(m.logits()[i] - r.logits[i]));
        largest = std::max(largest, std::abs(r.logits[i]));
      }
      CHECK(largest > 0.1);
      CHECK(worst < 1e-12);
      CHECK(loss == Approx(r.loss).epsilon(1e-12));
    }
  }
}

TEST_CASE("recurrent: gradients of every parameter match central finite differences", "[recurrent][gradients]") {
  // Double precision, h = 1e-5: truncation O(h²) ~ 1e-10, rounding O(1e-16/h) ~ 1e-11.
  double worst_all = 0;
  std::string worst_where;
  int tensors = 0;
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> m(cfg);
    srbench::test::perturb(m, 3);
    const RowBatch b = test_batch(cfg, 7);
    auto loss = [&](bool need_grads) {
      return m.forward_backward(b.tokens.data(), b.targets.data(), b.B, b.T, need_grads, b.rows());
    };
    // every tensor is exercised
    const auto r = srbench::test::check_finite_differences(m, loss, 1e-5, false, srbench::test::none_zero);
    tensors += r.tensors;
    if (r.worst > worst_all) worst_all = r.worst, worst_where = name_of(cfg) + " " + r.where;
  }
  std::printf("recurrent finite differences: %d tensors, worst |analytic - numeric| = %.3g (%s)\n", tensors, worst_all,
              worst_where.c_str());
}

TEST_CASE("recurrent: the float model agrees with the double model", "[recurrent][precision]") {
  double worst_logit = 0, worst_grad = 0;
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    BasicModel<double> md(cfg);
    Model mf(cfg);
    srbench::test::perturb(md, 21);
    for (size_t i = 0; i < md.num_params(); ++i) md.params()[i] = mf.params()[i] = static_cast<float>(md.params()[i]);
    const RowBatch b = test_batch(cfg, 4);
    md.zero_grads();
    mf.zero_grads();
    const double ld = md.forward_backward(b.tokens.data(), b.targets.data(), b.B, b.T, true, b.rows());
    const float lf = mf.forward_backward(b.tokens.data(), b.targets.data(), b.B, b.T, true, b.rows());
    CHECK(lf == Approx(ld).epsilon(1e-5));
    double mx = 0, err = 0;
    for (int i = 0; i < b.B * b.T * cfg.vocab; ++i) {
      mx = std::max(mx, std::abs(md.logits()[i]));
      err = std::max(err, std::abs(md.logits()[i] - mf.logits()[i]));
    }
    CHECK(err / mx < 1e-5);
    worst_logit = std::max(worst_logit, err / mx);
    for (const auto& p : md.layout().tensors()) {
      INFO(p.name);
      double gmx = 0, gerr = 0;
      for (size_t i = p.offset; i < p.offset + p.size; ++i) {
        gmx = std::max(gmx, std::abs(md.grads()[i]));
        gerr = std::max(gerr, std::abs(md.grads()[i] - mf.grads()[i]));
      }
      if (gmx == 0.0) {  // a path cut by ReLUs that are off everywhere (the finite differences see it too)
        CHECK(gerr == 0.0);
        continue;
      }
      CHECK(gerr / gmx < 1e-4);
      worst_grad = std::max(worst_grad, gerr / gmx);
    }
  }
  std::printf("recurrent float vs double: worst logits %.3g, worst gradient %.3g (relative to tensor max)\n",
              worst_logit, worst_grad);
}

TEST_CASE("recurrent: right padding leaves the real logits, the loss and every gradient bit-identical",
          "[recurrent][padding]") {
  std::set<Arch> padding_seen;  // archs whose padding logits did change with the padding's tokens
  for (const ModelConfig& cfg : configs()) {
    INFO(name_of(cfg));
    Model m(cfg);
    srbench::test::perturb(m, 5);
    const RowBatch a = test_batch(cfg, 9);
    RowBatch b = a;
    for (int e = 0; e < b.B; ++e)  // other tokens in every padding position
      for (int t = b.lengths[e]; t < b.T; ++t) b.tokens[e * b.T + t] = (b.tokens[e * b.T + t] + 1 + e) % cfg.vocab;
    REQUIRE(a.tokens != b.tokens);
    auto run = [&](const RowBatch& x, std::vector<float>& logits, std::vector<float>& grads) {
      m.zero_grads();
      const float loss = m.forward_backward(x.tokens.data(), x.targets.data(), x.B, x.T, true, x.rows());
      logits.assign(m.logits(), m.logits() + x.B * x.T * cfg.vocab);
      grads.assign(m.grads(), m.grads() + m.num_params());
      return loss;
    };
    std::vector<float> la, ga, lb, gb;
    const float loss_a = run(a, la, ga), loss_b = run(b, lb, gb);
    CHECK(std::memcmp(&loss_a, &loss_b, sizeof(float)) == 0);
    CHECK(std::memcmp(ga.data(), gb.data(), ga.size() * sizeof(float)) == 0);
    bool real_same = true, padding_differs = false;
    for (int e = 0; e < a.B; ++e)
      for (int t = 0; t < a.T; ++t)
        for (int v = 0; v < cfg.vocab; ++v) {
          const size_t i = (static_cast<size_t>(e) * a.T + t) * cfg.vocab + v;
          if (t < a.lengths[e]) real_same = real_same && std::memcmp(&la[i], &lb[i], sizeof(float)) == 0;
          else padding_differs = padding_differs || la[i] != lb[i];
        }
    CHECK(real_same);
    if (padding_differs) padding_seen.insert(cfg.arch);
  }
  CHECK(padding_seen.size() == kRecurrentArchs.size());  // the padding's own logits do depend on its tokens
}

TEST_CASE("recurrent: results are bit-identical for 1 and 2 threads", "[recurrent][threads]") {
  // B 40: three chunks of examples (16, 16, 8), split unevenly between two threads; d 64 so that
  // the sequence-wide products and the time loops cross their parallel thresholds.
  for (Arch arch : kRecurrentArchs) {
    INFO(to_string(arch));
    ModelConfig cfg = srbench::test::recurrent_config(arch, 2, 64);
    cfg.vocab = 9;
    cfg.stack_size = 6, cfg.tape_size = 7, cfg.tape_mlp = 16;
    std::vector<int32_t> lengths(40), input;
    for (int b = 0; b < 40; ++b) lengths[b] = 20 - b % 7, input.push_back(1 + (b * 5) % 20);
    const RowBatch batch = srbench::test::padded_batch(40, 20, cfg.vocab, 3, lengths, input);
    std::vector<float> logits[2], grads[2];
    float loss[2];
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      Model m(cfg);
      m.init(1);
      srbench::test::perturb(m, 8);
      m.zero_grads();
      loss[threads - 1] = m.forward_backward(batch.tokens.data(), batch.targets.data(), 40, 20, true, batch.rows());
      logits[threads - 1].assign(m.logits(), m.logits() + 40 * 20 * cfg.vocab);
      grads[threads - 1].assign(m.grads(), m.grads() + m.num_params());
    }
    omp_set_num_threads(1);
    CHECK(std::memcmp(&loss[0], &loss[1], sizeof(float)) == 0);
    CHECK(std::memcmp(logits[0].data(), logits[1].data(), logits[0].size() * sizeof(float)) == 0);
    CHECK(std::memcmp(grads[0].data(), grads[1].data(), grads[0].size() * sizeof(float)) == 0);
  }
}

TEST_CASE("recurrent: parameter layout as recurrent.md lists it", "[recurrent]") {
  // names and shapes written out from recurrent.md's "Checkpoint" (d 4, V 5, c 2, k 4)
  using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;
  auto layer = [](Arch arch, int l) {
    const std::string p = "rnn." + std::to_string(l) + ".";
    const int64_t G = arch == Arch::Lstm ? 4 : arch == Arch::Gru ? 3 : 1;
    const int64_t in = arch == Arch::StackRnn || arch == Arch::TapeRnn ? 4 + 2 : 4;
    Shapes s = {{p + "weight_ih", {G * 4, in}}, {p + "weight_hh", {G * 4, 4}}, {p + "bias_ih", {G * 4}},
                {p + "bias_hh", {G * 4}}};
    if (arch == Arch::StackRnn)
      s.insert(s.end(), {{p + "stack.push.weight", {2, 4}}, {p + "stack.push.bias", {2}},
                         {p + "stack.action.weight", {3, 4}}, {p + "stack.action.bias", {3}}});
    if (arch == Arch::TapeRnn)
      s.insert(s.end(), {{p + "tape.write1.weight", {4, 4}}, {p + "tape.write1.bias", {4}},
                         {p + "tape.write2.weight", {4, 4}}, {p + "tape.write2.bias", {4}},
                         {p + "tape.write3.weight", {2, 4}}, {p + "tape.write3.bias", {2}},
                         {p + "tape.action.weight", {5, 4}}, {p + "tape.action.bias", {5}}});
    return s;
  };
  for (Arch arch : kRecurrentArchs) {
    INFO(to_string(arch));
    const ModelConfig cfg = srbench::test::recurrent_config(arch, 2);
    Shapes want = {{"tok_emb", {5, 4}}, {"head.weight", {5, 4}}, {"head.bias", {5}}};
    for (int l = 0; l < 2; ++l) {
      const Shapes s = layer(arch, l);
      want.insert(want.end(), s.begin(), s.end());
    }
    const ParamLayout lay(cfg);
    CHECK(lay.tensors().size() == want.size());
    size_t total = 0;
    for (const auto& [name, shape] : want) {
      INFO(name);
      const ParamInfo* p = lay.find(name);
      REQUIRE(p);
      CHECK(p->shape == shape);
      // weight decay on every weight and tok_emb (recurrent.md), no bias; all in the main group
      CHECK(p->decay == (name.find("bias") == std::string::npos));
      CHECK(p->group == ParamGroup::Main);
      total += p->size;
    }
    CHECK(lay.total() == total);
    CHECK(lay.spline_block().size == 0);
  }
}

TEST_CASE("recurrent: a view of the layers' outputs; no attention", "[recurrent][views]") {
  const ModelConfig cfg = srbench::test::recurrent_config(Arch::Lstm, 2);
  BasicModel<double> m(cfg);
  srbench::test::perturb(m, 2);
  const RowBatch b = test_batch(cfg, 1);
  srbench::test::loss_at(m, b);
  CHECK_FALSE(m.has_attention());
  CHECK_THROWS_WITH(m.attention(0), Catch::Contains("no attention"));
  CHECK_THROWS_WITH(m.values(1), Catch::Contains("no attention"));
  // block_output(l) [B,T,C] is layer l's h_t: the last layer's feeds the head
  const double* h = m.block_output(1);
  const auto W = m.param("head.weight"), bias = m.param("head.bias");
  for (int n = 0; n < b.B * b.T; ++n)
    for (int v = 0; v < cfg.vocab; ++v) {
      double z = bias[v];
      for (int c = 0; c < cfg.d_model; ++c) z += W[v * cfg.d_model + c] * h[n * cfg.d_model + c];
      REQUIRE(m.logits()[n * cfg.vocab + v] == Approx(z).margin(1e-12));
    }
  // and layer 0's outputs are the reference's first layer
  std::vector<srbench::test::ref::Vec> xs;
  const auto emb = srbench::test::ref::tensor(m, "tok_emb");
  for (int t = 0; t < b.T; ++t) xs.emplace_back(emb.begin() + b.tokens[t] * 4, emb.begin() + (b.tokens[t] + 1) * 4);
  const auto h0 = srbench::test::ref::layer(m, 0, xs, b.T);
  for (int t = 0; t < b.T; ++t)
    for (int c = 0; c < 4; ++c) CHECK(m.block_output(0)[t * 4 + c] == Approx(h0[t][c]).margin(1e-12));
}

TEST_CASE("recurrent: the workspace estimate grows with B and T and needs no transformer", "[recurrent]") {
  const ModelConfig cfg = srbench::test::recurrent_config(Arch::Gru, 2, 16);
  const int64_t small = recurrent_workspace_bytes(cfg, 4, 8, false), grads = recurrent_workspace_bytes(cfg, 4, 8, true);
  CHECK(small > 0);
  CHECK(grads > small);
  CHECK(recurrent_workspace_bytes(cfg, 8, 8, true) > grads);
  ModelConfig t = cfg;
  t.arch = Arch::Transformer;
  t.heads = 4;
  CHECK_THROWS_WITH(recurrent_workspace_bytes(t, 4, 8, true), Catch::Contains("not recurrent"));
}
