// Diagnostics (harness.md, "Diagnostics"): attention entropy and max, matrix entropy of values
// and hidden states. Constructed cases with known answers, the model's activation views checked
// against recomputation, a real tiny trained model (ranges, HDF5 round trip, report numbers).
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "harness/run/diagnostics.hpp"
#include "harness/report/report.hpp"
#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "harness/suite/suite.hpp"
#include "harness/run/trainer.hpp"
#include "harness/run/data.hpp"
#include "harness/run/evaluate.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::model::Model;
using srbench::model::ModelConfig;
using srbench::test::TempDir;

namespace {

// Attention [B,H,T,T] with every row of head h of example b set by row(b, h, i, p) (p has i+1 keys).
template <typename F>
std::vector<float> make_attention(int B, int H, int T, F row) {
  std::vector<float> att(static_cast<size_t>(B) * H * T * T, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i) row(b, h, i, att.data() + ((static_cast<int64_t>(b) * H + h) * T + i) * T);
  return att;
}

void uniform_row(int i, float* p) { std::fill(p, p + i + 1, 1.0f / static_cast<float>(i + 1)); }
void one_hot_row(int i, float* p) { p[i / 2] = 1.0f; }

// −Σ p log p of a distribution.
double entropy_of(const std::vector<double>& p) {
  double s = 0;
  for (double x : p)
    if (x > 0) s -= x * std::log(x);
  return s;
}

// Reference: the matrix entropy straight from harness.md — always the T×T X·Xᵀ, in double.
double reference_matrix_entropy(Eigen::MatrixXd X) {
  for (Eigen::Index r = 0; r < X.rows(); ++r) X.row(r).normalize();
  const Eigen::MatrixXd G = X * X.transpose();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
  std::vector<double> p;
  const double total = es.eigenvalues().cwiseMax(0.0).sum();
  for (Eigen::Index k = 0; k < G.rows(); ++k) p.push_back(std::max(0.0, es.eigenvalues()[k]) / total);
  return entropy_of(p);
}

ModelConfig tiny_config() {
  ModelConfig c;
  c.vocab = 7;
  c.layers = 2;
  c.d_model = 8;
  c.heads = 2;
  c.max_len = 16;
  return c;
}

const std::string kTinySuite =
    "name: diag\n"
    "seeds: [0, 1]\n"
    "defaults:\n"
    "  model: {layers: 2, d_model: 16, heads: 2, max_len: 64}\n"
    "  train: {steps: 40, batch: 16, lr: 3e-3, warmup: 5, eval_every: 20}\n"
    "  eval: {examples: 16, val_examples: 16}\n"
    "tasks:\n"
    "  - task: flipflop\n"
    "    train: {length: [4, 12]}\n"
    "    eval: {lengths: [8, 16]}\n";

// The csv row of `metric` (from format_diagnostics_report), split into fields.
std::vector<std::string> csv_fields(const std::string& csv, const std::string& metric) {
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f(1);  // fields; "…" quoted ones may hold commas
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) f.emplace_back();
      else f.back() += ch;
    }
    if (f.size() == 20 && f[10] == metric) return f;
  }
  return {};
}

}  // namespace

TEST_CASE("diagnostics: uniform rows have entropy 1, one-hot rows 0 and max 1", "[harness][diagnostics]") {
  const int B = 2, H = 2, T = 5;
  const auto att = make_attention(B, H, T, [](int, int h, int i, float* p) {
    if (h == 0) uniform_row(i, p);
    else one_hot_row(i, p);
  });
  std::vector<RunningMean> entropy(H), max(H);
  const std::vector<int> lengths = {T, T};
  add_attention_rows(att.data(), B, H, T, lengths, entropy, max);
  // head 0: every row i >= 1 has entropy exactly 1; max 1/(i+1) averaged over all rows
  CHECK(entropy[0].n == B * (T - 1));
  CHECK(entropy[0].mean() == Approx(1.0).margin(1e-12));
  CHECK(max[0].n == B * T);
  CHECK(max[0].mean() == Approx((1.0 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 5).epsilon(1e-7));
  // head 1: one key
  CHECK(entropy[1].mean() == 0.0);
  CHECK(max[1].mean() == 1.0);

  // a hand-worked row: p = (1/2, 1/4, 1/4) → 1.5 ln 2 / ln 3; |α| is used (weights of any sign)
  const float row[] = {0.5f, 0.25f, 0.25f}, signed_row[] = {-2.0f, 1.0f, -1.0f};
  CHECK(normalized_row_entropy(row, 2) == Approx(1.5 * std::log(2.0) / std::log(3.0)).epsilon(1e-12));
  CHECK(normalized_row_entropy(signed_row, 2) == Approx(1.5 * std::log(2.0) / std::log(3.0)).epsilon(1e-12));
  CHECK(row_max(signed_row, 2) == Approx(0.5).epsilon(1e-12));
  // row 0 has one key: no entropy, max 1
  CHECK(std::isnan(normalized_row_entropy(row, 0)));
  CHECK(row_max(row, 0) == 1.0);
}

TEST_CASE("diagnostics: padding rows of the attention enter nothing", "[harness][diagnostics]") {
  // Example 0 is real at all 4 positions, example 1 at its first 2 only. Every real row is
  // uniform; the padding rows of example 1 are one-hot, which would pull the entropy below 1.
  const int B = 2, H = 1, T = 4;
  const auto att = make_attention(B, H, T, [](int b, int, int i, float* p) {
    if (b == 1 && i >= 2) one_hot_row(i, p);
    else uniform_row(i, p);
  });
  std::vector<RunningMean> entropy(H), max(H);
  add_attention_rows(att.data(), B, H, T, std::vector<int>{4, 2}, entropy, max);
  CHECK(entropy[0].n == 3 + 1);
  CHECK(entropy[0].mean() == Approx(1.0).margin(1e-12));
  CHECK(max[0].n == 4 + 2);
  CHECK(max[0].mean() == Approx((1.0 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 + 1.0 / 2) / 6).epsilon(1e-7));
  // with the padding counted as real, the answer would differ
  std::vector<RunningMean> e2(H), m2(H);
  add_attention_rows(att.data(), B, H, T, std::vector<int>{4, 4}, e2, m2);
  CHECK(e2[0].mean() < 0.9);
}

TEST_CASE("diagnostics: matrix entropy of rank-1, orthonormal and two-vector sets", "[harness][diagnostics]") {
  // rank 1: multiples of one vector (any scale or sign) → 0
  Eigen::MatrixXd X(4, 3);
  X << 1, 2, 3, -2, -4, -6, 0.5, 1, 1.5, 10, 20, 30;
  CHECK(matrix_entropy(X) == Approx(0.0).margin(1e-12));
  // orthogonal rows of any length → log(rank); a rotated basis, and rows fewer than the width
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Random(5, 5)).householderQ();
  CHECK(matrix_entropy(Q) == Approx(std::log(5.0)).epsilon(1e-12));
  Eigen::MatrixXd R = Q.topRows(3);
  R.row(0) *= 7.0, R.row(2) *= 0.01;
  CHECK(matrix_entropy(R) == Approx(std::log(3.0)).epsilon(1e-12));
  // more rows than width (the d×d side is decomposed): e1, e2 three times each → log 2
  Eigen::MatrixXd E(6, 2);
  E << 1, 0, 0, 1, 1, 0, 0, 1, 2, 0, 0, 3;
  CHECK(matrix_entropy(E) == Approx(std::log(2.0)).epsilon(1e-12));
  CHECK(matrix_entropy(E) == Approx(reference_matrix_entropy(E)).epsilon(1e-12));
  // two unit vectors at angle θ: eigenvalues 1 ± cos θ, p = (1 ± cos θ)/2
  for (double theta : {0.1, 0.5, 1.0, M_PI / 2, 2.5}) {
    Eigen::MatrixXd V(2, 3);
    V << 1, 0, 0, std::cos(theta), std::sin(theta), 0;
    const double c = std::cos(theta);
    INFO("theta " << theta);
    CHECK(matrix_entropy(V) == Approx(entropy_of({(1 + c) / 2, (1 - c) / 2})).epsilon(1e-10));
  }
  // degenerate: no rows, or only zero rows → 0
  CHECK(matrix_entropy(Eigen::MatrixXd(0, 3)) == 0.0);
  CHECK(matrix_entropy(Eigen::MatrixXd::Zero(2, 3)) == 0.0);
}

// LIMe's measure at α = ½ by another route: the eigenvalues of X·Xᵀ are the squared singular
// values σ of X and tr = Σσ², so Σ p^½ = Σσ / ‖X‖_F and S_½ = 2·log(Σσ / ‖X‖_F).
double reference_renyi_half(const Eigen::MatrixXd& X) {
  const Eigen::VectorXd sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(X).singularValues();
  return 2 * std::log(sigma.sum() / X.norm());
}

TEST_CASE("diagnostics: LIMe's Renyi matrix entropy, by hand and by singular values", "[harness][diagnostics]") {
  // X = [[1,0],[1,1]]: K = [[1,1],[1,2]], λ = (3 ± √5)/2, tr 3, p = (3 ± √5)/6;
  // (√p₁ + √p₂)² = 1 + 2√(p₁p₂) = 1 + 2·√(4/36) = 5/3, so S_½ = 2·log √(5/3) = log(5/3).
  Eigen::MatrixXd X(2, 2);
  X << 1, 0, 1, 1;
  CHECK(renyi_matrix_entropy(X, 0.5) == Approx(std::log(5.0 / 3.0)).epsilon(1e-12));
  // orthonormal rows → log n for every α; rank one → 0
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Random(4, 4)).householderQ();
  for (double alpha : {0.5, 0.99, 2.0}) CHECK(renyi_matrix_entropy(Q, alpha) == Approx(std::log(4.0)).epsilon(1e-10));
  Eigen::MatrixXd R(3, 2);
  R << 1, 2, -2, -4, 3, 6;
  CHECK(renyi_matrix_entropy(R, 0.5) == Approx(0.0).margin(1e-7));
  // random sets, fewer rows than width and more (either Gram side decomposed)
  for (const auto& [n, d] : {std::pair{5, 9}, std::pair{12, 4}, std::pair{7, 7}}) {
    const Eigen::MatrixXd Y = Eigen::MatrixXd::Random(n, d);
    INFO(n << "x" << d);
    CHECK(renyi_matrix_entropy(Y, 0.5) == Approx(reference_renyi_half(Y)).epsilon(1e-10));
  }
  CHECK(renyi_matrix_entropy(Eigen::MatrixXd(0, 3), 0.5) == 0.0);
  CHECK(renyi_matrix_entropy(Eigen::MatrixXd::Zero(2, 3), 0.5) == 0.0);
}

TEST_CASE("diagnostics: feature statistics over the real rows, with torch.std's n - 1", "[harness][diagnostics]") {
  // [B=2, T=3, d=2] with stride 3; example 0 has 2 real rows, example 1 all 3.
  const std::vector<float> x = {1, 10, 99, 3, 20, -99, 50, 50, 50,  // row 2 of example 0 is padding
                                5, 30, 7,  7, 60, 8,   9, 0,  9};
  FeatureStats st;
  st.add(x.data(), 3, 2, 2, 3, std::vector<int>{2, 3});
  REQUIRE(st.n == 5);
  // feature 0: 1 3 5 7 9, mean 5, Σ(x−5)² = 40, std √(40/4) = √10
  // feature 1: 10 20 30 60 0, mean 24, Σ(x−24)² = 196+16+36+1296+576 = 2120, std √530
  CHECK(st.mean()[0] == Approx(5.0));
  CHECK(st.mean()[1] == Approx(24.0));
  CHECK(st.std()[0] == Approx(std::sqrt(10.0)).epsilon(1e-12));
  CHECK(st.std()[1] == Approx(std::sqrt(530.0)).epsilon(1e-12));
}

TEST_CASE("diagnostics: per-example matrix entropies leave padding out, follow the stride",
          "[harness][diagnostics]") {
  // [B=2, T=3, d=2] with stride 3 (a third, ignored column of garbage). Example 0: rows e1, e2
  // (log 2), then a padding row (1, 1) that would change it; example 1: e1 three times (0).
  const int B = 2, T = 3, d = 2, stride = 3;
  const std::vector<float> x = {1, 0, 99, 0, 1, -99, 1, 1, 5,  // example 0 (row 2 is padding)
                                1, 0, 7,  2, 0, 8,   3, 0, 9};
  RunningMean mean;
  add_matrix_entropies(x.data(), stride, d, B, T, std::vector<int>{2, 3}, mean);
  CHECK(mean.n == 2);
  CHECK(mean.mean() == Approx(std::log(2.0) / 2).epsilon(1e-12));
  RunningMean with_padding;
  add_matrix_entropies(x.data(), stride, d, B, T, std::vector<int>{3, 3}, with_padding);
  CHECK(with_padding.mean() != Approx(std::log(2.0) / 2).epsilon(1e-3));
}

TEST_CASE("diagnostics: the model's activation views match recomputation", "[harness][diagnostics]") {
  const ModelConfig cfg = tiny_config();
  Model m(cfg);
  m.init(3);
  CHECK_THROWS(m.attention(0));  // no forward call yet
  const int B = 2, T = 5, C = cfg.d_model, H = cfg.heads, L = cfg.layers, V = cfg.vocab;
  const std::vector<int32_t> tokens = {1, 4, 2, 6, 0, 3, 3, 5, 1, 2};
  m.forward(tokens.data(), nullptr, B, T);
  CHECK_THROWS(m.values(L));
  CHECK_THROWS(m.block_output(-1));
  const int64_t N = static_cast<int64_t>(B) * T;
  // Save the batched views.
  std::vector<std::vector<float>> att(L), val(L), hid(L);
  for (int l = 0; l < L; ++l) {
    att[l].assign(m.attention(l), m.attention(l) + N * H * T);
    for (int64_t n = 0; n < N; ++n) {
      const float* v = m.values(l) + n * m.values_stride();
      val[l].insert(val[l].end(), v, v + C);
    }
    hid[l].assign(m.block_output(l), m.block_output(l) + N * C);
  }
  std::vector<float> logits(m.logits(), m.logits() + N * V);

  auto layernorm = [&](const float* x, const std::string& prefix, int64_t n) {  // LN of row n, in double
    const auto w = m.param(prefix + ".weight"), b = m.param(prefix + ".bias");
    double mean = 0, var = 0;
    for (int c = 0; c < C; ++c) mean += x[n * C + c];
    mean /= C;
    for (int c = 0; c < C; ++c) var += (x[n * C + c] - mean) * (x[n * C + c] - mean);
    const double rstd = 1.0 / std::sqrt(var / C + 1e-5);
    std::vector<double> out(C);
    for (int c = 0; c < C; ++c) out[c] = (x[n * C + c] - mean) * rstd * w[c] + b[c];
    return out;
  };
  auto linear = [](const std::vector<double>& x, std::span<const float> w, std::span<const float> b, int k) {
    double s = b[k];  // output k of x·Wᵀ + b, W row-major [out, in]
    for (size_t c = 0; c < x.size(); ++c) s += w[static_cast<size_t>(k) * x.size() + c] * x[c];
    return s;
  };
  // Block inputs: the embedding (learned positions) for layer 0, block_output(l−1) after.
  std::vector<float> emb(N * C);
  const auto te = m.param("tok_emb"), pe = m.param("pos_emb");
  for (int64_t n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) emb[n * C + c] = te[tokens[n] * C + c] + pe[(n % T) * C + c];
  for (int l = 0; l < L; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    const float* in = l == 0 ? emb.data() : hid[l - 1].data();
    double worst = 0;
    for (int64_t n = 0; n < N; ++n) {
      const auto x = layernorm(in, b + "ln1", n);
      for (int k = 0; k < C; ++k)
        worst = std::max(worst, std::abs(linear(x, m.param(b + "attn.v.weight"), m.param(b + "attn.v.bias"), k) -
                                         val[l][n * C + k]));
    }
    INFO("layer " << l << ": values = LN1(block input)·W_vᵀ + b_v, worst difference " << worst);
    CHECK(worst < 1e-5);
    // attention rows: causal probabilities
    for (int bh = 0; bh < B * H; ++bh)
      for (int i = 0; i < T; ++i) {
        double sum = 0;
        for (int j = 0; j < T; ++j) {
          const float p = att[l][(static_cast<int64_t>(bh) * T + i) * T + j];
          if (j > i) CHECK(p == 0.0f);
          sum += p;
        }
        CHECK(sum == Approx(1.0).epsilon(1e-5));
      }
  }
  // the last block's output gives the logits through ln_f and the head
  double worst = 0;
  for (int64_t n = 0; n < N; ++n) {
    const auto x = layernorm(hid[L - 1].data(), "ln_f", n);
    for (int k = 0; k < V; ++k)
      worst = std::max(worst, std::abs(linear(x, m.param("head.weight"), m.param("head.bias"), k) - logits[n * V + k]));
  }
  CHECK(worst < 1e-5);
  // example 1 alone (B = 1) has the same activations as in the batch
  m.forward(tokens.data() + T, nullptr, 1, T);
  for (int l = 0; l < L; ++l) {
    for (int64_t k = 0; k < H * T * T; ++k) CHECK(m.attention(l)[k] == Approx(att[l][H * T * T + k]).margin(1e-6));
    for (int64_t k = 0; k < T * C; ++k) CHECK(m.block_output(l)[k] == Approx(hid[l][T * C + k]).margin(1e-5));
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        CHECK(m.values(l)[t * m.values_stride() + c] == Approx(val[l][(T + t) * C + c]).margin(1e-5));
  }
}

TEST_CASE("diagnostics: compute_diagnostics equals a per-example reference, in any batching",
          "[harness][diagnostics]") {
  const ModelConfig cfg = tiny_config();
  Model m(cfg);
  m.init(11);
  const int L = cfg.layers, H = cfg.heads, C = cfg.d_model;
  // examples of different lengths (padded in batches)
  std::vector<srbench::tasks::Example> examples;
  for (int k = 0; k < 7; ++k) {
    srbench::tasks::Example e;
    for (int t = 0; t < 2 + (k * 5) % 11; ++t) e.push((k + 3 * t) % cfg.vocab, -1);
    examples.push_back(e);
  }
  // Reference: each example alone (no padding), every formula spelled out.
  std::vector<double> ent(L * H, 0), mx(L * H, 0), ve(L, 0), he(L, 0);
  int64_t ent_rows = 0, max_rows = 0;
  std::vector<std::vector<Eigen::MatrixXd>> values(L), hiddens(L);  // per layer, each example's vectors
  for (const auto& e : examples) {
    const int T = static_cast<int>(e.tokens.size());
    m.forward(e.tokens.data(), nullptr, 1, T);
    for (int l = 0; l < L; ++l) {
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i) {
          const float* a = m.attention(l) + (static_cast<int64_t>(h) * T + i) * T;
          double s = 0, top = 0, e_sum = 0;
          for (int j = 0; j <= i; ++j) s += std::abs(a[j]), top = std::max(top, std::abs(double(a[j])));
          for (int j = 0; j <= i; ++j)
            if (a[j] != 0) e_sum -= std::abs(a[j]) / s * std::log(std::abs(a[j]) / s);
          mx[l * H + h] += top / s;
          if (i >= 1) ent[l * H + h] += e_sum / std::log(i + 1.0);
        }
      Eigen::MatrixXd Xv(T, C), Xh(T, C);
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < C; ++c) {
          Xv(t, c) = m.values(l)[t * m.values_stride() + c];
          Xh(t, c) = m.block_output(l)[t * C + c];
        }
      ve[l] += reference_matrix_entropy(Xv) / examples.size();
      he[l] += reference_matrix_entropy(Xh) / examples.size();
      values[l].push_back(Xv), hiddens[l].push_back(Xh);
    }
    ent_rows += T - 1, max_rows += T;
  }
  // LIMe's measure: every feature standardised over all the set's vectors (two passes: mean, then
  // Σ(x − μ)² / (n − 1)), then S_½ of each example by its singular values, averaged.
  auto lime_reference = [&](const std::vector<Eigen::MatrixXd>& xs) {
    Eigen::MatrixXd all(0, C);
    for (const auto& x : xs) {
      all.conservativeResize(all.rows() + x.rows(), C);
      all.bottomRows(x.rows()) = x;
    }
    const Eigen::RowVectorXd mu = all.colwise().mean();
    const Eigen::RowVectorXd sd =
        ((all.rowwise() - mu).array().square().colwise().sum() / double(all.rows() - 1)).sqrt().matrix();
    double s = 0;
    for (const auto& x : xs)
      s += reference_renyi_half(((x.rowwise() - mu).array().rowwise() / (sd.array() + 1e-5)).matrix());
    return s / xs.size();
  };
  for (int batch : {1, 3, 64}) {
    INFO("batch " << batch);
    const Diagnostics d = compute_diagnostics(m, examples, batch);
    REQUIRE(d.layers == L);
    REQUIRE(d.heads == H);
    for (int k = 0; k < L * H; ++k) {
      CHECK(d.attn_entropy[k] == Approx(ent[k] / ent_rows).epsilon(1e-5));
      CHECK(d.attn_max[k] == Approx(mx[k] / max_rows).epsilon(1e-5));
    }
    for (int l = 0; l < L; ++l) {
      CHECK(d.value_entropy[l] == Approx(ve[l]).epsilon(1e-5));
      CHECK(d.hidden_entropy[l] == Approx(he[l]).epsilon(1e-5));
      CHECK(d.value_entropy_lime[l] == Approx(lime_reference(values[l])).epsilon(1e-5));
      CHECK(d.hidden_entropy_lime[l] == Approx(lime_reference(hiddens[l])).epsilon(1e-5));
    }
  }
}

TEST_CASE("diagnostics: a trained tiny model's are in range, stored, read back and reported",
          "[harness][diagnostics]") {
  const Suite suite = parse_suite(kTinySuite, "diag.yaml");
  REQUIRE(suite.runs.size() == 2);
  TempDir dir;
  std::vector<RunResult> runs;
  std::vector<std::string> files;
  for (const auto& spec : suite.runs) {
    const RunResult r = run_training(spec);
    INFO("seed " << spec.seed << ": " << r.status << " " << r.message);
    REQUIRE(r.status == "ok");
    const Diagnostics& d = r.diag;
    REQUIRE(d.layers == 2);
    REQUIRE(d.heads == 2);
    REQUIRE(d.attn_entropy.size() == 4);
    REQUIRE(d.attn_max.size() == 4);
    REQUIRE(d.value_entropy.size() == 2);
    REQUIRE(d.hidden_entropy.size() == 2);
    const int T = spec.model.max_len, width = spec.model.d_model;
    for (int k = 0; k < 4; ++k) {
      CHECK(std::isfinite(d.attn_entropy[k]));
      CHECK(d.attn_entropy[k] >= 0.0);
      CHECK(d.attn_entropy[k] <= 1.0 + 1e-12);
      CHECK(d.attn_max[k] >= 1.0 / T);
      CHECK(d.attn_max[k] <= 1.0 + 1e-12);
    }
    for (int l = 0; l < 2; ++l)
      for (double s : {d.value_entropy[l], d.hidden_entropy[l]}) {
        CHECK(std::isfinite(s));
        CHECK(s > 0.0);  // a trained model's vectors are not all parallel
        CHECK(s <= std::log(static_cast<double>(std::min(T, width))) + 1e-9);
      }
    // written and read back exactly
    files.push_back(dir.file(r.run_id + ".h5"));
    write_run_file(files.back(), r, kTinySuite, nullptr);
    const RunResult back = read_run_file(files.back());
    CHECK(back.diag.layers == d.layers);
    CHECK(back.diag.heads == d.heads);
    CHECK(back.diag.attn_entropy == d.attn_entropy);
    CHECK(back.diag.attn_max == d.attn_max);
    CHECK(back.diag.value_entropy == d.value_entropy);
    CHECK(back.diag.hidden_entropy == d.hidden_entropy);
    REQUIRE(d.value_entropy_lime.size() == 2);
    CHECK(back.diag.value_entropy_lime == d.value_entropy_lime);
    CHECK(back.diag.hidden_entropy_lime == d.hidden_entropy_lime);
    // diag_init: the model as initialised, recomputed here from a fresh model of the same seed on
    // the same 64 validation examples; it is not the trained model's, and reads back exactly
    {
      Model fresh(spec.model);
      fresh.init(spec.seed);
      const auto task = srbench::tasks::make_task(spec.task, spec.params, {spec.train.data_seed});
      const Diagnostics want = compute_diagnostics(fresh, validation_set(*task, spec.train, 64));
      const Diagnostics& got = r.diag_init;
      REQUIRE(got.layers == 2);
      REQUIRE(got.heads == 2);
      REQUIRE(got.value_entropy_lime.size() == 2);
      srbench::test::check_same_diag(got, want);
      CHECK(got.value_entropy != d.value_entropy);
      CHECK(got.attn_entropy != d.attn_entropy);
      srbench::test::check_same_diag(back.diag_init, got);
    }
    runs.push_back(back);
  }
  // the two seeds really differ (else the means below would test nothing)
  CHECK(runs[0].diag.value_entropy != runs[1].diag.value_entropy);

  // report --diagnostics: means over the seeds, recomputed here
  const auto groups = aggregate_runs(runs);
  REQUIRE(groups.size() == 1);
  const DiagnosticsStats& g = groups[0].diag;
  REQUIRE(g.runs == 2);
  auto mean2 = [](double a, double b) { return (a + b) / 2; };
  const Diagnostics &d0 = runs[0].diag, &d1 = runs[1].diag;
  for (int k = 0; k < 4; ++k) {
    CHECK(g.attn_entropy[k].mean == Approx(mean2(d0.attn_entropy[k], d1.attn_entropy[k])).epsilon(1e-14));
    CHECK(g.attn_max[k].mean == Approx(mean2(d0.attn_max[k], d1.attn_max[k])).epsilon(1e-14));
  }
  // through the command line: the suite file, then the csv of report --diagnostics
  const std::string suite_path = dir.file("diag.h5");
  srbench::test::write_suite_file_of(suite_path, kTinySuite, files);
  const auto csv = srbench::test::run_srbench({"report", suite_path, "--diagnostics", "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      const auto f = csv_fields(csv.out, diag_metric_name("attn_entropy", l, h));
      REQUIRE(f.size() == 20);
      CHECK(f[11] == "2");
      const int k = l * 2 + h;
      CHECK(std::stod(f[12]) == Approx(mean2(d0.attn_entropy[k], d1.attn_entropy[k])).epsilon(1e-14));
      const auto fm = csv_fields(csv.out, diag_metric_name("attn_max", l, h));
      REQUIRE(fm.size() == 20);
      CHECK(std::stod(fm[12]) == Approx(mean2(d0.attn_max[k], d1.attn_max[k])).epsilon(1e-14));
    }
    const std::pair<const char*, std::vector<double> Diagnostics::*> layer_values[] = {
        {"value_entropy", &Diagnostics::value_entropy},
        {"hidden_entropy", &Diagnostics::hidden_entropy},
        {"value_entropy_lime", &Diagnostics::value_entropy_lime},
        {"hidden_entropy_lime", &Diagnostics::hidden_entropy_lime}};
    for (const auto& [q, field] : layer_values) {
      const auto f = csv_fields(csv.out, diag_metric_name(q, l));
      INFO(q);
      REQUIRE(f.size() == 20);
      CHECK(std::stod(f[12]) == Approx(mean2((d0.*field)[l], (d1.*field)[l])).epsilon(1e-14));
    }
  }
  // --at-init: the same report of the initialised models' diagnostics
  const auto init_csv = srbench::test::run_srbench({"report", suite_path, "--diagnostics", "--at-init", "--format", "csv"});
  REQUIRE(init_csv.exit_code == 0);
  for (int l = 0; l < 2; ++l) {
    const auto f = csv_fields(init_csv.out, diag_metric_name("value_entropy", l));
    REQUIRE(f.size() == 20);
    CHECK(f[11] == "2");
    CHECK(std::stod(f[12]) ==
          Approx(mean2(runs[0].diag_init.value_entropy[l], runs[1].diag_init.value_entropy[l])).epsilon(1e-14));
    const auto fh = csv_fields(init_csv.out, diag_metric_name("attn_entropy", l, 1));
    REQUIRE(fh.size() == 20);
    CHECK(std::stod(fh[12]) ==
          Approx(mean2(runs[0].diag_init.attn_entropy[l * 2 + 1], runs[1].diag_init.attn_entropy[l * 2 + 1])).epsilon(1e-14));
  }
  const auto init_table = srbench::test::run_srbench({"report", suite_path, "--diagnostics", "--at-init"});
  CHECK(init_table.out.find("at initialisation (before the first step)") != std::string::npos);
  CHECK(init_table.out.find("after training") == std::string::npos);
  const auto lone = srbench::test::run_srbench({"report", suite_path, "--at-init"});
  CHECK(lone.exit_code != 0);
  CHECK(lone.err.find("--at-init goes with --diagnostics") != std::string::npos);

  // table and markdown: the means at 3 decimals, every line within 100 columns
  char expect[32];
  std::snprintf(expect, sizeof expect, "%.3f", mean2(d0.hidden_entropy[1], d1.hidden_entropy[1]));
  for (const char* format : {"table", "markdown"}) {
    const auto out = srbench::test::run_srbench({"report", suite_path, "--diagnostics", "--format", format});
    INFO(format << ":\n" << out.out);
    REQUIRE(out.exit_code == 0);
    CHECK(out.out.find("attn_entropy") != std::string::npos);
    CHECK(out.out.find(expect) != std::string::npos);
    CHECK(out.out.find("runs with diagnostics: 2 of 2") != std::string::npos);
    if (std::string(format) == "table") {
      std::istringstream in(out.out);
      std::string line;
      while (std::getline(in, line))
        if (line.find(suite_path) == std::string::npos) CHECK(line.size() <= 100);
    }
  }
}

TEST_CASE("diagnostics: the report leaves out runs without diagnostics", "[harness][diagnostics]") {
  RunResult a, b, c;
  for (auto* r : {&a, &b, &c}) r->entry = r->task = "parity", r->model = "m";
  a.diag = {1, 2, {0.5, 1.0}, {0.25, 0.75}, {1.0}, {2.0}, {4.0}, {5.0}};
  b.diag = {1, 2, {0.7, 0.0}, {0.75, 0.25}, {3.0}, {kNaN}, {}, {}};  // as read from a file without LIMe's measure
  c.status = "diverged";  // no diagnostics
  const auto groups = aggregate_runs({a, b, c});
  REQUIRE(groups.size() == 1);
  const auto& d = groups[0].diag;
  CHECK(d.runs == 2);
  CHECK(d.attn_entropy[0].mean == Approx(0.6));
  CHECK(d.attn_entropy[1].mean == Approx(0.5));
  CHECK(d.attn_max[1].mean == Approx(0.5));
  CHECK(d.value_entropy[0].mean == Approx(2.0));
  CHECK(d.value_entropy[0].n == 2);
  CHECK(d.hidden_entropy[0].n == 1);  // NaN left out, like every statistic across seeds
  CHECK(d.hidden_entropy[0].mean == 2.0);
  CHECK(d.value_entropy_lime[0].n == 1);  // over the runs that have it
  CHECK(d.value_entropy_lime[0].mean == 4.0);
  CHECK(d.hidden_entropy_lime[0].mean == 5.0);
  const std::string table = format_diagnostics_report(groups, ReportFormat::table);
  CHECK(table.find("runs with diagnostics: 2 of 3") != std::string::npos);
  const std::string csv = format_diagnostics_report(groups, ReportFormat::csv);
  REQUIRE(csv_fields(csv, "attn_entropy[layer=0,head=1]").size() == 20);
  CHECK(csv_fields(csv, "value_entropy[layer=0]")[12] == "2");
  CHECK(csv_fields(csv, "value_entropy_lime[layer=0]")[12] == "4");
  // no run has it: no csv line, "-" in the table
  a.diag.value_entropy_lime.clear(), a.diag.hidden_entropy_lime.clear();
  const auto old = aggregate_runs({a, b, c});
  CHECK(format_diagnostics_report(old, ReportFormat::csv).find("entropy_lime") == std::string::npos);
  CHECK(format_diagnostics_report(old, ReportFormat::markdown).find("| 0 | 2.000 | 2.000 | - | - |") != std::string::npos);
}
