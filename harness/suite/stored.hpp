// The YAML texts a results file stores, read for what the report and the commands show of them:
// the suite's name (the root attribute `suite`), a run's architecture and fit metric (its `config`). Plain
// values out, never an error: a text that does not parse gives the default.
#pragma once

#include <string>

namespace srbench::harness {

// The top-level `name:` of a suite text, or "" when it has none (or does not parse).
std::string stored_suite_name(const std::string& suite_yaml);

// `model.arch` of a run's resolved config; "transformer" when absent (recurrent.md: a config
// without `arch` is a transformer) or when the config does not parse.
std::string stored_model_arch(const std::string& config_yaml);

// `train.fit_metric` of a run's resolved config; "seq_acc" when absent (its default, omitted) or
// when the config does not parse.
std::string stored_fit_metric(const std::string& config_yaml);

// `train.target_accuracy` of a run's resolved config; its default (TrainConfig's, 0.99) when absent
// or when the config does not parse.
double stored_target_accuracy(const std::string& config_yaml);

}  // namespace srbench::harness
