#include "tasks/natural.hpp"

#include <algorithm>
#include <stdexcept>

namespace srbench::tasks {

Natural::Natural(uint64_t v) {
  if (v) limbs_.push_back(v);
}

void Natural::trim() {
  while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
}

Natural Natural::from_bits_le(std::span<const int32_t> bits) {
  Natural r;
  r.limbs_.assign((bits.size() + 63) / 64, 0);
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i] != 0 && bits[i] != 1) throw std::invalid_argument("Natural: a binary digit is not 0 or 1");
    r.limbs_[i / 64] |= static_cast<uint64_t>(bits[i]) << (i % 64);
  }
  r.trim();
  return r;
}

size_t Natural::bit_length() const {
  if (limbs_.empty()) return 0;
  return 64 * (limbs_.size() - 1) + (64 - static_cast<size_t>(__builtin_clzll(limbs_.back())));
}

bool Natural::bit(size_t i) const {
  return i / 64 < limbs_.size() && ((limbs_[i / 64] >> (i % 64)) & 1);
}

std::vector<int32_t> Natural::bits_le(size_t width) const {
  std::vector<int32_t> out(std::max(width, bit_length()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = bit(i) ? 1 : 0;
  return out;
}

Natural operator+(const Natural& a, const Natural& b) {
  const auto& longer = a.limbs_.size() >= b.limbs_.size() ? a.limbs_ : b.limbs_;
  const auto& shorter = a.limbs_.size() >= b.limbs_.size() ? b.limbs_ : a.limbs_;
  Natural r;
  r.limbs_.resize(longer.size() + 1);
  unsigned __int128 carry = 0;
  for (size_t i = 0; i < longer.size(); ++i) {
    carry += longer[i];
    if (i < shorter.size()) carry += shorter[i];
    r.limbs_[i] = static_cast<uint64_t>(carry);
    carry >>= 64;
  }
  r.limbs_.back() = static_cast<uint64_t>(carry);
  r.trim();
  return r;
}

Natural operator-(const Natural& a, const Natural& b) {
  if (a < b) throw std::invalid_argument("Natural: subtraction would be negative");
  Natural r = a;
  uint64_t borrow = 0;
  for (size_t i = 0; i < r.limbs_.size(); ++i) {
    const uint64_t sub = i < b.limbs_.size() ? b.limbs_[i] : 0;
    const uint64_t x = r.limbs_[i];
    const uint64_t d = x - sub - borrow;
    borrow = (x < sub || (x == sub && borrow)) ? 1 : 0;
    r.limbs_[i] = d;
  }
  r.trim();
  return r;
}

Natural operator*(const Natural& a, const Natural& b) {
  Natural r;
  if (a.is_zero() || b.is_zero()) return r;
  r.limbs_.assign(a.limbs_.size() + b.limbs_.size(), 0);
  for (size_t i = 0; i < a.limbs_.size(); ++i) {
    unsigned __int128 carry = 0;
    for (size_t j = 0; j < b.limbs_.size(); ++j) {
      carry += static_cast<unsigned __int128>(a.limbs_[i]) * b.limbs_[j] + r.limbs_[i + j];
      r.limbs_[i + j] = static_cast<uint64_t>(carry);
      carry >>= 64;
    }
    r.limbs_[i + b.limbs_.size()] = static_cast<uint64_t>(carry);
  }
  r.trim();
  return r;
}

Natural Natural::shifted_right(size_t bits) const {
  Natural r;
  const size_t limbs = bits / 64, rest = bits % 64;
  if (limbs >= limbs_.size()) return r;
  r.limbs_.resize(limbs_.size() - limbs);
  for (size_t i = 0; i < r.limbs_.size(); ++i) {
    uint64_t v = limbs_[i + limbs] >> rest;
    if (rest && i + limbs + 1 < limbs_.size()) v |= limbs_[i + limbs + 1] << (64 - rest);
    r.limbs_[i] = v;
  }
  r.trim();
  return r;
}

Natural Natural::shifted_left(size_t bits) const {
  Natural r;
  if (is_zero()) return r;
  const size_t limbs = bits / 64, rest = bits % 64;
  r.limbs_.assign(limbs_.size() + limbs + 1, 0);
  for (size_t i = 0; i < limbs_.size(); ++i) {
    r.limbs_[i + limbs] |= limbs_[i] << rest;
    if (rest) r.limbs_[i + limbs + 1] |= limbs_[i] >> (64 - rest);
  }
  r.trim();
  return r;
}

// Digit by digit in base 4 (the schoolbook square root in binary): `bit` runs over the powers of
// 4 from the largest one not above the number down to 1; at each step `root` holds the root's
// known high digits (scaled so that root + bit is the trial value) and `rest` what is left.
Natural Natural::isqrt() const {
  Natural rest = *this, root;
  if (is_zero()) return root;
  Natural bit = Natural(1).shifted_left(2 * ((bit_length() - 1) / 2));
  while (!bit.is_zero()) {
    const Natural trial = root + bit;
    root = root.shifted_right(1);
    if (rest >= trial) {
      rest = rest - trial;
      root = root + bit;
    }
    bit = bit.shifted_right(2);
  }
  return root;
}

std::strong_ordering operator<=>(const Natural& a, const Natural& b) {
  if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() <=> b.limbs_.size();
  for (size_t i = a.limbs_.size(); i-- > 0;)
    if (a.limbs_[i] != b.limbs_[i]) return a.limbs_[i] <=> b.limbs_[i];
  return std::strong_ordering::equal;
}

}  // namespace srbench::tasks
