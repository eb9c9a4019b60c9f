#include "common/field_table.hpp"

#include <yaml-cpp/yaml.h>

namespace srbench {

void write_fields_impl(YAML::Emitter& out, const std::vector<std::string>& keys,
                       const std::function<void(size_t, YAML::Emitter&)>& write_value) {
  std::string open;  // the section whose nested map is open
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto dot = keys[i].find('.');
    const std::string section = dot == std::string::npos ? "" : keys[i].substr(0, dot);
    if (section != open) {
      if (!open.empty()) out << YAML::EndMap;
      if (!section.empty()) out << YAML::Key << section << YAML::Value << YAML::BeginMap;
      open = section;
    }
    out << YAML::Key << (section.empty() ? keys[i] : keys[i].substr(dot + 1)) << YAML::Value;
    write_value(i, out);
  }
  if (!open.empty()) out << YAML::EndMap;
}

}  // namespace srbench
