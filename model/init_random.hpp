// The random numbers of every architecture's init (internal to model/): one generator over the
// tensors in layout order, the same draws on every platform — uniforms in (0, 1) from the top 53
// bits, normals by Box–Muller (std::normal_distribution's algorithm is the library's choice).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace srbench::model {

class InitRandom {
 public:
  explicit InitRandom(uint64_t seed) : gen_(seed) {}
  double uniform() { return (static_cast<double>(gen_() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 gen_;
};

// Whether tensor name `s` ends with `suffix` (the inits choose their rule by it).
inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace srbench::model
