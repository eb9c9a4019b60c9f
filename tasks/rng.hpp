// Deterministic random numbers for task generation.
//
// Every example is generated from its own small RNG, seeded by hashing
// (seed, stream, index, n): example i is then the same whatever was generated before it, whatever
// the batch size or thread count. No std:: distributions are used — their output is
// implementation-defined — so the same numbers come out with any compiler and standard library.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <vector>

namespace srbench::tasks {

// SplitMix64 finaliser: a bijective 64-bit mixer.
inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Hash of a sequence of 64-bit words (order-sensitive).
inline uint64_t hash_words(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x6a09e667f3bcc909ULL;
  for (uint64_t w : words) h = mix64(h ^ mix64(w));
  return h;
}

// xoshiro256** (Blackman & Vigna), seeded through SplitMix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t z = seed;
    for (auto& w : s_) {
      z += 0x9e3779b97f4a7c15ULL;
      w = mix64(z);
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, n), n >= 1; unbiased (Lemire's multiply-and-reject).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform integer in [lo, hi] (inclusive).
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // True with probability p (p = 0 never, p = 1 always).
  bool bernoulli(double p) { return uniform() < p; }

  // Index drawn from a discrete distribution given by cumulative weights (last entry = total).
  size_t categorical(const std::vector<double>& cumulative) {
    const double u = uniform() * cumulative.back();
    for (size_t i = 0; i < cumulative.size(); ++i)
      if (u < cumulative[i]) return i;
    return cumulative.size() - 1;
  }

  // Fisher–Yates shuffle.
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      const size_t j = below(i);
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// `count` distinct integers uniform in 0..range-1, in the order drawn (a partial Fisher–Yates
// shuffle); count ≤ range. Draws the keys of mqar and needle.
inline std::vector<int32_t> draw_distinct(Rng& rng, int count, int range) {
  std::vector<int32_t> pool(static_cast<size_t>(range));
  std::iota(pool.begin(), pool.end(), 0);
  for (size_t i = 0; i < static_cast<size_t>(count); ++i)
    std::swap(pool[i], pool[i + rng.below(pool.size() - i)]);
  pool.resize(static_cast<size_t>(count));
  return pool;
}

}  // namespace srbench::tasks
