#include "common/version.hpp"

namespace srbench {

const char* version() { return "0.1.0"; }

}  // namespace srbench
