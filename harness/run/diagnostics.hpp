// Diagnostics on a fixed in-distribution batch after training (harness.md, "What a run
// measures" → Diagnostics): how sharp each attention head is, and how spread out the values
// and hidden states of each layer are (the representation-collapse measure). Pure functions on
// the model's activations, checked on constructed cases in tests/harness/test_diagnostics.cpp:
//
//   Diagnostics d = compute_diagnostics(model, examples);   // forward passes, batches of 64
//
// Letters: B examples, H heads, T positions (padded length), d vector width; lengths[b] = the
// real (non-padding) positions of example b, which are its first lengths[b] (batches are
// right-padded). Padding positions enter nothing: neither as query rows nor as vectors.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "harness/core/records.hpp"
#include "model/model.hpp"
#include "tasks/task.hpp"

namespace srbench::harness {

// A mean built up one value at a time (so batches can be added in turn). NaN while empty.
struct RunningMean {
  double sum = 0;
  int64_t n = 0;
  void add(double v) { sum += v, ++n; }
  double mean() const { return n > 0 ? sum / static_cast<double>(n) : kNaN; }
};

// Row i of an attention matrix, its keys 0..i: alpha[0..i]. p_j = |α_j| / Σ_k |α_k|.
// normalized_row_entropy: −Σ_j p_j log p_j / log(i+1) (0·log 0 = 0), in [0, 1]; 1 = uniform,
// 0 = one key. NaN for i < 1 (one key: no spread to measure) or when every α_j is 0.
double normalized_row_entropy(const float* alpha, int i);
// row_max: max_j p_j, in [1/(i+1), 1]. NaN when every α_j is 0.
double row_max(const float* alpha, int i);

// att [B,H,T,T] row-major (one layer). For each head h, adds every real query row of every
// example: its normalized entropy to entropy[h] (rows i >= 1 only) and its max to max[h] (all
// rows). entropy and max have H entries.
void add_attention_rows(const float* att, int B, int H, int T, std::span<const int> lengths,
                        std::span<RunningMean> entropy, std::span<RunningMean> max);

// Matrix entropy of a set of vectors, the rows of X (n×d): rows are L2-normalised (a zero row
// stays zero), λ = the eigenvalues of X·Xᵀ in double (the nonzero ones equal those of XᵀX, and
// the smaller of the two is decomposed; negative round-off clamps to 0), p = λ / Σλ,
// S = −Σ p log p with 0·log 0 = 0. In [0, log min(n, d)]: identical rows → 0, orthonormal rows
// → log n. 0 for no rows or only zero rows.
double matrix_entropy(Eigen::MatrixXd X);

// x: [B,T,d] with row (b, t) starting at x + (b·T + t)·stride. Adds the matrix entropy of each
// example's real rows (t < lengths[b]) to `mean`.
void add_matrix_entropies(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths,
                          RunningMean& mean);

// LIMe's measure (the reference code of Gerasimov et al. 2025, corl-team/lime,
// src/analysis/entropy.py): the Rényi entropy of order α of one sequence's vectors, the rows of X
// (n×d), after every feature has been standardised over the whole set (see FeatureStats):
// K = X·Xᵀ, λ = its eigenvalues (negative round-off clamps to 0), p = λ / tr K,
// S_α = log(Σ p^α) / (1 − α). The reference uses α = ½. 0 for no rows or tr K = 0.
double renyi_matrix_entropy(const Eigen::MatrixXd& X, double alpha);

// Per-feature mean and standard deviation (n − 1 in the denominator, as torch.std) over every real
// row of every example of a set; standardise(x) = (x − mean) / (std + 1e-5), the reference's eps.
struct FeatureStats {
  Eigen::VectorXd sum, sumsq;
  int64_t n = 0;
  void add(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths);
  Eigen::VectorXd mean() const;
  Eigen::VectorXd std() const;
};

// x: [B,T,d] as in add_matrix_entropies. Adds renyi_matrix_entropy(·, ½) of each example's real
// rows, standardised with `stats`, to `mean`.
void add_renyi_entropies(const float* x, int64_t stride, int d, int B, int T, std::span<const int> lengths,
                         const FeatureStats& stats, RunningMean& mean);

// The diagnostics of `m` on `examples` (forward passes in batches of `batch`): attn_entropy and
// attn_max per (layer, head) are means over every real query row of every example (pooled; rows
// i >= 1 for the entropy); value_entropy and hidden_entropy per layer are means over examples.
// A model without attention (has_attention() false: a recurrent stack, recurrent.md) gets heads 0
// and only hidden_entropy, from each layer's outputs h_{l,t}. value_entropy_lime and
// hidden_entropy_lime are LIMe's measure of the same vectors (renyi_matrix_entropy; features
// standardised over the whole set, so a second forward pass when the set spans several batches).
Diagnostics compute_diagnostics(model::Model& m, const std::vector<tasks::Example>& examples, int batch = 64);

}  // namespace srbench::harness
