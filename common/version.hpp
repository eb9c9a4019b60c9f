#pragma once

#include <string>

namespace srbench {

// The srbench version, stored in results and checkpoints.
const char* version();

// The git commit the sources were built from, as `git describe --always --dirty` prints it at
// build time ("v0.1.0-12-g<12 hex>", "<12 hex>-dirty", ...), or "unknown" outside a checkout.
// Stored in every results file (root attribute srbench_commit) and printed by `srbench --version`.
const char* commit();

// What built this binary, as every run records it (attribute `build`, docs/harness.md "Results"):
// the compiler and its version, the instruction set the build targets (the vector extensions the
// compiler was allowed to use) and the build type's flags, e.g.
// "GCC 12.2.0; x86-64 AVX-512F AVX2 FMA; -O3 -DNDEBUG -march=native".
const std::string& build_description();

}  // namespace srbench
