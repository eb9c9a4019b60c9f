// A search's splines file, /splines with the shared splines and each model's curve; the suite
// file holds the same group as /splines/<name>.
#include "harness/core/specs.hpp"
#include "harness/results/groups.hpp"
#include "harness/results/results.hpp"

namespace srbench::harness {

using namespace results;
using h5::Id;

namespace {

void write_search_group(hid_t g, const SearchResult& s) {
  h5::write_attr(g, "name", s.name);
  h5::write_attr(g, "task", s.task);
  h5::write_attr(g, "config", s.config_yaml);
  h5::write_attr(g, "population", s.population);
  h5::write_attr(g, "status", s.status);
  h5::write_attr(g, "message", s.message);
  h5::write_attr(g, "wall_s", s.wall_s);
  write_splines(g, s.splines);
  Id models = h5::create_group(g, "models");
  for (size_t m = 0; m < s.models.size(); ++m) {
    Id mg = h5::create_group(models, std::to_string(m));
    h5::write_attr(mg, "seed", static_cast<int64_t>(s.models[m].seed));
    h5::write_attr(mg, "start_step", s.models[m].start_step);
    h5::write_attr(mg, "final_val_acc", s.models[m].final_val_acc);
    write_curve(mg, s.models[m].curve);
  }
}

}  // namespace

void write_splines_file(const std::string& path, const SearchResult& search, const std::string& suite_yaml) {
  h5::write_file_atomically(path, [&](hid_t file) {
    write_root_attributes(file, suite_yaml);
    write_search_group(h5::create_group(file, "splines"), search);
  }, h5::Checksum::Yes);
}

// A file written by hand may carry only the spline datasets.
SplinesFile results::read_search_group(hid_t g, const std::string& what) {
  SplinesFile f;
  if (h5::has_attr(g, "name")) f.name = h5::read_string_attr(g, "name");
  if (h5::has_attr(g, "task")) f.task = h5::read_string_attr(g, "task");
  if (h5::has_attr(g, "config")) f.config = h5::read_string_attr(g, "config");
  if (h5::has_attr(g, "status")) f.status = h5::read_string_attr(g, "status");
  if (h5::has_attr(g, "population")) f.population = h5::read_int_attr(g, "population");
  if (h5::has_link(g, "models")) {
    Id models = h5::open_group(g, "models");
    const size_t population = h5::link_names(models).size();
    for (size_t m = 0; m < population; ++m) {
      Id mg = h5::open_group(models, std::to_string(m));
      SearchModelResult r;
      r.seed = static_cast<uint64_t>(h5::read_int_attr(mg, "seed"));
      r.start_step = h5::read_int_attr(mg, "start_step");
      r.final_val_acc = h5::read_double_attr(mg, "final_val_acc");
      r.curve = read_curve(mg);
      f.models.push_back(std::move(r));
    }
  }
  f.splines = read_splines(g);
  if (f.splines.empty()) throw ResultsError(what + " holds no spline datasets");
  return f;
}

SplinesFile read_splines_file(const std::string& path) {
  Id file = open_results_file(path, "splines file");
  if (!h5::has_link(file, "splines")) throw ResultsError("splines file " + path + ": it has no /splines group");
  return read_search_group(h5::open_group(file, "splines"), "splines file " + path + ": /splines");
}

std::string splines_hash(const std::vector<SplineTensor>& splines) {
  std::string bytes;
  for (const auto& st : splines)
    bytes += st.name + std::string(reinterpret_cast<const char*>(st.values.data()), st.values.size() * sizeof(float));
  return short_hash(bytes);
}

}  // namespace srbench::harness
