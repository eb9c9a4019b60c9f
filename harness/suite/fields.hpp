// The field tables of a run's `train:` and `eval:` sections (common/field_table.hpp): each key
// once, with how it is read from YAML and checked, written into the resolved YAML (whose text a
// run id hashes: the order and form of every value are part of the id), and compared. The
// model's own table is model::model_fields().
#pragma once

#include "harness/core/specs.hpp"
#include "harness/suite/values.hpp"
#include "common/field_table.hpp"

namespace srbench::harness::suite {

// Where a value is read from: its location, and the map that records where each field was set
// (a field with parts, such as eval.shifts, records each part: eval.shifts[i]).
struct ReadSite {
  const SourceLoc& loc;
  Where& where;
};

// Readers throw FieldError (reported at site.loc) or ConfigError (at a part of the value).
using TrainField = Field<TrainConfig, const YAML::Node&, ReadSite&>;
using EvalField = Field<EvalConfig, const YAML::Node&, ReadSite&>;
const FieldTable<TrainConfig, const YAML::Node&, ReadSite&>& train_fields();
const FieldTable<EvalConfig, const YAML::Node&, ReadSite&>& eval_fields();

const std::vector<std::string>& train_keys();
const std::vector<std::string>& eval_keys();

}  // namespace srbench::harness::suite
