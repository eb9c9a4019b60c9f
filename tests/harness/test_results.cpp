// Results in HDF5 (harness.md, "Results (HDF5)") and the report across seeds: hand-made runs
// written, read back and aggregated; numbers checked against hand computations.
#include <catch2/catch.hpp>

#include <hdf5.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/core/metric_fields.hpp"
#include "harness/report/report.hpp"
#include "harness/results/results.hpp"
#include "tests/harness/helpers.hpp"
#include "harness/suite/suite.hpp"
#include "model/checkpoint.hpp"
#include "tests/harness/helpers.hpp"
#include "tests/support.hpp"

using namespace srbench::harness;
using srbench::test::require_same_run;
using srbench::test::same;
using srbench::test::TempDir;

namespace {

// A run with every field set to something recognisable.
RunResult sample_run(const std::string& id, uint64_t seed) {
  RunResult r;
  r.run_id = id;
  r.task = "parity";
  r.entry = "parity-states";
  r.model = "alibi";
  r.grid = "model.layers=2 train.lr=0.001";
  r.seed = seed;
  r.config_yaml = "task: parity\nmodel: {layers: 2}\nnote: \"ünïcode ✓\"\n";
  r.status = "diverged";
  r.message = "loss became NaN at step 350 — ✗";
  r.wall_s = 12.5 + static_cast<double>(seed);
  r.tokens_per_s = kNaN;
  r.eval_s = 3.25;
  r.chance = 0.5;
  r.build = "GCC 12.2.0; x86-64 AVX2 FMA; -O3 ✓";
  r.curve = {{200, 0.69, 0.5, 1e-3, 2.5}, {400, 0.12, 0.97, 5e-4, kNaN}, {500, kNaN, 1.0, 0.0, 0.25}};
  r.conditions = {"id", "p1=0.9", "p1=0.2,p2=0.3"};
  // rows of different widths of position_acc (padded on disk), a NaN inside one
  r.eval = {{8, 0, 0.01, 0.999, 0.99, 0.5, {1.0, 0.75, kNaN, 0.5}, 256},
            {16, 0, 2.5, 0.61, 0.125, 0.0, {0.875}, kNaN},
            {8, 1, kNaN, 0.5, 0.25, kNaN, {}, 256},
            {8, 2, 0.3, 0.9, 0.75, 0.25, {0.5, 0.25}, 128}};
  srbench::test::set_every_metric(r.metrics, 0.5);
  r.metrics.final_train_loss = kNaN;
  r.diag.layers = 2;
  r.diag.heads = 3;
  r.diag.attn_entropy = {0.1, 0.2, 0.3, 0.4, 0.5, kNaN};
  r.diag.attn_max = {0.9, 0.8, 0.7, 0.6, 0.5, 0.4};
  r.diag.value_entropy = {1.5, 2.5};
  r.diag.hidden_entropy = {0.5, kNaN};
  r.diag.value_entropy_lime = {0.25, 1.25};
  r.diag.hidden_entropy_lime = {kNaN, 0.125};
  r.diag_init = r.diag;
  r.diag_init.attn_entropy = {1.1, 1.0, 0.9, 0.8, 0.7, 0.6};
  r.diag_init.hidden_entropy = {2.0, 2.5};
  r.bits_per_byte = true;
  r.routers = {{1, 2, 4, {0.5f, -1.0f, 0.25f, 2.0f, 0.0f, 1.5f, -0.75f, 3.0f}}};
  r.splines = {{"blocks.0.mlp.act.values", {-1.0f, 0.0f, 0.5f, 2.0f}, 4.0, 4, "linear"},
               {"blocks.1.mlp.act.values", {0.25f, 0.75f, 1.0f}, 8.0, 3, "constant"}};
  r.splines_from = "results/search/lin.h5";
  r.splines_task = "dyck";
  return r;
}

// A run whose metrics are given; for the report tests.
RunResult metric_run(const std::string& model, uint64_t seed, double id_acc, int64_t steps, const std::string& status) {
  RunResult r;
  r.run_id = model + std::to_string(seed);
  r.task = "parity";
  r.entry = "parity";
  r.model = model;
  r.seed = seed;
  r.status = status;
  r.metrics.id_acc = id_acc;
  r.metrics.steps_to_target = steps;
  return r;
}

// The csv line of `metric` (first field match after the group fields), split at commas.
std::vector<std::string> csv_line(const std::string& csv, const std::string& model, const std::string& metric) {
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    if (line.back() == ',') f.push_back("");
    if (f.size() == 20 && f[2] == model && f[10] == metric) return f;
  }
  return {};
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

// Seals a results file edited in place with a fresh checksum (h5.hpp: a 512-byte block
// "srbench-checksum 1 bytes=N crc32=X\n", zero-padded, before the HDF5 file).
void reseal(const std::string& path) {
  std::string bytes = srbench::test::read_file(path);
  REQUIRE(bytes.size() > 512);
  const auto body = reinterpret_cast<const Bytef*>(bytes.data() + 512);
  const unsigned long crc = crc32(crc32(0L, Z_NULL, 0), body, static_cast<uInt>(bytes.size() - 512));
  char header[512] = {};
  std::snprintf(header, sizeof header, "srbench-checksum 1 bytes=%zu crc32=%08lx\n", bytes.size() - 512, crc);
  bytes.replace(0, 512, header, 512);
  srbench::test::write_file(path, bytes);
}

const char* kSuiteYaml = R"(name: mini
seeds: [0, 1, 2]
tasks:
  - task: parity
models:
  - name: small
    model: {layers: 1, d_model: 16, heads: 2}
)";

}  // namespace

TEST_CASE("a run file round-trips every field of a RunResult, NaN included", "[results]") {
  TempDir dir;
  const auto original = sample_run("ab12cd34ef56", 7);
  const std::string path = dir.file("ab12cd34ef56.h5");
  write_run_file(path, original, kSuiteYaml, nullptr);
  std::string suite;
  const auto back = read_run_file(path, &suite);
  require_same_run(original, back);
  CHECK(suite == kSuiteYaml);
  // atomic: only the final file is left
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()) == 1);

  // a run without diagnostics has no diag group and reads back with empty diagnostics
  auto plain = sample_run("000000000001", 1);
  plain.diag = {};
  plain.diag_init = {};
  plain.curve.clear();
  plain.eval.clear();
  plain.conditions = {"id"};
  write_run_file(dir.file("plain.h5"), plain, kSuiteYaml, nullptr);
  const auto plain_back = read_run_file(dir.file("plain.h5"));
  require_same_run(plain, plain_back);
  CHECK(plain_back.diag.empty());
  const srbench::h5::Id f(H5Fopen(dir.file("plain.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  REQUIRE(f.valid());
  CHECK(H5Lexists(f, "/runs/000000000001/diag", H5P_DEFAULT) == 0);
  CHECK(H5Lexists(f, "/runs/000000000001/curve/step", H5P_DEFAULT) > 0);
}

TEST_CASE("files written before the optional attributes and /summary columns read them as defaults", "[results]") {
  TempDir dir;
  const auto run = sample_run("ab12cd34ef56", 7);
  write_run_file(dir.file("r.h5"), run, kSuiteYaml, nullptr);
  srbench::test::write_suite_file_of(dir.file("s.h5"), kSuiteYaml, {dir.file("r.h5")});
  std::vector<srbench::h5::Column> first_columns;  // /summary as the first suite files had it
  for (const auto& c : summary_columns())
    if (!c.optional) first_columns.push_back(c);
  std::vector<std::string> optional;
  for (const auto& a : run_attribute_values(run))
    if (a.optional) optional.push_back(a.name);
  // in the order they were added (metrics added since come after these)
  REQUIRE(optional.size() >= 6);
  CHECK(std::vector<std::string>(optional.begin(), optional.begin() + 6) ==
        std::vector<std::string>{"splines_from", "splines_task", "ood_token_acc", "chance", "fitted", "eval_s"});
  for (const char* name : {"r.h5", "s.h5"}) {
    {
      const srbench::h5::Id f(H5Fopen(dir.file(name).c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
      REQUIRE(f.valid());
      for (const auto& a : optional) REQUIRE(H5Adelete_by_name(f, "/runs/ab12cd34ef56", a.c_str(), H5P_DEFAULT) >= 0);
      if (std::string(name) == "s.h5") {
        const auto row = srbench::h5::read_table(f, "summary", first_columns);
        REQUIRE(H5Ldelete(f, "summary", H5P_DEFAULT) >= 0);
        srbench::h5::write_table(f, "summary", first_columns, row);
      }
    }
    reseal(dir.file(name));
  }
  RunResult want = run;
  const RunMetrics defaults;
  for (const auto& f : metric_fields())
    if (f.optional) std::visit([&](auto member) { want.metrics.*member = defaults.*member; }, f.member);
  CHECK(std::isnan(want.metrics.ood_token_acc));
  CHECK(want.metrics.fitted == -1);
  want.chance = kNaN, want.eval_s = kNaN, want.splines_from = "", want.splines_task = "", want.build = "";
  require_same_run(read_run_file(dir.file("r.h5")), want);
  const auto s = read_suite_file(dir.file("s.h5"));
  REQUIRE(s.summary.size() == 1);
  srbench::test::check_same_metrics(s.summary[0].metrics, want.metrics);
  require_same_run(s.runs[0], want);
}

TEST_CASE("a run file holds the model's checkpoint in the run group when given one", "[results]") {
  TempDir dir;
  srbench::model::ModelConfig cfg;
  cfg.layers = 1;
  cfg.d_model = 8;
  cfg.heads = 2;
  cfg.max_len = 16;
  cfg.vocab = 5;
  srbench::model::Model m(cfg);
  m.init(3);
  write_run_file(dir.file("ck.h5"), sample_run("cccccccccccc", 0), kSuiteYaml, &m);
  read_run_file(dir.file("ck.h5"));  // still a valid run file
  const srbench::h5::Id f(H5Fopen(dir.file("ck.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const srbench::h5::Id g(H5Gopen2(f, "/runs/cccccccccccc/checkpoint", H5P_DEFAULT));
  REQUIRE(g.valid());
  const auto loaded = srbench::model::read_checkpoint(g);
  REQUIRE(loaded.num_params() == m.num_params());
  for (size_t i = 0; i < m.num_params(); ++i) REQUIRE(loaded.params()[i] == m.params()[i]);
}

TEST_CASE("read_run_file rejects missing, empty, truncated and incomplete files", "[results]") {
  TempDir dir;
  const std::string good = dir.file("good.h5");
  write_run_file(good, sample_run("ab12cd34ef56", 7), kSuiteYaml, nullptr);
  const std::string bytes = srbench::test::read_file(good);
  REQUIRE(bytes.size() > 1000);

  srbench::test::write_file(dir.file("half.h5"), bytes.substr(0, bytes.size() / 2));
  srbench::test::write_file(dir.file("empty.h5"), "");
  CHECK_THROWS_AS(read_run_file(dir.file("half.h5")), ResultsError);
  CHECK_THROWS_AS(read_run_file(dir.file("empty.h5")), ResultsError);
  CHECK_THROWS_WITH(read_run_file(dir.file("empty.h5")), Catch::Contains("empty.h5"));
  CHECK_THROWS_AS(read_run_file(dir.file("absent.h5")), ResultsError);

  // an HDF5 file that is not a run file: a model checkpoint
  srbench::model::ModelConfig cfg;
  cfg.layers = 1, cfg.d_model = 8, cfg.heads = 2, cfg.max_len = 16, cfg.vocab = 5;
  srbench::model::Model m(cfg);
  m.init(0);
  srbench::model::save_checkpoint(m, dir.file("checkpoint.h5"));
  CHECK_THROWS_WITH(read_run_file(dir.file("checkpoint.h5")), Catch::Contains("format_version"));

  // a run file changed after it was written: its checksum no longer matches
  {
    write_run_file(dir.file("changed.h5"), sample_run("ab12cd34ef56", 7), kSuiteYaml, nullptr);
    const srbench::h5::Id f(H5Fopen(dir.file("changed.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    REQUIRE(H5Ldelete(f, "/runs/ab12cd34ef56/eval/seq_acc", H5P_DEFAULT) >= 0);
  }
  CHECK_THROWS_WITH(read_run_file(dir.file("changed.h5")), Catch::Contains("changed.h5: damaged"));
  // a run group that lacks a dataset, in a file without a checksum (as srbench wrote them before)
  namespace h5 = srbench::h5;
  h5::write_file_atomically(dir.file("partial.h5"), [&](hid_t file) {
    h5::write_attr(file, "format_version", kResultsFormatVersion);
    h5::write_attr(file, "suite", kSuiteYaml);
    write_run_group(file, sample_run("ab12cd34ef56", 7), nullptr);
    REQUIRE(H5Ldelete(file, "/runs/ab12cd34ef56/eval/seq_acc", H5P_DEFAULT) >= 0);
  });
  CHECK_THROWS_WITH(read_run_file(dir.file("partial.h5")), Catch::Contains("eval/seq_acc"));
  // the same in a file with a checksum, which HDF5 reads from memory: the message names the file
  // by its path, as for a file read from disk
  h5::write_file_atomically(
      dir.file("sealed-partial.h5"),
      [&](hid_t file) {
        h5::write_attr(file, "format_version", kResultsFormatVersion);
        h5::write_attr(file, "suite", kSuiteYaml);
        write_run_group(file, sample_run("ab12cd34ef56", 7), nullptr);
        REQUIRE(H5Ldelete(file, "/runs/ab12cd34ef56/eval/seq_acc", H5P_DEFAULT) >= 0);
      },
      h5::Checksum::Yes);
  try {
    read_run_file(dir.file("sealed-partial.h5"));
    FAIL("a run group without eval/seq_acc was read");
  } catch (const std::exception& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains(dir.file("sealed-partial.h5") + ":/runs/ab12cd34ef56/eval"));
    CHECK_THAT(what, Catch::Contains("seq_acc"));
    CHECK_THAT(what, !Catch::Contains("memory"));
  }
  CHECK_NOTHROW(read_run_file(good));
}

TEST_CASE("write_suite_file assembles a summary row and a run group per run file, in the given order", "[results]") {
  TempDir dir;
  std::vector<RunResult> runs = {sample_run("bbbbbbbbbbbb", 2), sample_run("aaaaaaaaaaaa", 0), sample_run("cccccccccccc", 1)};
  runs[1].status = "ok";
  runs[1].message = "";
  runs[1].metrics.steps_to_target = -1;
  runs[1].tokens_per_s = 1234.5;
  runs[2].status = "failed";
  runs[2].entry = "parity-final";
  runs[2].grid = "";
  runs[2].metrics.id_acc = kNaN;
  std::vector<std::string> paths;
  for (const auto& r : runs) {
    paths.push_back(dir.file(r.run_id + ".h5"));
    write_run_file(paths.back(), r, kSuiteYaml, nullptr);
  }
  const std::string out = dir.file("mini.h5");
  srbench::test::write_suite_file_of(out, kSuiteYaml, paths);
  const auto s = read_suite_file(out);
  CHECK(s.format_version == 1);
  CHECK(s.suite_yaml == kSuiteYaml);
  CHECK(s.created.size() == 20);
  CHECK(s.created.back() == 'Z');
  REQUIRE(s.summary.size() == 3);
  REQUIRE(s.runs.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto& row = s.summary[i];
    const auto& r = runs[i];
    CHECK(row.run_id == r.run_id);
    CHECK(row.task == r.task);
    CHECK(row.entry == r.entry);
    CHECK(row.model == r.model);
    CHECK(row.seed == static_cast<int64_t>(r.seed));
    CHECK(row.grid == r.grid);
    CHECK(row.status == r.status);
    srbench::test::check_same_metrics(row.metrics, r.metrics);
    CHECK(same(row.wall_s, r.wall_s));
    CHECK(same(row.tokens_per_s, r.tokens_per_s));
    require_same_run(s.runs[i], r);  // the copied run group
  }
  CHECK(s.summary[0].status == "diverged");
  CHECK(s.summary[1].tokens_per_s == 1234.5);
  CHECK(std::isnan(s.summary[2].metrics.id_acc));

  // a damaged run file stops the assembly and leaves no output
  srbench::test::write_file(dir.file("bad.h5"), "not hdf5");
  CHECK_THROWS_AS(srbench::test::write_suite_file_of(dir.file("other.h5"), kSuiteYaml, {paths[0], dir.file("bad.h5")}), ResultsError);
  CHECK_FALSE(std::filesystem::exists(dir.file("other.h5")));
  CHECK_THROWS_AS(srbench::test::write_suite_file_of(dir.file("other.h5"), kSuiteYaml, {paths[0], paths[0]}), ResultsError);

  // no finished runs yet: an empty but valid suite file
  srbench::test::write_suite_file_of(dir.file("empty.h5"), kSuiteYaml, {});
  const auto empty = read_suite_file(dir.file("empty.h5"));
  CHECK(empty.summary.empty());
  CHECK(empty.runs.empty());
}

TEST_CASE("the report aggregates seeds per (entry, model, grid) as computed by hand", "[report]") {
  std::vector<RunResult> runs = {
      metric_run("b", 0, 1.0, -1, "ok"),       metric_run("a", 0, 0.2, 100, "ok"),
      metric_run("b", 1, 0.5, 200, "diverged"), metric_run("b", 2, 0.75, 400, "failed"),
  };
  // evaluation rows of group b: seq_acc at (8, id) 1.0, 0.5, 0.75; (16, p1=0.9) 0.25 and 0.75;
  // seed 1 is a text-like run: its loss ln 2 at (8, id) is 1 bit per byte, 2 ln 2 at (16, p1=0.9) 2
  const double ln2 = std::log(2.0);
  runs[0].conditions = {"id", "p1=0.9"};
  runs[0].eval = {{8, 0, 0.1, 1.0, 1.0}, {16, 1, 0.1, 1.0, 0.25}};
  runs[2].conditions = {"id", "p1=0.9"};
  runs[2].eval = {{16, 1, 2 * ln2, 1.0, 0.75}, {8, 0, ln2, 1.0, 0.5}};
  runs[2].bits_per_byte = true;
  runs[3].eval = {{8, 0, 0.1, 1.0, 0.75}};
  runs[1].grid = "";
  runs[0].metrics.ood_token_acc = 0.5;  // defined in two seeds of group b
  runs[3].metrics.ood_token_acc = 0.25;

  const auto groups = aggregate_runs(runs);
  REQUIRE(groups.size() == 2);
  const auto& b = groups[0];  // first appearance
  CHECK(b.model == "b");
  CHECK(groups[1].model == "a");
  CHECK(b.runs == 3);
  CHECK(b.ok == 1);
  CHECK(b.diverged == 1);
  CHECK(b.failed == 1);
  CHECK(b.reached == 2);
  CHECK(b.frac_target() == Approx(2.0 / 3.0));
  REQUIRE(b.metrics.size() == report_metrics().size() + 1);  // steps_to_target last
  CHECK(b.metrics[0].name == "id_acc");
  const auto& id = b.metrics[0].stats;
  CHECK(id.n == 3);
  CHECK(id.mean == Approx(0.75));
  CHECK(id.std == Approx(0.25));  // sqrt((0.25² + 0.25² + 0) / 2)
  CHECK(id.median == Approx(0.75));
  CHECK(id.min == 0.5);
  CHECK(id.max == 1.0);
  CHECK(b.metrics[1].stats.n == 0);  // ood_length_acc undefined in every run
  CHECK(std::isnan(b.metrics[1].stats.mean));
  CHECK(b.metrics[2].name == "ood_token_acc");
  CHECK(b.metrics[2].stats.n == 2);
  CHECK(b.metrics[2].stats.mean == Approx(0.375));
  CHECK(b.metrics[2].stats.max == 0.5);
  CHECK(b.metrics.back().name == "steps_to_target");
  const auto& steps = b.metrics.back().stats;
  CHECK(steps.n == 2);
  CHECK(steps.mean == Approx(300));
  CHECK(steps.std == Approx(std::sqrt(2.0) * 100));  // sqrt((100² + 100²) / 1)
  CHECK(steps.median == Approx(300));
  CHECK(groups[1].metrics[0].stats.n == 1);
  CHECK(std::isnan(groups[1].metrics[0].stats.std));  // one seed

  CHECK(b.bits_per_byte);
  REQUIRE(b.eval.size() == 2);
  CHECK(b.eval[0].condition == "id");
  CHECK(b.eval[0].length == 8);
  CHECK(b.eval[0].seq_acc.n == 3);
  CHECK(b.eval[0].seq_acc.mean == Approx(0.75));
  CHECK(b.eval[0].bits_per_byte.n == 1);
  CHECK(b.eval[0].bits_per_byte.mean == Approx(1.0));
  CHECK(b.eval[1].condition == "p1=0.9");
  CHECK(b.eval[1].length == 16);
  CHECK(b.eval[1].seq_acc.mean == Approx(0.5));
  CHECK(b.eval[1].bits_per_byte.mean == Approx(2.0));

  // csv: the same numbers, exactly enough for pandas
  const std::string csv = format_report(groups, ReportFormat::csv);
  CHECK(csv.substr(0, csv.find('\n')) ==
        "task,entry,model,arch,grid,runs,ok,diverged,failed,fitted,metric,n,mean,std,min,median,max,ci_lo,ci_hi,frac_target");
  auto f = csv_line(csv, "b", "id_acc");
  REQUIRE(f.size() == 20);
  CHECK(f[5] == "3");
  CHECK(f[9] == "0");  // no run of the group has `fitted` set
  CHECK(f[11] == "3");
  CHECK(std::stod(f[12]) == Approx(0.75));
  CHECK(std::stod(f[13]) == Approx(0.25));
  CHECK(std::stod(f[15]) == Approx(0.75));
  CHECK(std::stod(f[17]) >= 0.5);  // the interval of the mean lies within [min, max]
  CHECK(std::stod(f[18]) <= 1.0);
  CHECK(std::stod(f[19]) == Approx(2.0 / 3.0));
  f = csv_line(csv, "b", "steps_to_target");
  REQUIRE(f.size() == 20);
  CHECK(std::stod(f[12]) == Approx(300));
  CHECK_THAT(csv, Catch::Contains(",\"seq_acc[length=16,condition=p1=0.9]\",2,0.5,"));
  CHECK_THAT(csv, Catch::Contains(",\"bits_per_byte[length=8,condition=id]\",1,1,nan,1,1,1,nan,nan,\n"));

  // table: readable in 100 columns, with the abbreviated statistics
  const std::string table = format_report(groups, ReportFormat::table, "title");
  CHECK_THAT(table, Catch::Contains("0.750±0.250 [0.500, 0.750, 1.000]"));
  CHECK_THAT(table, Catch::Contains("reached target 2/3 (0.67)"));
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) CHECK(display_width(line) <= 100);

  const std::string md = format_report(groups, ReportFormat::markdown);
  const Interval ci = bootstrap_mean_interval({1.0, 0.5, 0.75});  // the group's id_acc in run order
  char ci_text[64];
  std::snprintf(ci_text, sizeof ci_text, "CI [%.3f, %.3f] |", ci.lo, ci.hi);
  CHECK_THAT(md, Catch::Contains("| parity | parity | b | transformer |   | 3 | 1 | 1 | 1 | 2/3 (0.67) | 0/3 | 0.750 ± 0.250 [0.500, 0.750, 1.000] " +
                                 std::string(ci_text)));
}

TEST_CASE("srbench merge joins the run files that open cleanly and lists missing and failed runs", "[results][cli]") {
  TempDir dir;
  const auto suite = parse_suite(kSuiteYaml, "mini.yaml");
  REQUIRE(suite.runs.size() == 3);
  const std::string runs_dir = dir.path() + "/mini/runs";
  std::filesystem::create_directories(runs_dir);
  // runs 2 and 0 finished (run 2 failed), run 1 is missing; plus a damaged file and a temporary one
  for (size_t i : {2, 0}) {
    const auto& spec = suite.runs[i];
    RunResult r;
    r.run_id = spec.id;
    r.task = spec.task;
    r.entry = spec.entry;
    r.model = spec.model_name;
    r.grid = spec.grid;
    r.seed = spec.seed;
    r.config_yaml = spec.resolved_yaml;
    r.metrics.id_acc = 0.5 + 0.25 * static_cast<double>(i);
    if (i == 2) r.status = "failed", r.message = "out of memory";
    write_run_file(runs_dir + "/" + spec.id + ".h5", r, kSuiteYaml, nullptr);
  }
  srbench::test::write_file(runs_dir + "/zzzzzzzzzzzz.h5", "garbage");
  srbench::test::write_file(runs_dir + "/" + suite.runs[1].id + ".h5.tmp.999", "half-written");

  const std::string out = dir.file("mini.h5");
  const auto r = srbench::test::run_srbench({"merge", dir.path() + "/mini", "--out", out});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("merged 2 run(s)"));
  CHECK_THAT(r.out, Catch::Contains("missing: 1 of 3 expected run(s)"));
  CHECK_THAT(r.out, Catch::Contains("#1 " + suite.runs[1].id));
  CHECK_THAT(r.out, Catch::Contains("failed: 1 run(s)"));
  CHECK_THAT(r.out, Catch::Contains(suite.runs[2].id + "  parity · small · seed 2: out of memory"));
  CHECK_THAT(r.err, Catch::Contains("warning: skipping " + runs_dir + "/zzzzzzzzzzzz.h5"));
  CHECK_THAT(r.err, !Catch::Contains(".tmp."));

  const auto s = read_suite_file(out);
  REQUIRE(s.summary.size() == 2);
  CHECK(s.summary[0].run_id == suite.runs[0].id);  // ordered by index in the suite
  CHECK(s.summary[1].run_id == suite.runs[2].id);
  CHECK(s.summary[0].metrics.id_acc == 0.5);
  CHECK(s.summary[1].metrics.id_acc == 1.0);
  CHECK(s.suite_yaml == kSuiteYaml);

  // DIR may also be the runs folder itself
  const auto again = srbench::test::run_srbench({"merge", runs_dir, "--out", dir.file("again.h5")});
  CHECK(again.exit_code == 0);
  CHECK(read_suite_file(dir.file("again.h5")).summary.size() == 2);

  // report: usage errors exit 2 with one line
  const auto report = srbench::test::run_srbench({"report", out});
  CHECK(report.exit_code == 0);
  CHECK_THAT(report.out, Catch::Contains("runs 2: ok 1, diverged 0, failed 1"));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"report", dir.file("absent.h5")},
           {"report", runs_dir + "/" + suite.runs[0].id + ".h5"},  // a run file, not a suite file
           {"report", out, "--format", "json"},
           {"report"},
           {"merge", dir.file("nowhere"), "--out", out},
           {"merge", dir.path() + "/mini"}}) {
    const auto bad = srbench::test::run_srbench(args);
    CHECK(bad.exit_code == 2);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  }
}

// h5::open_file reads a file with a checksum of at most 64 MiB once and lets HDF5 read it from
// memory (HDF5 then names it "PATH (in memory N)"); a larger one is checked in pieces and read from
// disk. Both read back what was written, both refuse a flipped byte, and where() names either by
// its path.
TEST_CASE("sealed files below and above 64 MiB: read from memory and from disk, checked either way", "[results][damaged]") {
  namespace h5 = srbench::h5;
  TempDir dir;
  for (const size_t mib : {1, 65}) {
    INFO(mib << " MiB");
    const std::string path = dir.file("sealed-" + std::to_string(mib) + ".h5");
    std::vector<double> values((mib << 20) / sizeof(double));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 1000003) * 0.5;
    h5::write_file_atomically(path, [&](hid_t f) { h5::write_array(f, "x", values); }, h5::Checksum::Yes);
    {
      const h5::Id f = h5::open_file(path, "test file");
      std::string name(4096, '\0');
      name.resize(static_cast<size_t>(std::max<ssize_t>(0, H5Fget_name(f, name.data(), name.size()))));
      if (mib == 1) CHECK_THAT(name, Catch::StartsWith(path + " (in memory "));
      else CHECK(name == path);
      CHECK(h5::where(f) == path + ":/");
      CHECK(h5::read_array<double>(f, "x") == values);
    }
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(-100, std::ios::end);
    const char was = static_cast<char>(io.get());
    io.seekp(-100, std::ios::end);
    io.put(static_cast<char>(was ^ 0x5a));
    io.close();
    CHECK_THROWS_WITH(h5::open_file(path, "test file"), Catch::Contains(path + ": damaged"));
  }
}
