// Uncertainty and fitted-first statistics in the report: the bootstrap interval of a mean over
// seeds (against exact enumeration and a coverage simulation), `fitted`, `report --fitted` and
// `report --compare A B`, against hand computations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/report/report.hpp"
#include "harness/run/metrics.hpp"
#include "tasks/rng.hpp"

using namespace srbench::harness;

namespace {

// The exact percentile-bootstrap quantile q of the mean of `v`: every one of the n^n resamples,
// equally likely, sorted by their mean, nearest rank.
double exact_bootstrap_quantile(const std::vector<double>& v, double q) {
  const size_t n = v.size();
  std::vector<double> means;
  std::vector<size_t> idx(n, 0);
  while (true) {
    double s = 0;
    for (size_t i : idx) s += v[i];
    means.push_back(s / static_cast<double>(n));
    size_t k = 0;
    while (k < n && ++idx[k] == n) idx[k++] = 0;
    if (k == n) break;
  }
  std::sort(means.begin(), means.end());
  const auto r = static_cast<size_t>(std::ceil(q * static_cast<double>(means.size())));
  return means[std::max<size_t>(r, 1) - 1];
}

RunResult metric_run(const std::string& model, uint64_t seed, double id_acc, double ood, int64_t fitted) {
  RunResult r;
  r.task = r.entry = "parity";
  r.model = model;
  r.seed = seed;
  r.run_id = model + std::to_string(seed);
  r.metrics.id_acc = id_acc;
  r.metrics.ood_length_acc = ood;
  r.metrics.fitted = fitted;
  return r;
}

}  // namespace

TEST_CASE("bootstrap interval of a mean: exact for tiny n, degenerate for constant values", "[report][stats]") {
  CHECK(std::isnan(bootstrap_mean_interval({0.5}).lo));
  const Interval flat = bootstrap_mean_interval({0.7, 0.7, 0.7});
  CHECK(flat.lo == Approx(0.7).epsilon(1e-15));
  CHECK(flat.hi == Approx(0.7).epsilon(1e-15));
  // n = 2: the resampled mean is a (1/4), (a+b)/2 (1/2) or b (1/4): the 2.5% and 97.5% quantiles are a and b
  const Interval two = bootstrap_mean_interval({0.2, 0.6});
  CHECK(two.lo == 0.2);
  CHECK(two.hi == 0.6);
  // the same values in any order: the same interval (splines-control's paired differences, in seed
  // order and sorted, gave [-0.198, -0.111] and [-0.198, -0.113] when the order mattered)
  const std::vector<double> by_seed = {-0.1484375, -0.2421875, -0.11328125, -0.14453125, -0.09765625};
  std::vector<double> sorted = by_seed, reversed = by_seed;
  std::sort(sorted.begin(), sorted.end());
  std::reverse(reversed.begin(), reversed.end());
  const Interval a = bootstrap_mean_interval(by_seed), b = bootstrap_mean_interval(sorted),
                 c = bootstrap_mean_interval(reversed);
  CHECK(a.lo == b.lo);
  CHECK(a.hi == b.hi);
  CHECK(c.lo == b.lo);
  CHECK(c.hi == b.hi);
  // n = 4 and 5: the sampled quantiles against every one of the n^n resamples
  for (const std::vector<double>& v : {std::vector<double>{0.1, 0.4, 0.5, 0.9}, std::vector<double>{0.0, 0.2, 0.3, 0.35, 1.0}}) {
    const Interval ci = bootstrap_mean_interval(v, 0.95, 200000);
    const double lo = exact_bootstrap_quantile(v, 0.025), hi = exact_bootstrap_quantile(v, 0.975);
    CHECK(ci.lo == Approx(lo).margin(0.03));
    CHECK(ci.hi == Approx(hi).margin(0.03));
  }
  // seed_stats carries it
  const SeedStats s = seed_stats({0.2, 0.6, std::nan("")});
  CHECK(s.n == 2);
  CHECK(s.ci_lo == 0.2);
  CHECK(s.ci_hi == 0.6);
}

TEST_CASE("bootstrap interval of a mean: coverage near 95% for 20 normal seeds", "[report][stats]") {
  // 400 samples of 20 N(0,1) values (Box-Muller from the project's RNG): the interval should
  // contain the true mean 0 in about 95% of them (percentile bootstrap undercovers a little at
  // n = 20); 400 trials put the binomial standard error at 1.1 points.
  srbench::tasks::Rng rng(7);
  int covered = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> v(20);
    for (auto& x : v) {
      const double u1 = (static_cast<double>(rng.below(1u << 30)) + 1) / (1u << 30);
      const double u2 = static_cast<double>(rng.below(1u << 30)) / (1u << 30);
      x = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    }
    const Interval ci = bootstrap_mean_interval(v, 0.95, 2000);
    covered += ci.lo <= 0 && 0 <= ci.hi;
  }
  const double rate = static_cast<double>(covered) / trials;
  CHECK(rate > 0.89);
  CHECK(rate < 0.99);
}

TEST_CASE("fitted: id_acc reaches the target; report --fitted restricts every statistic to fitted seeds",
          "[report]") {
  CHECK(derive_metrics({{8, 0, 0, 1, 0.99}}, {"id"}, 1, 8, {}, 0.99).fitted == 1);
  CHECK(derive_metrics({{8, 0, 0, 1, 0.98}}, {"id"}, 1, 8, {}, 0.99).fitted == 0);
  CHECK(derive_metrics({{16, 0, 0, 1, 0.98}}, {"id"}, 1, 8, {}, 0.99).fitted == -1);  // no id row: undefined

  const std::vector<RunResult> runs = {metric_run("m", 0, 1.0, 0.2, 1), metric_run("m", 1, 0.5, 0.9, 0),
                                       metric_run("m", 2, 0.995, 0.4, 1)};
  const auto all = aggregate_runs(runs);
  const auto fit = aggregate_runs(runs, true);
  REQUIRE(all.size() == 1);
  REQUIRE(fit.size() == 1);
  CHECK(all[0].fitted == 2);
  CHECK(fit[0].fitted == 2);
  CHECK(fit[0].runs == 3);  // counts cover every run
  CHECK(all[0].metrics[1].name == "ood_length_acc");
  CHECK(all[0].metrics[1].stats.mean == Approx(0.5));
  CHECK(fit[0].metrics[1].stats.n == 2);
  CHECK(fit[0].metrics[1].stats.mean == Approx(0.3));  // (0.2 + 0.4) / 2: the unfitted seed's 0.9 left out
  const std::string text = format_report(fit, ReportFormat::table);
  CHECK(text.find("fitted 2/3") != std::string::npos);
  CHECK(text.find("over the fitted seeds only") != std::string::npos);
}

TEST_CASE("report: a group judged by train.fit_metric token_acc says so; seq_acc groups read as before", "[report]") {
  std::vector<RunResult> runs = {metric_run("m", 0, 1.0, 0.2, 1), metric_run("m", 1, 0.5, 0.9, 0),
                                 metric_run("t", 0, 0.5, 0.3, 1), metric_run("t", 1, 0.4, 0.8, 0)};
  for (auto& r : runs) r.config_yaml = "train:\n  steps: 3\n" + std::string(r.model == "t" ? "  fit_metric: token_acc\n" : "");
  const auto groups = aggregate_runs(runs, true);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].fit_metric == "seq_acc");
  CHECK(groups[1].fit_metric == "token_acc");
  CHECK(groups[1].fitted == 1);
  CHECK(groups[1].metrics[1].stats.mean == Approx(0.3));  // --fitted follows the runs' own `fitted`
  const std::string text = format_report(groups, ReportFormat::table);
  CHECK(text.find("fitted 1/2\n") != std::string::npos);             // model m: seq_acc, unnamed
  CHECK(text.find("fitted 1/2 by token_acc\n") != std::string::npos);  // model t
  CHECK(text.find("over the fitted seeds only (the id rows' mean train.fit_metric >= target") != std::string::npos);
  CHECK(format_report(groups, ReportFormat::markdown).find("| 1/2 by token_acc |") != std::string::npos);
  // with every run at seq_acc, the preamble is the one it always was
  runs.resize(2);
  CHECK(format_report(aggregate_runs(runs, true), ReportFormat::table)
            .find("over the fitted seeds only (id_acc >= target)\n") != std::string::npos);
}

TEST_CASE("report --compare: paired differences by seed, with their bootstrap interval", "[report]") {
  std::vector<RunResult> runs = {metric_run("a", 0, 0.9, 0.5, 1), metric_run("a", 1, 0.8, 0.6, 1),
                                 metric_run("a", 2, 0.7, 0.7, 1), metric_run("b", 0, 0.6, 0.1, 1),
                                 metric_run("b", 1, 0.7, 0.1, 1), metric_run("b", 3, 0.1, 0.1, 1)};  // seed 3: unpaired
  const auto diffs = compare_models(runs, "a", "b");
  REQUIRE(diffs.size() == 4);
  const PairedDiff& id = diffs[0];
  CHECK(id.metric == "id_acc");
  CHECK(id.diff.n == 2);                            // seeds 0 and 1
  CHECK(id.diff.mean == Approx((0.3 + 0.1) / 2));   // 0.9 − 0.6, 0.8 − 0.7
  CHECK(id.mean_a == Approx(0.85));
  CHECK(id.mean_b == Approx(0.65));
  CHECK(id.diff.ci_lo == Approx(0.1));
  CHECK(id.diff.ci_hi == Approx(0.3));
  CHECK(diffs[1].metric == "ood_length_acc");
  CHECK(diffs[1].diff.mean == Approx(0.45));
  CHECK(diffs[2].diff.n == 0);  // ood_token_acc undefined everywhere
  const std::string csv = format_compare_report(diffs, "a", "b", ReportFormat::csv);
  CHECK(csv.rfind("task,entry,grid,metric,model_a,model_b,mean_a,mean_b,diff_n,diff_mean,", 0) == 0);
  CHECK(csv.find("\nparity,parity,,id_acc,a,b,0.85000000000000009,0.64999999999999991,2,") != std::string::npos);
}
