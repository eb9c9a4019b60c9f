// `srbench report --compact`, `--tidy` and `--format latex` on hand-made runs whose cells are
// worked out by hand below (the interval itself is test_report_intervals.cpp's).
#include <catch2/catch.hpp>

#include <sstream>

#include "harness/report/paper.hpp"
#include "harness/report/stats.hpp"
#include "tests/harness/helpers.hpp"

using namespace srbench::harness;

namespace {

RunResult run(const std::string& model, uint64_t seed, std::vector<EvalRow> eval, int fitted, double target = 0.99) {
  RunResult r = srbench::test::hand_run(model, seed, std::move(eval));
  r.metrics.fitted = fitted;
  r.config_yaml = "model: {arch: lstm}\ntrain: {target_accuracy: " + std::to_string(target) + "}\n";
  return r;
}

// Model m_1 (three seeds; seed 2 not fitted): rows {length, condition, loss, token_acc, seq_acc}.
// At 8: seq_acc 1.0, 0.995, 0.5 (k = 2 at target 0.99); token_acc 1.0, 0.999, 0.9 (k = 2).
// At 16: seq_acc 0.25, 0.0, 1.0 (k = 1). The shifted rows (condition 1) never enter.
// Model n: one seed at target 0.5, length 16 only: seq_acc 0.6 (k = 1).
std::vector<RunResult> hand_runs() {
  return {
      run("m_1", 0, {{8, 0, 0, 1.0, 1.0}, {16, 0, 0, 0.9, 0.25}, {8, 1, 0, 1.0, 1.0}}, 1),
      run("m_1", 1, {{8, 0, 0, 0.999, 0.995}, {16, 0, 0, 0.7, 0.0}}, 1),
      run("m_1", 2, {{8, 0, 0, 0.9, 0.5}, {16, 0, 0, 1.0, 1.0}}, 0),
      run("n", 0, {{16, 0, 0, 0.8, 0.6}}, 0, 0.5),
  };
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string interval(std::vector<double> v) {
  const SeedStats s = seed_stats(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%.2f, %.2f]", s.ci_lo, s.ci_hi);
  return buf;
}

}  // namespace

TEST_CASE("report --compact: per length the mean over seeds, its interval and k/n at the target", "[harness][report]") {
  const auto runs = hand_runs();
  const std::string csv = format_compact_report(runs, "seq_acc", false, ReportFormat::csv);
  const auto lines = lines_of(csv);
  REQUIRE(lines.size() == 4);  // header; m_1 at 8 and 16; n at 16 (no row where a group lacks the length)
  CHECK(lines[0] == "task,entry,model,arch,grid,runs,fitted,length,metric,n,mean,ci_lo,ci_hi,k");
  CHECK_THAT(lines[1], Catch::StartsWith("parity,parity,m_1,lstm,,3,2,8,seq_acc,3,0.83166666666666"));
  CHECK_THAT(lines[1], Catch::EndsWith(",2"));
  CHECK_THAT(lines[2], Catch::StartsWith("parity,parity,m_1,lstm,,3,2,16,seq_acc,3,0.41666666666666"));
  CHECK_THAT(lines[2], Catch::EndsWith(",1"));
  CHECK(lines[3] == "parity,parity,n,lstm,,1,0,16,seq_acc,1,0.59999999999999998,nan,nan,1");

  const std::string tok = format_compact_report(runs, "token_acc", false, ReportFormat::csv);
  CHECK_THAT(lines_of(tok)[1], Catch::StartsWith("parity,parity,m_1,lstm,,3,2,8,token_acc,3,0.96633333333333"));
  CHECK_THAT(lines_of(tok)[1], Catch::EndsWith(",2"));

  // --fitted: seeds 0 and 1 only; the fitted column still counts all three
  const auto fitted = lines_of(format_compact_report(runs, "seq_acc", true, ReportFormat::csv));
  CHECK_THAT(fitted[1], Catch::StartsWith("parity,parity,m_1,lstm,,3,2,8,seq_acc,2,0.99750000000000"));
  CHECK_THAT(fitted[2], Catch::StartsWith("parity,parity,m_1,lstm,,3,2,16,seq_acc,2,0.125,"));

  // the text cell: "mean [lo, hi] · k/n" with the report's interval; "-" where a group lacks the length
  const std::string text = format_compact_report(runs, "seq_acc", false, ReportFormat::table);
  CHECK_THAT(text, Catch::Contains("0.83 " + interval({1.0, 0.995, 0.5}) + " · 2/3"));
  CHECK_THAT(text, Catch::Contains("0.42 " + interval({0.25, 0.0, 1.0}) + " · 1/3"));
  CHECK_THAT(text, Catch::Contains("2/3"));
  bool n_row = false;
  for (const auto& l : lines_of(text))
    if (l.rfind("parity  n ", 0) == 0) {
      n_row = true;
      CHECK_THAT(l, Catch::Contains("0/1"));  // fitted
      CHECK_THAT(l, Catch::Contains(" - "));  // no length 8
      CHECK_THAT(l, Catch::EndsWith("0.60 · 1/1"));
    }
  CHECK(n_row);
}

TEST_CASE("report --tidy: one row per run, length and condition, the run's own values", "[harness][report]") {
  const auto lines = lines_of(format_tidy_report(hand_runs()));
  REQUIRE(lines.size() == 1 + 3 + 2 + 2 + 1);
  CHECK(lines[0] == "run_id,task,entry,model,arch,grid,seed,status,fitted,length,condition,loss,token_acc,seq_acc,"
                    "seen_frac,input_space");
  CHECK(lines[3] == "m_10,parity,parity,m_1,lstm,,0,ok,1,8,p1=0.9,0,1,1,nan,nan");
  CHECK(lines[5] == "m_11,parity,parity,m_1,lstm,,1,ok,1,16,id,0,0.69999999999999996,0,nan,nan");
}

TEST_CASE("report --format latex: a booktabs tabular, LaTeX's specials escaped, the rest comments", "[harness][report]") {
  Table t{{"model", "a_b", "value"}, {{"m_1 & 50%", "x{y}~^#$\\", "0.83 [0.50, 1.00] · 2/3 ± − ≥"}}};
  CHECK(render_latex(t, 2) ==
        "\\begin{tabular}{llr}\n\\toprule\nmodel & a\\_b & value \\\\\n\\midrule\n"
        "m\\_1 \\& 50\\% & x\\{y\\}\\textasciitilde{}\\textasciicircum{}\\#\\$\\textbackslash{} & "
        "0.83 [0.50, 1.00] $\\cdot$ 2/3 $\\pm$ $-$ $\\geq$ \\\\\n\\bottomrule\n\\end{tabular}\n");
  const std::string doc = latex_comments_outside_tables("title line\n\nprose\n" + render_latex(t, 2) + "\n3 of 4 hold\n");
  const auto lines = lines_of(doc);
  CHECK(lines[0] == "% title line");
  CHECK(lines[1].empty());
  CHECK(lines[2] == "% prose");
  CHECK(lines[3] == "\\begin{tabular}{llr}");
  CHECK(lines[lines.size() - 2] == "");
  CHECK(lines.back() == "% 3 of 4 hold");
  const std::string latex = format_compact_report(hand_runs(), "seq_acc", false, ReportFormat::latex);
  CHECK_THAT(latex, Catch::Contains("\\begin{tabular}{llllrrr}"));
  CHECK_THAT(latex, Catch::Contains("parity & m\\_1 & lstm &  & 2/3 & 0.83 "));
}
