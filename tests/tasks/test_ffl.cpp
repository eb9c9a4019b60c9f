// ffl: hand-worked sequences, 1000s of random sequences relabelled by replaying the memory from
// token names, the instruction distribution, and every bad parameter.
#include <catch2/catch.hpp>

#include "tasks/ffl.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using srbench::test::target_names;
using srbench::test::token_names;
using V = std::vector<std::string>;

namespace {

void check_error(const RawParams& params, const std::string& param, int n = 4) {
  INFO("expect an error naming " << param);
  try {
    make_task("ffl", params)->sample(0, Stream::Train, 0, n);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "ffl");
    CHECK(e.param() == param);
  }
}

}  // namespace

TEST_CASE("ffl: vocabulary and hand-worked examples", "[tasks][ffl]") {
  const auto task = make_task("ffl", {});
  const auto& ffl = dynamic_cast<const FflTask&>(*task);
  CHECK(ffl.vocab().names() == V{"w", "r", "i", "0", "1"});
  {
    // w 1 i 0 r ? w 0 r ?: the reads see 1 (the i does not write) then 0.
    Example ex;
    ffl.format({FflTask::kW, FflTask::kI, FflTask::kR, FflTask::kW, FflTask::kR}, {1, 0, 0, 0, 1}, ex);
    CHECK(token_names(ffl, ex) == V{"w", "1", "i", "0", "r", "1", "w", "0", "r", "0"});
    CHECK(target_names(ffl, ex) == V{"", "", "", "", "1", "", "", "", "0", ""});
  }
  {
    // The shortest example, n = 2: w 0 r 0.
    Example ex;
    ffl.format({FflTask::kW, FflTask::kR}, {0, 1}, ex);
    CHECK(token_names(ffl, ex) == V{"w", "0", "r", "0"});
    CHECK(target_names(ffl, ex) == V{"", "", "0", ""});
  }
  {
    // Reads in a row repeat the same bit; an ignore with a different bit changes nothing.
    Example ex;
    ffl.format({FflTask::kW, FflTask::kR, FflTask::kI, FflTask::kR, FflTask::kW, FflTask::kI, FflTask::kR},
               {1, 0, 0, 0, 0, 1, 1}, ex);
    CHECK(token_names(ffl, ex) == V{"w", "1", "r", "1", "i", "0", "r", "1", "w", "0", "i", "1", "r", "0"});
    CHECK(target_names(ffl, ex) == V{"", "", "1", "", "", "", "1", "", "", "", "", "", "0", ""});
  }
  Example bad;
  CHECK_THROWS_AS(ffl.format({FflTask::kR, FflTask::kW}, {0, 0}, bad), std::invalid_argument);
}

TEST_CASE("ffl: 1000s of random sequences agree with a replay of the memory", "[tasks][ffl]") {
  for (double p_i : {0.0, 0.1, 0.5, 0.8, 0.98, 1.0}) {
    const auto task = make_task("ffl", {{"p_i", std::to_string(p_i)}});
    long middle = 0, ignores = 0, writes = 0, reads = 0, written_ones = 0, written = 0;
    for (uint64_t i = 0; i < 1000; ++i) {
      INFO("p_i=" << p_i << " #" << i);
      const int n = 2 + static_cast<int>(i % 60);
      const Example ex = task->sample(9, Stream::Train, i, n);
      const V tok = token_names(*task, ex), tgt = target_names(*task, ex);
      REQUIRE(static_cast<int>(tok.size()) == 2 * n);
      REQUIRE(task->max_sequence_length(n) == 2 * n);
      CHECK(tok.front() == "w");
      CHECK(tok[2 * n - 2] == "r");
      std::string memory;
      for (int t = 0; t < n; ++t) {
        const std::string& op = tok[2 * t];
        const std::string& bit = tok[2 * t + 1];
        REQUIRE((op == "w" || op == "r" || op == "i"));
        REQUIRE((bit == "0" || bit == "1"));
        CHECK(tgt[2 * t + 1].empty());
        if (op == "r") {
          REQUIRE(!memory.empty());
          CHECK(bit == memory);
          CHECK(tgt[2 * t] == bit);
        } else {
          CHECK(tgt[2 * t].empty());
          written_ones += bit == "1", written += 1;
        }
        if (op == "w") memory = bit;
        if (t > 0 && t < n - 1) middle += 1, ignores += op == "i", writes += op == "w", reads += op == "r";
      }
    }
    INFO("p_i=" << p_i);
    CHECK(static_cast<double>(ignores) / middle == Approx(p_i).margin(0.01));
    CHECK(static_cast<double>(writes) / middle == Approx((1 - p_i) / 2).margin(0.01));
    CHECK(static_cast<double>(reads) / middle == Approx((1 - p_i) / 2).margin(0.01));
    CHECK(static_cast<double>(written_ones) / written == Approx(0.5).margin(0.02));
  }
}

TEST_CASE("ffl: bad parameters and lengths are errors naming them", "[tasks][ffl]") {
  check_error({{"p_i", "1.5"}}, "p_i");
  check_error({{"p_i", "-0.2"}}, "p_i");
  check_error({{"p_i", "often"}}, "p_i");
  check_error({{"p_w", "0.1"}}, "p_w");
  check_error({}, "n", 1);
  check_error({}, "n", 0);
  check_error({}, "n", -1);
  CHECK_NOTHROW(make_task("ffl", {})->sample(0, Stream::Train, 0, 2));
}
