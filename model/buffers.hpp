// Small helpers for the model's internal buffers (internal to model/): tensor offsets into the
// flat parameter buffer, and the workspace vectors that grow to the largest batch seen.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/memory.hpp"
#include "model/params.hpp"

namespace srbench::model {

inline constexpr size_t kNone = static_cast<size_t>(-1);  // a tensor this model does not have

// The offset of a tensor in the flat buffer, or kNone when the layout has no such tensor.
inline size_t offset_or_none(const ParamLayout& layout, const std::string& name) {
  const ParamInfo* p = layout.find(name);
  return p ? p->offset : kNone;
}

// The tensor at `offset` of a flat buffer (parameters or gradients), or nullptr for kNone.
template <typename S>
S* tensor_at(S* buffer, size_t offset) {
  return offset == kNone ? nullptr : buffer + offset;
}

// Grows v to at least n values (never shrinks: a smaller batch after a larger one allocates nothing).
template <typename S>
void grow(std::vector<S>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

// A workspace's buffers are listed once, in a function buffers(self, …, f) that calls
// f(vector, elements, role) for each: reserve passes GrowBuffer, the memory report (memory.hpp)
// CountBuffer, which adds the bytes to the CallMemory field of the buffer's role.
enum class Role { Saved, Scratch };
struct GrowBuffer {
  template <typename V>
  void operator()(V& v, int64_t n, Role) const {
    grow(v, n);
  }
};
struct CountBuffer {
  CallMemory* memory;
  template <typename V>
  void operator()(const V&, int64_t n, Role role) const {
    (role == Role::Saved ? memory->saved : memory->scratch) += n * static_cast<int64_t>(sizeof(typename V::value_type));
  }
};

// Sets the first n values of v to 0.
template <typename S>
void zero(std::vector<S>& v, int64_t n) {
  std::fill(v.begin(), v.begin() + n, S(0));
}

}  // namespace srbench::model
