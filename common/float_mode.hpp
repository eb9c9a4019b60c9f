// The floating-point mode srbench computes in: denormal numbers (|x| < 2^-126 in float) flushed to
// zero, as results (FTZ) and as inputs (DAZ). A converged run's gradients and attention weights
// reach the denormal range, where x86 cores take a microcode assist of about a hundred cycles per
// operation; flushing them made a converged parity run 1.46x faster (docs/performance.md). FTZ and
// DAZ are architectural (SSE/AVX MXCSR bits), so the mode is the same on every x86-64 machine.
// PyTorch has it as torch.set_flush_denormal(True).
//
// The mode is per thread. The CLI sets it once for its process (threads it creates inherit it);
// the Python module sets it around each call into the models and restores the caller's mode, so
// that a caller's own code (numpy, torch) keeps its mode; OpenMP workers take the mode of the
// thread that opened the parallel region (FloatModeOf) and restore their own after it. A thread
// starts in the mode of the thread that creates it, so the module makes OpenMP's team at import,
// in the interpreter's mode.
#pragma once

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace srbench {

// MXCSR bits: FTZ (flush to zero, bit 15) and DAZ (denormals are zero, bit 6).
inline constexpr unsigned kFlushDenormalBits = 0x8040u;

inline unsigned float_mode() {
#if defined(__SSE__)
  return _mm_getcsr();
#else
  return 0;
#endif
}

inline void set_float_mode(unsigned mode) {
#if defined(__SSE__)
  _mm_setcsr(mode);
#else
  (void)mode;
#endif
}

// For the process's lifetime: denormals flushed on this thread and on threads it creates later.
inline void flush_denormals() { set_float_mode(float_mode() | kFlushDenormalBits); }

// For a scope: `mode` on this thread, the thread's previous mode restored at the end.
class FloatModeOf {
 public:
  explicit FloatModeOf(unsigned mode) : saved_(float_mode()) { set_float_mode(mode); }
  ~FloatModeOf() { set_float_mode(saved_); }
  FloatModeOf(const FloatModeOf&) = delete;
  FloatModeOf& operator=(const FloatModeOf&) = delete;

 private:
  unsigned saved_;
};

// For a scope: denormals flushed on this thread (the Python module's calls into the models).
class DenormalsFlushed : public FloatModeOf {
 public:
  DenormalsFlushed() : FloatModeOf(float_mode() | kFlushDenormalBits) {}
};

}  // namespace srbench
