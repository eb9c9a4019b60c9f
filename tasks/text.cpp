#include "tasks/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace srbench::tasks {

TextTask::TextTask(const std::string& path, double split) : Task("text") {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("path", "'" + path + "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("path", "cannot open '" + path + "' (missing or unreadable)");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) fail("path", "cannot read '" + path + "'");
  bytes_ = std::move(content).str();
  if (bytes_.empty()) fail("path", "'" + path + "' is empty");

  split_point_ = static_cast<size_t>(std::floor(split * static_cast<double>(bytes_.size())));
  if (split_point_ == 0 || split_point_ == bytes_.size())
    fail("split", (std::ostringstream() << split).str() + " of the " + std::to_string(bytes_.size()) + " bytes of '" + path +
                      "' leaves the training or the evaluation part empty");

  std::array<bool, 256> occurs{};
  for (unsigned char b : bytes_) occurs[b] = true;
  for (int b = 0; b < 256; ++b)
    token_of_byte_[b] = occurs[b] ? vocab_.add(byte_name(static_cast<unsigned char>(b))) : kNotScored;
}

std::string TextTask::byte_name(unsigned char byte) {
  if (byte >= 0x20 && byte <= 0x7e) return std::string(1, static_cast<char>(byte));
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  return buf;
}

void TextTask::check_length(int n) const {
  const size_t train = split_point_, eval = bytes_.size() - split_point_;
  if (n < 1 || static_cast<size_t>(n) >= train || static_cast<size_t>(n) >= eval)
    fail("n", "length " + std::to_string(n) + " is outside 1.." + std::to_string(std::min(train, eval) - 1) +
                  ": a window needs n+1 bytes inside its part (training part " + std::to_string(train) +
                  " bytes, evaluation part " + std::to_string(eval) + ")");
}

void TextTask::window(size_t start, int n, Example& out) const {
  for (size_t t = start; t < start + static_cast<size_t>(n); ++t)
    out.push(token_of_byte_[static_cast<unsigned char>(bytes_[t])],
             token_of_byte_[static_cast<unsigned char>(bytes_[t + 1])]);
}

void TextTask::generate(Rng& rng, Stream stream, int n, Example& out) const {
  const bool eval = stream == Stream::Eval;
  const size_t begin = eval ? split_point_ : 0, end = eval ? bytes_.size() : split_point_;
  // Starts begin..end-n-1: the n+1 bytes s..s+n stay inside [begin, end).
  window(begin + rng.below(end - begin - static_cast<size_t>(n)), n, out);
}

TaskInfo text_info() {
  return {"text",
          "character-level language modelling on a local file (bits per byte)",
          {{"path", ParamType::String, "", "the text file (required)"},
           {"split", ParamType::Real, "0.9", "fraction of the file for training windows, in (0, 1); the rest is for evaluation"}},
          [](const ParamReader& params, const TaskContext&) -> std::unique_ptr<Task> {
            const double split = params.real("split");
            if (!(split > 0.0 && split < 1.0)) params.fail("split", params.text("split") + " is outside (0, 1)");
            return std::make_unique<TextTask>(params.text("path"), split);
          }};
}

}  // namespace srbench::tasks
