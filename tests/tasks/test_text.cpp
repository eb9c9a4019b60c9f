#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "tasks/text.hpp"
#include "tests/support.hpp"
#include "tests/tasks/helpers.hpp"

using namespace srbench::tasks;
using namespace std::string_literals;
using srbench::test::target_names;
using srbench::test::TempDir;
using srbench::test::token_names;
using srbench::test::write_file;
using V = std::vector<std::string>;

namespace {

// The byte a token name stands for, decoded independently of the task.
unsigned char byte_of(const std::string& name) {
  if (name.size() == 1) return static_cast<unsigned char>(name[0]);
  REQUIRE(name.size() == 4);
  REQUIRE(name.substr(0, 2) == "\\x");
  return static_cast<unsigned char>(std::stoi(name.substr(2), nullptr, 16));
}

std::string bytes_of(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += static_cast<char>(byte_of(n));
  return out;
}

void require_error(const RawParams& params, const std::string& param, const std::string& mentions = "") {
  INFO("error naming " << param);
  try {
    make_task("text", params);
    FAIL("accepted");
  } catch (const TaskError& e) {
    CHECK(e.task() == "text");
    CHECK(e.param() == param);
    if (!mentions.empty()) CHECK_THAT(e.what(), Catch::Contains(mentions));
  }
}

}  // namespace

TEST_CASE("text: vocabulary names and a hand-worked window", "[tasks][text]") {
  TempDir dir;
  // Bytes: "the cat\n" NUL "sat" 0xff " on" DEL " the mat" ESC "~\"
  const std::string content = "the cat\n\x00sat\xff on\x7f the mat\x1b~\\"s;
  write_file(dir.file("small.txt"), content);
  const auto task = make_task("text", {{"path", dir.file("small.txt")}, {"split", "0.5"}});
  const auto& t = dynamic_cast<const TextTask&>(*task);
  CHECK(t.vocab().names() == V{"\\x00", "\\x0a", "\\x1b", " ", "\\", "a", "c", "e", "h", "m", "n", "o", "s", "t",
                               "~", "\\x7f", "\\xff"});
  CHECK(t.bytes() == content);
  CHECK(t.split_point() == 14);  // ⌊0.5 · 28⌋
  CHECK(task->reports_bits_per_byte());
  CHECK(task->uses_length());

  Example ex;
  t.window(0, 3, ex);
  CHECK(token_names(t, ex) == V{"t", "h", "e"});
  CHECK(target_names(t, ex) == V{"h", "e", " "});
  ex.clear();
  t.window(7, 4, ex);  // "\n" NUL "s" "a" → NUL "s" "a" "t"
  CHECK(token_names(t, ex) == V{"\\x0a", "\\x00", "s", "a"});
  CHECK(target_names(t, ex) == V{"\\x00", "s", "a", "t"});

  CHECK(TextTask::byte_name(' ') == " ");
  CHECK(TextTask::byte_name('~') == "~");
  CHECK(TextTask::byte_name(0x1f) == "\\x1f");
  CHECK(TextTask::byte_name(0x7f) == "\\x7f");
  CHECK(TextTask::byte_name(0xab) == "\\xab");
}

TEST_CASE("text: 1000 random windows are the file's bytes, shifted by one", "[tasks][text]") {
  const std::string path = srbench::test::sample_text_path();
  const std::string file = srbench::test::read_file(path);
  REQUIRE(file.size() > 200);
  const auto task = make_task("text", {{"path", path}});
  const auto& t = dynamic_cast<const TextTask&>(*task);
  const size_t split = static_cast<size_t>(std::floor(0.9 * static_cast<double>(file.size())));
  REQUIRE(t.split_point() == split);
  std::set<unsigned char> distinct(file.begin(), file.end());
  REQUIRE(t.vocab().size() == static_cast<int32_t>(distinct.size()));

  for (uint64_t i = 0; i < 1000; ++i) {
    const bool eval = i % 2;
    const int n = 1 + static_cast<int>(i % 60);
    const Example ex = task->sample(4, eval ? Stream::Eval : Stream::Train, i, n);
    const std::string tokens = bytes_of(token_names(t, ex)), targets = bytes_of(target_names(t, ex));
    REQUIRE(tokens.size() == static_cast<size_t>(n));
    REQUIRE(targets.substr(0, n - 1) == tokens.substr(1));
    // The n+1 bytes occur in the file inside the stream's part.
    const std::string window = tokens + targets.back();
    bool inside = false;
    for (size_t s = file.find(window); s != std::string::npos && !inside; s = file.find(window, s + 1))
      inside = eval ? s >= split : s + window.size() <= split;
    REQUIRE(inside);
  }
}

TEST_CASE("text: train windows cover exactly the training part, eval windows the evaluation part", "[tasks][text]") {
  // Byte i at offset i: a window's first byte is its start.
  TempDir dir;
  std::string content;
  for (int i = 0; i < 100; ++i) content += static_cast<char>(i);
  write_file(dir.file("ramp"), content);
  const auto task = make_task("text", {{"path", dir.file("ramp")}, {"split", "0.6"}});
  CHECK(task->vocab().size() == 100);
  const int n = 5;
  std::map<Stream, std::set<int>> starts;
  for (Stream s : {Stream::Train, Stream::TrainArch, Stream::Eval})
    for (uint64_t i = 0; i < 1000; ++i) {
      const auto tok = token_names(*task, task->sample(2, s, i, n));
      const int start = byte_of(tok[0]);
      REQUIRE(bytes_of(tok) == content.substr(static_cast<size_t>(start), n));
      starts[s].insert(start);
    }
  // Training part [0, 60): starts 0..54; evaluation part [60, 100): starts 60..94; all reached.
  for (Stream s : {Stream::Train, Stream::TrainArch}) {
    CHECK(starts[s].size() == 55);
    CHECK(*starts[s].begin() == 0);
    CHECK(*starts[s].rbegin() == 54);
  }
  CHECK(starts[Stream::Eval].size() == 35);
  CHECK(*starts[Stream::Eval].begin() == 60);
  CHECK(*starts[Stream::Eval].rbegin() == 94);
}

TEST_CASE("text: lengths and bad parameters are errors naming them", "[tasks][text]") {
  TempDir dir;
  std::string content(50, 'a');
  content[3] = 'b';
  write_file(dir.file("fifty"), content);
  write_file(dir.file("empty"), "");
  {
    // split 0.7: training part 35 bytes, evaluation part 15; n must be below both.
    const auto task = make_task("text", {{"path", dir.file("fifty")}, {"split", "0.7"}});
    CHECK_NOTHROW(task->sample(0, Stream::Eval, 0, 14));
    for (int n : {15, 35, 0}) {
      try {
        task->sample(0, Stream::Train, 0, n);
        FAIL("n = " << n << " accepted");
      } catch (const TaskError& e) {
        CHECK(e.param() == "n");
        CHECK_THAT(e.what(), Catch::Contains("1..14") && Catch::Contains("15"));
      }
    }
  }
  require_error({}, "path", "required");
  require_error({{"path", dir.file("missing")}}, "path", dir.file("missing"));
  require_error({{"path", dir.file("empty")}}, "path", dir.file("empty"));
  require_error({{"path", dir.path()}}, "path", dir.path());
  for (const char* split : {"1.0", "1", "0", "-0.5", "1.5", "most"})
    require_error({{"path", dir.file("fifty")}, {"split", split}}, "split");
  require_error({{"path", dir.file("fifty")}, {"split", "0.01"}}, "split");   // ⌊0.5⌋ = 0 training bytes
  // ⌊0.999 · 50⌋ = 49: both parts are non-empty, but a one-byte part holds no window of any length.
  const auto tight = make_task("text", {{"path", dir.file("fifty")}, {"split", "0.999"}});
  CHECK_THROWS_WITH(tight->sample(0, Stream::Train, 0, 1), Catch::Contains("'n'"));
}
