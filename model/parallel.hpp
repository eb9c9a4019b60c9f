// parallel_for (internal to model/): OpenMP over the iterations 0..n-1 of a loop whose chunks do
// not depend on the thread count, or a plain loop when only one thread would run. A `#pragma omp
// parallel` that runs on one thread (an `if` clause that is false, or one thread set) still makes
// libgomp allocate and free a thread team every time; the plain loop neither allocates nor pays
// for the region. The iterations compute the same values either way: the workers compute in the
// floating-point mode of the calling thread (common/float_mode.hpp).
#pragma once

#include <omp.h>

#include "common/float_mode.hpp"

#include <cstdint>

namespace srbench::model {

template <typename I, typename F>
inline void parallel_for(I n, bool parallel, F&& f) {
  if (parallel && n > 1 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    const unsigned mode = float_mode();
#pragma omp parallel
    {
      const FloatModeOf caller_mode(mode);
#pragma omp for schedule(static)
      for (I i = 0; i < n; ++i) f(i);
    }
  } else {
    for (I i = 0; i < n; ++i) f(i);
  }
}

}  // namespace srbench::model
