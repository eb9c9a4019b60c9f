// The floating-point mode (common/float_mode.hpp): denormals flushed inside DenormalsFlushed and
// not after it; parallel_for's workers computing in the calling thread's mode, whichever it is,
// and left in their own mode afterwards.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cfloat>
#include <vector>

#include "common/float_mode.hpp"
#include "model/parallel.hpp"

namespace {

// 2^-140 as a product of two normal floats: a denormal, or 0 when results are flushed (FTZ).
float denormal_product() {
  volatile float a = 0x1p-70f, b = 0x1p-70f;
  return a * b;
}

// A denormal input read as 0 (DAZ): 2^-140 * 2^10 is 2^-130 (denormal) or 0.
float denormal_input_times_1024() {
  volatile float d = 0x1p-140f, k = 1024.0f;
  return d * k;
}

// The product computed by each of `n` iterations of parallel_for, on whichever thread ran it.
std::vector<float> products_in_workers(int n) {
  std::vector<float> out(static_cast<size_t>(n), -1.0f);
  srbench::model::parallel_for(n, true, [&](int i) { out[static_cast<size_t>(i)] = denormal_product(); });
  return out;
}

}  // namespace

TEST_CASE("float mode: denormals flushed in the scope, restored after it", "[float_mode]") {
  REQUIRE(denormal_product() == 0x1p-140f);  // the default mode keeps denormals
  {
    const srbench::DenormalsFlushed flushed;
    CHECK(denormal_product() == 0.0f);
    CHECK(denormal_input_times_1024() == 0.0f);
    {
      const srbench::FloatModeOf inner(srbench::float_mode() & ~srbench::kFlushDenormalBits);
      CHECK(denormal_product() == 0x1p-140f);
    }
    CHECK(denormal_product() == 0.0f);
  }
  CHECK(denormal_product() == 0x1p-140f);
  CHECK(denormal_input_times_1024() == 0x1p-130f);
}

TEST_CASE("float mode: parallel_for's workers take the caller's mode and keep their own", "[float_mode]") {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  // A thread starts in the mode of the thread that created it: the team is made here, unflushed
  // (as the Python module makes it at import), so that what follows tests parallel_for alone.
  (void)products_in_workers(2);
  const int n = 64;
  // Every worker computes in the caller's mode: flushed, then not.
  {
    const srbench::DenormalsFlushed flushed;
    for (float p : products_in_workers(n)) CHECK(p == 0.0f);
  }
  for (float p : products_in_workers(n)) CHECK(p == 0x1p-140f);
  // Workers are left as they were: a worker's own code after the regions keeps denormals.
  {
    const srbench::DenormalsFlushed flushed;
    (void)products_in_workers(n);
  }
  std::vector<float> own(2, -1.0f);
#pragma omp parallel num_threads(2)
  own[static_cast<size_t>(omp_get_thread_num())] = denormal_product();
  for (float p : own) CHECK(p == 0x1p-140f);
  omp_set_num_threads(saved);
}
