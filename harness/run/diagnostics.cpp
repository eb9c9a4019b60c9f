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

double matrix_entropy(Eigen::MatrixXd X) {
  if (X.rows() == 0 || X.cols() == 0) return 0;
  for (Eigen::Index r = 0; r < X.rows(); ++r) {
    const double norm = X.row(r).norm();
    if (norm > 0) X.row(r) /= norm;
  }
  // X·Xᵀ (n×n) and Xᵀ·X (d×d) have the same nonzero eigenvalues: decompose the smaller.
  const Eigen::MatrixXd G = X.rows() <= X.cols() ? Eigen::MatrixXd(X * X.transpose())
                                                 : Eigen::MatrixXd(X.transpose() * X);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(G, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd lambda = solver.eigenvalues().cwiseMax(0.0);
  const double total = lambda.sum();
  if (!(total > 0)) return 0;
  double s = 0;
  for (Eigen::Index k = 0; k < lambda.size(); ++k) {
    const double p = lambda[k] / total;
    if (p > 0) s -= p * std::log(p);
  }
  return s;
}

void add_matrix_entropies(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths,
                          RunningMean& mean) {
  Eigen::MatrixXd X;
  for (int b = 0; b < B; ++b) {
    const int len = std::min(lengths[static_cast<size_t>(b)], T);
    X.resize(len, d);
    for (int t = 0; t < len; ++t) {
      const float* row = x + (static_cast<int64_t>(b) * T + t) * stride;
      for (int k = 0; k < d; ++k) X(t, k) = static_cast<double>(row[k]);
    }
    mean.add(matrix_entropy(X));
  }
}

Diagnostics compute_diagnostics(model::Model& m, const std::vector<tasks::Example>& examples, int batch) {
  // A model without attention (a recurrent stack) has only its layers' outputs: heads 0, no
  // attention or value diagnostics.
  const bool attention = m.has_attention();
  const int L = m.config().layers, H = attention ? m.config().heads : 0, C = m.config().d_model;
  std::vector<RunningMean> entropy(static_cast<size_t>(L) * H), max(static_cast<size_t>(L) * H);
  std::vector<RunningMean> value(attention ? static_cast<size_t>(L) : 0), hidden(static_cast<size_t>(L));
  Batch bt;
  std::vector<tasks::Example> chunk;
  std::vector<int> lengths;
  for (size_t start = 0; start < examples.size(); start += static_cast<size_t>(batch)) {
    const size_t end = std::min(examples.size(), start + static_cast<size_t>(batch));
    chunk.assign(examples.begin() + static_cast<ptrdiff_t>(start), examples.begin() + static_cast<ptrdiff_t>(end));
    bt.assemble(chunk);
    lengths.clear();
    for (const auto& e : chunk) lengths.push_back(static_cast<int>(e.tokens.size()));
    m.forward(bt.tokens.data(), nullptr, bt.B, bt.T, bt.rows());
    for (int l = 0; l < L; ++l) {
      if (attention) {
        const auto heads = static_cast<size_t>(l) * H;
        add_attention_rows(m.attention(l), bt.B, H, bt.T, lengths, std::span(entropy).subspan(heads, H),
                           std::span(max).subspan(heads, H));
        add_matrix_entropies(m.values(l), m.values_stride(), C, bt.B, bt.T, lengths, value[l]);
      }
      add_matrix_entropies(m.block_output(l), C, C, bt.B, bt.T, lengths, hidden[l]);
    }
  }
  Diagnostics d;
  d.layers = L, d.heads = H;
  for (const auto& r : entropy) d.attn_entropy.push_back(r.mean());
  for (const auto& r : max) d.attn_max.push_back(r.mean());
  for (const auto& r : value) d.value_entropy.push_back(r.mean());
  for (const auto& r : hidden) d.hidden_entropy.push_back(r.mean());
  return d;
}

}  // namespace srbench::harness
