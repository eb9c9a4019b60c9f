// Natural: an arbitrary-precision non-negative integer, for the binary Chomsky tasks
// (binary_addition, binary_multiplication, compute_sqrt) at any n (the protocol reaches n = 500).
//
// 64-bit limbs, least significant first, no leading zero limb (zero has none). Addition is
// O(limbs), multiplication schoolbook O(limbs²), the square root digit by digit in base 4,
// O(bits · limbs). Binary digits are passed as int32 0/1 (the digit tokens' ids).
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <vector>

namespace srbench::tasks {

class Natural {
 public:
  Natural() = default;
  explicit Natural(uint64_t v);
  // From binary digits, least significant first; each 0 or 1.
  static Natural from_bits_le(std::span<const int32_t> bits);

  size_t bit_length() const;  // 0 for zero
  bool is_zero() const { return limbs_.empty(); }
  bool bit(size_t i) const;
  // Binary digits, least significant first: without leading zeros, but at least `width` digits
  // (zero-padded; zero with width 1 is the one digit 0).
  std::vector<int32_t> bits_le(size_t width = 1) const;

  friend Natural operator+(const Natural& a, const Natural& b);
  friend Natural operator-(const Natural& a, const Natural& b);  // requires a >= b
  friend Natural operator*(const Natural& a, const Natural& b);
  Natural shifted_right(size_t bits) const;
  Natural shifted_left(size_t bits) const;
  // ⌊√this⌋, exact.
  Natural isqrt() const;

  friend std::strong_ordering operator<=>(const Natural& a, const Natural& b);
  friend bool operator==(const Natural& a, const Natural& b) = default;

 private:
  void trim();
  std::vector<uint64_t> limbs_;
};

}  // namespace srbench::tasks
