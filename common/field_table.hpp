// Field tables: the one place a config struct's keys are listed. Each field of a table knows
// its key, how to read it, how to write it into YAML, how to compare it, and (optionally) how to
// check it — so parsing, `--set`, validation, equality and YAML output are loops over one
// table, and adding a key is one line in the table (plus its check).
//
//   const FieldTable<ModelConfig, const std::string&>& t = model_fields();
//   find_field(t, "layers")->read(cfg, "4");
//   YAML::Emitter e; write_fields(t, cfg, e);           // `section.key` fields as nested maps
//   equal_fields(t, a, b);
//
// `In...` is what a field is read from: the text of a YAML scalar for the model's config, a
// YAML node (and where it was written) for the harness's. Writers emit into a YAML::Emitter
// (declared here only; the tables' .cpp files include yaml-cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace YAML {
class Emitter;
}

namespace srbench {

template <typename C, typename... In>
struct Field {
  std::string key;                                     // "layers", "mlp_spline.keypoints"
  std::function<void(C&, In...)> read;                 // throws the table's error type
  std::function<void(const C&, YAML::Emitter&)> write; // the value as YAML (a scalar or a flow list)
  std::function<bool(const C&, const C&)> equal;       // the resolved values compare equal
  std::function<void(const C&)> check = {};            // optional: throws when the value is invalid
  // Optional: true where the field is left out of the YAML (a key added after runs were
  // recorded is written only when it differs from its default, so that existing configs —
  // and the run ids that hash them — keep their text).
  std::function<bool(const C&)> omit = {};
};

template <typename C, typename... In>
using FieldTable = std::vector<Field<C, In...>>;

// The field named `key`, or nullptr.
template <typename C, typename... In>
const Field<C, In...>* find_field(const FieldTable<C, In...>& table, const std::string& key) {
  for (const auto& f : table)
    if (f.key == key) return &f;
  return nullptr;
}

template <typename C, typename... In>
std::vector<std::string> field_keys(const FieldTable<C, In...>& table) {
  std::vector<std::string> keys;
  for (const auto& f : table) keys.push_back(f.key);
  return keys;
}

template <typename C, typename... In>
bool equal_fields(const FieldTable<C, In...>& table, const C& a, const C& b) {
  for (const auto& f : table)
    if (!f.equal(a, b)) return false;
  return true;
}

template <typename C, typename... In>
void check_fields(const FieldTable<C, In...>& table, const C& c) {
  for (const auto& f : table)
    if (f.check) f.check(c);
}

// Writes every field as `key: value` into an open YAML map; consecutive `section.sub` keys are
// written as one nested map `section: {sub: …}` (block style). Defined in field_table.cpp.
void write_fields_impl(YAML::Emitter& out, const std::vector<std::string>& keys,
                       const std::function<void(size_t, YAML::Emitter&)>& write_value);
template <typename C, typename... In>
void write_fields(const FieldTable<C, In...>& table, const C& c, YAML::Emitter& out) {
  std::vector<std::string> keys;
  std::vector<size_t> index;
  for (size_t i = 0; i < table.size(); ++i)
    if (!table[i].omit || !table[i].omit(c)) keys.push_back(table[i].key), index.push_back(i);
  write_fields_impl(out, keys, [&](size_t i, YAML::Emitter& e) { table[index[i]].write(c, e); });
}

}  // namespace srbench
