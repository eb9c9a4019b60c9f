#include "common/version.hpp"

#include "srbench_git_commit.h"  // generated (common/git_commit.cmake)

namespace srbench {

const char* version() { return "0.1.0"; }

const char* commit() { return SRBENCH_GIT_COMMIT; }

namespace {

std::string compiler() {
#if defined(__clang__)
  return "Clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown compiler";
#endif
}

// The vector extensions this translation unit was compiled for (the whole build shares its flags).
std::string target() {
  std::string s =
#if defined(__x86_64__)
      "x86-64";
#elif defined(__aarch64__)
      "aarch64";
#else
      "other";
#endif
#if defined(__AVX512F__)
  s += " AVX-512F";
#endif
#if defined(__AVX2__)
  s += " AVX2";
#endif
#if defined(__FMA__)
  s += " FMA";
#endif
#if !defined(__AVX2__) && !defined(__AVX512F__)
  s += " (no AVX2)";
#endif
  return s;
}

}  // namespace

const std::string& build_description() {
#ifndef SRBENCH_BUILD_FLAGS
#define SRBENCH_BUILD_FLAGS "unknown flags"
#endif
  static const std::string d = compiler() + "; " + target() + "; " + SRBENCH_BUILD_FLAGS;
  return d;
}

}  // namespace srbench
