// The model's one exception type: bad configuration or bad input, with a message that says what
// was wrong, where (the config key or argument) and what would be right.
#pragma once

#include <stdexcept>
#include <string>

namespace srbench::model {

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace srbench::model
