#include "harness/suite/searches.hpp"

#include <algorithm>

#include "harness/core/splines.hpp"
#include "harness/suite/fields.hpp"
#include "harness/suite/suite.hpp"

namespace srbench::harness::suite {

namespace {

const std::vector<std::string> kSearchKeys = {"name",  "task", "params",     "train",         "model",
                                              "eval",  "population", "arch_fraction", "stagger", "seed"};

// The search's own keys besides its sections.
void read_search_settings(const Reader& R, const YAML::Node& n, const std::string& p, SearchSpec& sp) {
  auto field = [&](const char* key, const std::function<void(const YAML::Node&)>& read) {
    if (!n[key]) return;
    try {
      read(n[key]);
    } catch (const FieldError& e) {
      R.fail(n[key], p + "." + key, e.message);
    }
  };
  field("population", [&](const YAML::Node& v) { sp.population = positive(as_int(v)); });
  field("stagger", [&](const YAML::Node& v) { sp.stagger = as_bool(v); });
  field("seed", [&](const YAML::Node& v) {
    const int64_t seed = as_int(v);
    if (seed < 0) throw FieldError{std::to_string(seed) + " must not be negative"};
    sp.seed = static_cast<uint64_t>(seed);
  });
  field("arch_fraction", [&](const YAML::Node& v) { sp.arch_fraction = as_real(v); });
  if (n["arch_fraction"] && !(sp.arch_fraction > 0 && sp.arch_fraction < 1))
    R.fail(n["arch_fraction"], p + ".arch_fraction",
           format_double(sp.arch_fraction) + " is outside (0, 1) (the share of the training data held out as D_arch)");
}

// The search's part of its resolved YAML.
std::string search_yaml(const SearchSpec& sp) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "search" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "population" << YAML::Value << sp.population;
  e << YAML::Key << "arch_fraction" << YAML::Value << format_double(sp.arch_fraction);
  e << YAML::Key << "stagger" << YAML::Value << sp.stagger << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace

std::string search_splines_mismatch(const SearchSpec& search, const model::ModelConfig& cfg) {
  std::vector<SplineTensor> shapes = spline_layout(search.model);
  for (auto& st : shapes) st.values.assign(static_cast<size_t>(st.keypoints), 0.0f);
  return splines_mismatch(shapes, cfg);
}

std::vector<SearchSpec> read_searches(const Reader& R, const YAML::Node& list,
                                      const std::function<void(Layers&)>& apply_defaults,
                                      const std::vector<Assignment>& sets) {
  if (!list.IsSequence() || list.size() == 0) R.fail(list, "searches", "expected a non-empty list of searches");
  std::vector<SearchSpec> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = "searches[" + std::to_string(i) + "]";
    const YAML::Node& n = list[i];
    R.check_map(n, p, kSearchKeys);
    for (const char* required : {"name", "task"})
      if (!n[required]) R.fail(n, p, std::string("missing key '") + required + "'");
    SearchSpec sp;
    sp.index = i;
    try {
      sp.name = as_string(n["name"]);
      sp.task = as_string(n["task"]);
    } catch (const FieldError& e) {
      R.fail(n, p, e.message);
    }
    R.file_name(n["name"], p + ".name", " (it names a file)");
    for (const auto& other : out)
      if (other.name == sp.name) R.fail(n["name"], p + ".name", "search name '" + sp.name + "' is used twice");
    if (n["params"] && !n["params"].IsMap()) R.fail(n["params"], p + ".params", "expected a map of task parameters");
    if (n["train"]) R.check_map(n["train"], p + ".train", train_keys());
    if (n["eval"]) R.check_map(n["eval"], p + ".eval", eval_keys());
    if (n["model"]) R.check_map(n["model"], p + ".model", model_section_keys(false));

    RunSpec base;
    base.task = sp.task;
    Layers layers(R, base);
    apply_defaults(layers);
    layers.params(n["params"], p + ".params");
    layers.section(n["model"], p + ".model", "model");
    layers.section(n["train"], p + ".train", "train");
    layers.section(n["eval"], p + ".eval", "eval");
    for (const auto& a : sets) layers.assign(a);
    read_search_settings(R, n, p, sp);

    const auto task = layers.resolve_task(R.at(n["task"], p + ".task"), p + ".params", p + ".model", line_of(n));
    if (base.python.on || !base.model.transformer())  // recurrent.md, linear-rnn.md: a spline search needs splines
      layers.loc_of("model.arch", R.at(n["model"] ? n["model"] : n, p + ".model"))
          .fail("a spline search needs a model with splines; arch " + arch_name(base) +
                " has none (no MLP, no attention): search with a transformer");
    if (!base.model.mlp_has_spline() && !base.model.attn_has_spline())
      R.fail(n["model"] ? n["model"] : n, p + ".model",
             "the searched model has no spline: set activation: spline and/or attention: spline-score | spline-kernel");
    layers.check_lengths(*task, p, line_of(n), false);
    if (base.train.examples > 0) {
      const auto n_arch = arch_examples(static_cast<uint64_t>(base.train.examples), sp.arch_fraction);
      if (n_arch < 1 || n_arch >= static_cast<uint64_t>(base.train.examples))
        (n["arch_fraction"] ? R.at(n["arch_fraction"], p + ".arch_fraction")
                            : layers.loc_of("train.examples", SourceLoc{R.file(), p, line_of(n)}))
            .fail("arch_fraction " + format_double(sp.arch_fraction) + " of " + std::to_string(base.train.examples) +
                  " examples leaves D_arch or D_wts empty");
    }
    sp.params = base.params, sp.model = base.model, sp.train = base.train, sp.eval = base.eval;
    base.entry = sp.name, base.seed = sp.seed;
    sp.resolved_yaml = run_yaml(base) + search_yaml(sp);
    sp.id = short_hash(sp.resolved_yaml);
    out.push_back(std::move(sp));
  }
  return out;
}

}  // namespace srbench::harness::suite
