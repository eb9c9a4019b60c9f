// The model's one exception type: bad configuration or bad input, with a message that says what
// was wrong, where (the config key or argument) and what would be right.
#pragma once

#include <string>

#include "common/error.hpp"

namespace srbench::model {

class ModelError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace srbench::model
