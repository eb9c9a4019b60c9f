#pragma once

namespace srbench {

// The srbench version, stored in results and checkpoints.
const char* version();

}  // namespace srbench
