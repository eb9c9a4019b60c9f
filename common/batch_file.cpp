#include "common/batch_file.hpp"

#include "common/error.hpp"
#include "common/h5.hpp"

namespace srbench {

namespace {

using h5::Id;
using h5::shape_text;

// A batch that does not read is a bad input.
template <typename F>
auto reading(F&& read) {
  return h5::errors_as<InputError>(read);
}

// An integer dataset of rank 2, read as int64; its shape in `shape`.
std::vector<int64_t> read_int_matrix(hid_t file, const std::string& path, const char* name,
                                     std::vector<int64_t>& shape) {
  if (!h5::has_link(file, name))
    throw InputError("batch " + path + ": no dataset '" + name + "' (expected int32 [B,T])");
  if (!h5::is_dataset(file, name)) throw InputError("batch " + path + ": '" + name + "' is not a dataset");
  const h5::DatasetInfo info = h5::dataset_info(file, name);
  if (info.cls != h5::DatasetInfo::Integer)
    throw InputError("batch " + path + ": dataset '" + name + "' is not of an integer type (expected int32 [B,T])");
  shape = info.shape;
  if (shape.size() != 2)
    throw InputError("batch " + path + ": dataset '" + name + "' has shape " + shape_text(shape) +
                     ", expected 2 dimensions [B,T]");
  try {
    return h5::read_array<int64_t>(file, name, 2);
  } catch (const h5::Error&) {
    throw InputError("batch " + path + ": dataset '" + name + "' cannot be read");
  }
}

}  // namespace

TokenBatch read_token_batch(const std::string& path, int vocab, int max_len) {
  Id file = reading([&] { return h5::open_file(path, "batch"); });
  std::vector<int64_t> token_shape, target_shape;
  const auto tokens = reading([&] { return read_int_matrix(file, path, "tokens", token_shape); });
  const auto targets = reading([&] { return read_int_matrix(file, path, "targets", target_shape); });
  if (token_shape != target_shape)
    throw InputError("batch " + path + ": tokens " + shape_text(token_shape) + " and targets " +
                     shape_text(target_shape) + " differ in shape");
  const int64_t B = token_shape[0], T = token_shape[1];
  if (B < 1 || T < 1) throw InputError("batch " + path + ": empty batch " + shape_text(token_shape));
  if (T > max_len)
    throw InputError("batch " + path + ": T = " + std::to_string(T) + " positions exceed the model's max_len " +
                     std::to_string(max_len));
  auto at = [&](const char* name, int64_t i) {
    return std::string(name) + "[" + std::to_string(i / T) + "][" + std::to_string(i % T) + "]";
  };
  TokenBatch batch;
  batch.B = static_cast<int>(B);
  batch.T = static_cast<int>(T);
  batch.tokens.resize(tokens.size());
  batch.targets.resize(targets.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw InputError("batch " + path + ": " + at("tokens", static_cast<int64_t>(i)) + " = " +
                       std::to_string(tokens[i]) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    if (targets[i] != kNotScored && (targets[i] < 0 || targets[i] >= vocab))
      throw InputError("batch " + path + ": " + at("targets", static_cast<int64_t>(i)) + " = " +
                       std::to_string(targets[i]) + " is neither -1 (not scored) nor in the vocabulary [0, " +
                       std::to_string(vocab) + ")");
    batch.tokens[i] = static_cast<int32_t>(tokens[i]);
    batch.targets[i] = static_cast<int32_t>(targets[i]);
  }
  // optional per-row lengths, [B] each, in [1, T]
  for (const auto& [name, out] : {std::pair{"lengths", &batch.lengths}, std::pair{"input_lengths", &batch.input_lengths}}) {
    if (!h5::has_link(file, name)) continue;
    const h5::DatasetInfo info = reading([&] { return h5::dataset_info(file, name); });
    if (info.cls != h5::DatasetInfo::Integer || info.shape != h5::Shape{B})
      throw InputError("batch " + path + ": dataset '" + name + "' must be integer [" + std::to_string(B) + "], got " +
                       (info.cls == h5::DatasetInfo::Integer ? "shape " + shape_text(info.shape) : "another type"));
    const auto values = reading([&, n = name] { return h5::read_array<int64_t>(file, n, 1); });
    for (int64_t b = 0; b < B; ++b) {
      if (values[b] < 1 || values[b] > T)
        throw InputError("batch " + path + ": " + name + "[" + std::to_string(b) + "] = " + std::to_string(values[b]) +
                         " is outside [1, " + std::to_string(T) + "]");
      out->push_back(static_cast<int32_t>(values[b]));
    }
  }
  return batch;
}

}  // namespace srbench
