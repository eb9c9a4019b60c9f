// Natural (tasks/natural.hpp), the big integers of the binary Chomsky tasks: against __int128 where
// that holds the numbers, against algebraic identities and the defining inequality of the square
// root at 500 to 5000 bits, and exhaustively for small square roots.
#include <catch2/catch.hpp>

#include "tasks/natural.hpp"
#include "tasks/rng.hpp"

using namespace srbench::tasks;
using u128 = unsigned __int128;

namespace {

std::vector<int32_t> bits_of(u128 v) {
  std::vector<int32_t> out;
  for (; v; v >>= 1) out.push_back(static_cast<int32_t>(v & 1));
  if (out.empty()) out.push_back(0);
  return out;
}

Natural random_natural(Rng& rng, size_t bits) {
  std::vector<int32_t> digits(bits);
  for (auto& d : digits) d = static_cast<int32_t>(rng.below(2));
  return Natural::from_bits_le(digits);
}

}  // namespace

TEST_CASE("Natural: digits, sums and products agree with __int128", "[tasks][natural]") {
  Rng rng(17);
  for (int i = 0; i < 3000; ++i) {
    const int width_a = 1 + static_cast<int>(rng.below(63)), width_b = 1 + static_cast<int>(rng.below(63));
    const u128 a = rng.next() >> (64 - width_a), b = rng.next() >> (64 - width_b);
    const Natural na = Natural::from_bits_le(bits_of(a)), nb = Natural::from_bits_le(bits_of(b));
    REQUIRE(na.bits_le() == bits_of(a));
    REQUIRE(na.bit_length() == (a ? bits_of(a).size() : 0));
    CHECK((na + nb).bits_le() == bits_of(a + b));
    CHECK((na * nb).bits_le() == bits_of(a * b));
    if (a >= b) CHECK((na - nb).bits_le() == bits_of(a - b));
    CHECK((na < nb) == (a < b));
    CHECK((na == nb) == (a == b));
    CHECK(na.shifted_left(50).bits_le() == bits_of(a << 50));
    CHECK(na.shifted_right(7).bits_le() == bits_of(a >> 7));
  }
  // Padding to a width keeps leading zeros; zero is the one digit 0.
  CHECK(Natural(5).bits_le(6) == std::vector<int32_t>{1, 0, 1, 0, 0, 0});
  CHECK(Natural().bits_le() == std::vector<int32_t>{0});
  CHECK(Natural::from_bits_le(std::vector<int32_t>{0, 0, 0}).is_zero());
  CHECK_THROWS_AS(Natural::from_bits_le(std::vector<int32_t>{0, 2}), std::invalid_argument);
  CHECK_THROWS_AS(Natural(3) - Natural(4), std::invalid_argument);
}

TEST_CASE("Natural: ⌊√v⌋ for every v below 70,000 and for 2^k ± 1", "[tasks][natural]") {
  uint64_t r = 0;
  for (uint64_t v = 0; v < 70000; ++v) {
    while ((r + 1) * (r + 1) <= v) ++r;
    REQUIRE(Natural(v).isqrt() == Natural(r));
  }
  for (size_t k = 1; k < 300; ++k) {
    const Natural p = Natural(1).shifted_left(k);
    const Natural root = p.isqrt();
    CHECK(root * root <= p);
    CHECK(p < (root + Natural(1)) * (root + Natural(1)));
    if (k % 2 == 0) CHECK(root == Natural(1).shifted_left(k / 2));
  }
}

TEST_CASE("Natural: identities and the square root's inequality at 500 to 5000 bits", "[tasks][natural]") {
  Rng rng(3);
  for (size_t bits : {64, 65, 127, 500, 501, 1000, 5000}) {
    INFO(bits << " bits");
    for (int i = 0; i < 20; ++i) {
      const Natural a = random_natural(rng, bits), b = random_natural(rng, bits / 2 + 1), c = random_natural(rng, bits);
      CHECK((a + b) * c == a * c + b * c);
      CHECK(a * b == b * a);
      CHECK((a + b) - b == a);
      CHECK(a.shifted_left(bits).shifted_right(bits) == a);
      CHECK(a.shifted_left(3) == a * Natural(8));
      const Natural root = a.isqrt();
      CHECK(root * root <= a);
      CHECK(a < (root + Natural(1)) * (root + Natural(1)));
      CHECK(b.isqrt() * b.isqrt() <= b);
      CHECK((a * a).isqrt() == a);
      if (!a.is_zero()) CHECK((a * a - Natural(1)).isqrt() == a - Natural(1));
    }
  }
}
