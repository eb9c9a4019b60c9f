// `srbench tasks` and `srbench sample`.
#include <boost/program_options.hpp>
#include <iostream>

#include "harness/cli/cli.hpp"
#include "tasks/format.hpp"
#include "tasks/task.hpp"

namespace po = boost::program_options;

namespace srbench::harness {

int cmd_tasks(const Args& args) {
  po::options_description opts("srbench tasks: list tasks, their parameters and defaults");
  opts.add_options()("help,h", "show this help");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm)) return 0;
  for (const auto& t : tasks::task_registry()) {
    std::cout << t.name << " — " << t.summary << "\n";
    for (const auto& p : t.params) {
      std::string head = "    " + p.name + " (" + tasks::param_type_name(p.type) + ", " +
                         (p.default_text.empty() ? std::string("required") : "default " + p.default_text) + ")";
      if (head.size() < 44) head.resize(44, ' ');
      std::cout << head << "  " << p.help;
      if (!p.choices.empty()) {
        std::cout << " [";
        for (size_t i = 0; i < p.choices.size(); ++i) std::cout << (i ? "|" : "") << p.choices[i];
        std::cout << "]";
      }
      std::cout << "\n";
    }
  }
  return 0;
}

int cmd_sample(const Args& args) {
  po::options_description opts(
      "srbench sample TASK [options]: print examples of a task\n\noptions");
  int64_t n = 8, count = 1, index = 0;
  uint64_t seed = 0, data_seed = 0;
  std::string stream_text = "train", format = "text", task_name;
  std::vector<std::string> sets;
  opts.add_options()
      ("help,h", "show this help")
      ("n,n", po::value(&n)->default_value(8), "problem length (input symbols; see `srbench tasks`)")
      ("count", po::value(&count)->default_value(1), "number of examples")
      ("seed", po::value(&seed)->default_value(0), "seed")
      ("data-seed", po::value(&data_seed)->default_value(0), "data seed (modadd's train/held-out split)")
      ("stream", po::value(&stream_text)->default_value("train"), "train | train-arch | eval")
      ("index", po::value(&index)->default_value(0), "index of the first example")
      ("set", po::value(&sets)->composing(), "task parameter KEY=VALUE (repeatable)")
      ("format", po::value(&format)->default_value("text"), "text | jsonl")
      ("task", po::value(&task_name), "task name (positional)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, vm, "task")) return 0;
  if (task_name.empty()) throw UsageError("missing TASK (see `srbench tasks` for the names)");
  if (count < 1) throw UsageError("--count must be at least 1, got " + std::to_string(count));
  if (index < 0) throw UsageError("--index must be at least 0, got " + std::to_string(index));
  if (n < -1'000'000) throw UsageError("-n " + std::to_string(n) + " is below the limit of -1000000");
  if (n > 1'000'000) throw UsageError("-n " + std::to_string(n) + " is above the limit of 1000000");
  if (format != "text" && format != "jsonl")
    throw UsageError("--format must be text or jsonl, got '" + format + "'");
  const auto stream = tasks::parse_stream(stream_text);
  if (!stream) throw UsageError("--stream must be train, train-arch or eval, got '" + stream_text + "'");
  tasks::RawParams params;
  for (const auto& s : sets) {
    auto [key, value] = split_assignment(s, "--set");
    if (params.count(key)) throw UsageError("--set " + key + " is given twice");
    params[key] = value;
  }
  const auto task = tasks::make_task(task_name, params, {data_seed});
  const int len = static_cast<int>(n);
  tasks::Example ex;
  std::string out;
  for (int64_t k = 0; k < count; ++k) {
    const uint64_t i = static_cast<uint64_t>(index + k);
    task->sample_into(seed, *stream, i, len, ex);
    if (format == "jsonl") {
      out += tasks::example_jsonl(*task, len, ex) + "\n";
    } else {
      out += task->name() + "  n=" + std::to_string(len) + "  seed=" + std::to_string(seed) + "  " +
             stream_text + " #" + std::to_string(i) + "  (" + std::to_string(ex.tokens.size()) + " tokens)\n";
      out += tasks::example_text(*task, ex);
    }
  }
  std::cout << out;
  return 0;
}

}  // namespace srbench::harness
