#include "harness/run/diagnostics.hpp"

#include <algorithm>
#include <cmath>

#include "harness/run/data.hpp"

namespace srbench::harness {

double normalized_row_entropy(const float* alpha, int i) {
  if (i < 1) return kNaN;
  double total = 0;
  for (int j = 0; j <= i; ++j) total += std::abs(static_cast<double>(alpha[j]));
  if (!(total > 0)) return kNaN;
  double h = 0;
  for (int j = 0; j <= i; ++j) {
    const double p = std::abs(static_cast<double>(alpha[j])) / total;
    if (p > 0) h -= p * std::log(p);
  }
  return h / std::log(static_cast<double>(i + 1));
}

double row_max(const float* alpha, int i) {
  double total = 0, top = 0;
  for (int j = 0; j <= i; ++j) {
    const double a = std::abs(static_cast<double>(alpha[j]));
    total += a;
    top = std::max(top, a);
  }
  return total > 0 ? top / total : kNaN;
}

void add_attention_rows(const float* att, int B, int H, int T, std::span<const int> lengths,
                        std::span<RunningMean> entropy, std::span<RunningMean> max) {
  for (int b = 0; b < B; ++b) {
    const int len = std::min(lengths[static_cast<size_t>(b)], T);
    for (int h = 0; h < H; ++h) {
      const float* P = att + (static_cast<int64_t>(b) * H + h) * T * T;
      for (int i = 0; i < len; ++i) {
        const float* row = P + static_cast<int64_t>(i) * T;
        const double e = normalized_row_entropy(row, i), m = row_max(row, i);
        if (!std::isnan(e)) entropy[static_cast<size_t>(h)].add(e);
        if (!std::isnan(m)) max[static_cast<size_t>(h)].add(m);
      }
    }
  }
}

namespace {
// X·Xᵀ (n×n) when X has no more rows than columns, else Xᵀ·X (d×d): the smaller Gram matrix, whose
// nonzero eigenvalues both share. Each entry one sum in index order, so the same bits on every
// machine and build (Eigen's product splits its inner sums by the detected cache sizes).
Eigen::MatrixXd smaller_gram(const Eigen::MatrixXd& X) {
  const bool rows = X.rows() <= X.cols();
  const Eigen::Index n = rows ? X.rows() : X.cols(), k = rows ? X.cols() : X.rows();
  Eigen::MatrixXd G(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j <= i; ++j) {
      double s = 0;
      for (Eigen::Index p = 0; p < k; ++p) s += rows ? X(i, p) * X(j, p) : X(p, i) * X(p, j);
      G(i, j) = G(j, i) = s;
    }
  return G;
}
}  // namespace

double matrix_entropy(Eigen::MatrixXd X) {
  if (X.rows() == 0 || X.cols() == 0) return 0;
  for (Eigen::Index r = 0; r < X.rows(); ++r) {
    double ss = 0;
    for (Eigen::Index c = 0; c < X.cols(); ++c) ss += X(r, c) * X(r, c);
    const double norm = std::sqrt(ss);
    if (norm > 0) X.row(r) /= norm;
  }
  // X·Xᵀ (n×n) and Xᵀ·X (d×d) have the same nonzero eigenvalues: decompose the smaller.
  const Eigen::MatrixXd G = smaller_gram(X);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(G, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd lambda = solver.eigenvalues().cwiseMax(0.0);
  double total = 0;
  for (Eigen::Index k = 0; k < lambda.size(); ++k) total += lambda[k];
  if (!(total > 0)) return 0;
  double s = 0;
  for (Eigen::Index k = 0; k < lambda.size(); ++k) {
    const double p = lambda[k] / total;
    if (p > 0) s -= p * std::log(p);
  }
  return s;
}

namespace {
// f(X) for each example b of x [B,T,d] (row (b, t) at x + (b·T + t)·stride): X holds its real rows
// (t < lengths[b]) in double.
template <typename F>
void for_each_example(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths, F f) {
  Eigen::MatrixXd X;
  for (int b = 0; b < B; ++b) {
    const int len = std::min(lengths[static_cast<size_t>(b)], T);
    X.resize(len, d);
    for (int t = 0; t < len; ++t) {
      const float* row = x + (static_cast<int64_t>(b) * T + t) * stride;
      for (int k = 0; k < d; ++k) X(t, k) = static_cast<double>(row[k]);
    }
    f(X);
  }
}
}  // namespace

void add_matrix_entropies(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths,
                          RunningMean& mean) {
  for_each_example(x, stride, d, B, T, lengths, [&](const Eigen::MatrixXd& X) { mean.add(matrix_entropy(X)); });
}

double renyi_matrix_entropy(const Eigen::MatrixXd& X, double alpha) {
  if (X.rows() == 0 || X.cols() == 0) return 0;
  // The nonzero eigenvalues of X·Xᵀ equal those of XᵀX, and both traces are ‖X‖²_F: decompose the
  // smaller (the zero eigenvalues add nothing to Σ p^α for α > 0).
  const Eigen::MatrixXd G = smaller_gram(X);
  double trace = 0;
  for (Eigen::Index i = 0; i < G.rows(); ++i) trace += G(i, i);
  if (!(trace > 0)) return 0;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(G, Eigen::EigenvaluesOnly);
  double z = 0;
  for (const double lambda : solver.eigenvalues())
    if (lambda > 0) z += std::pow(lambda / trace, alpha);
  return std::log(z) / (1 - alpha);
}

void FeatureStats::add(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths) {
  if (sum.size() != d) sum = Eigen::VectorXd::Zero(d), sumsq = Eigen::VectorXd::Zero(d);
  for (int b = 0; b < B; ++b) {
    const int len = std::min(lengths[static_cast<size_t>(b)], T);
    for (int t = 0; t < len; ++t, ++n) {
      const float* row = x + (static_cast<int64_t>(b) * T + t) * stride;
      for (int k = 0; k < d; ++k) {
        const double v = row[k];
        sum[k] += v, sumsq[k] += v * v;
      }
    }
  }
}

Eigen::VectorXd FeatureStats::mean() const { return n > 0 ? Eigen::VectorXd(sum / static_cast<double>(n)) : sum; }

Eigen::VectorXd FeatureStats::std() const {
  if (n < 2) return Eigen::VectorXd::Zero(sum.size());
  const double N = static_cast<double>(n);
  // Σ(x − μ)² = Σx² − N·μ²; round-off below 0 clamps to 0.
  return ((sumsq - sum.cwiseProduct(sum) / N) / (N - 1)).cwiseMax(0.0).cwiseSqrt();
}

void add_renyi_entropies(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths,
                         const FeatureStats& stats, RunningMean& mean) {
  constexpr double kEps = 1e-5;  // the reference's eps, added to the standard deviation
  const Eigen::RowVectorXd mu = stats.mean().transpose();
  const Eigen::RowVectorXd scale = (stats.std().array() + kEps).inverse().matrix().transpose();
  for_each_example(x, stride, d, B, T, lengths, [&](const Eigen::MatrixXd& X) {
    const Eigen::MatrixXd Z = (X.rowwise() - mu).array().rowwise() * scale.array();
    mean.add(renyi_matrix_entropy(Z, 0.5));
  });
}

Diagnostics compute_diagnostics(model::Model& m, const std::vector<tasks::Example>& examples, int batch) {
  // A model without attention (a recurrent stack) has only its layers' outputs: heads 0, no
  // attention or value diagnostics.
  const bool attention = m.has_attention();
  const int L = m.config().layers, H = attention ? m.config().heads : 0, C = m.config().d_model;
  std::vector<RunningMean> entropy(static_cast<size_t>(L) * H), max(static_cast<size_t>(L) * H);
  std::vector<RunningMean> value(attention ? static_cast<size_t>(L) : 0), hidden(static_cast<size_t>(L));
  std::vector<RunningMean> value_lime(value.size()), hidden_lime(hidden.size());
  std::vector<FeatureStats> value_stats(value.size()), hidden_stats(hidden.size());
  Batch bt;
  std::vector<tasks::Example> chunk;
  std::vector<int> lengths;
  auto forward = [&](size_t start) {
    const size_t end = std::min(examples.size(), start + static_cast<size_t>(batch));
    chunk.assign(examples.begin() + static_cast<ptrdiff_t>(start), examples.begin() + static_cast<ptrdiff_t>(end));
    bt.assemble(chunk);
    lengths.clear();
    for (const auto& e : chunk) lengths.push_back(static_cast<int>(e.tokens.size()));
    m.forward(bt.tokens.data(), nullptr, bt.B, bt.T, bt.rows());
  };
  // Pass 1: everything but LIMe's measure, whose standardisation needs the whole set's statistics.
  for (size_t start = 0; start < examples.size(); start += static_cast<size_t>(batch)) {
    forward(start);
    for (int l = 0; l < L; ++l) {
      if (attention) {
        const auto heads = static_cast<size_t>(l) * H;
        add_attention_rows(m.attention(l), bt.B, H, bt.T, lengths, std::span(entropy).subspan(heads, H),
                           std::span(max).subspan(heads, H));
        add_matrix_entropies(m.values(l), m.values_stride(), C, bt.B, bt.T, lengths, value[l]);
        value_stats[l].add(m.values(l), m.values_stride(), C, bt.B, bt.T, lengths);
      }
      add_matrix_entropies(m.block_output(l), C, C, bt.B, bt.T, lengths, hidden[l]);
      hidden_stats[l].add(m.block_output(l), C, C, bt.B, bt.T, lengths);
    }
  }
  // Pass 2: LIMe's measure; the activations of a set that fits one batch are still there.
  const bool one_batch = examples.size() <= static_cast<size_t>(batch);
  for (size_t start = 0; start < examples.size(); start += static_cast<size_t>(batch)) {
    if (!one_batch) forward(start);
    for (int l = 0; l < L; ++l) {
      if (attention)
        add_renyi_entropies(m.values(l), m.values_stride(), C, bt.B, bt.T, lengths, value_stats[l], value_lime[l]);
      add_renyi_entropies(m.block_output(l), C, C, bt.B, bt.T, lengths, hidden_stats[l], hidden_lime[l]);
    }
  }
  Diagnostics d;
  d.layers = L, d.heads = H;
  for (const auto& r : entropy) d.attn_entropy.push_back(r.mean());
  for (const auto& r : max) d.attn_max.push_back(r.mean());
  for (const auto& r : value) d.value_entropy.push_back(r.mean());
  for (const auto& r : hidden) d.hidden_entropy.push_back(r.mean());
  for (const auto& r : value_lime) d.value_entropy_lime.push_back(r.mean());
  for (const auto& r : hidden_lime) d.hidden_entropy_lime.push_back(r.mean());
  return d;
}

}  // namespace srbench::harness
