// Row-major Eigen views over the model's flat buffers (the layout of every activation and
// parameter tensor: model.md stores matrices row-major, as PyTorch does).
#pragma once

#include <Eigen/Core>

namespace srbench::model {

template <typename S>
using MatR = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using MapR = Eigen::Map<MatR<S>>;
template <typename S>
using MapRC = Eigen::Map<const MatR<S>>;

}  // namespace srbench::model
