// The error a user can fix: a bad input (a file, a value, an argument) whose message says what was
// wrong, where, and what would be right. The command line prints its message and exits 2; the
// Python module raises ValueError. Each library derives its own (the model's ModelError); the
// readers in common/ throw it directly.
#pragma once

#include <stdexcept>
#include <string>

namespace srbench {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace srbench
