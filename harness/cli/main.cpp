#include <Eigen/Core>
#include <boost/program_options/errors.hpp>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>

#include "common/float_mode.hpp"
#include "common/suggest.hpp"
#include "common/version.hpp"
#include "harness/cli/cli.hpp"
#include "harness/core/specs.hpp"
#include "common/error.hpp"
#include "tasks/params.hpp"

namespace srbench::harness {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"tasks", "list tasks, their parameters and defaults", cmd_tasks},
      {"sample", "print examples of a task (text or jsonl)", cmd_sample},
      {"sweep", "train and evaluate every run of a suite (YAML)", cmd_sweep},
      {"slurm", "run a suite as a Slurm job array (sbatch scripts; --submit)", cmd_slurm},
      {"merge", "join the run files of a suite into one suite file (HDF5)", cmd_merge},
      {"report", "statistics across seeds of a suite file (table, markdown, csv)", cmd_report},
      {"eval", "evaluate a saved model at new lengths and conditions", cmd_eval},
      {"init-checkpoint", "write a freshly initialised model checkpoint (HDF5)", cmd_init_checkpoint},
      {"forward", "logits, loss and gradients of a checkpoint on a batch (HDF5)", cmd_forward},
  };
  return list;
}

bool parse_command_line(const Args& args, const boost::program_options::options_description& opts,
                        boost::program_options::variables_map& vm, const char* positional) {
  namespace po = boost::program_options;
  po::positional_options_description pos;
  if (positional) pos.add(positional, 1);
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return false;
  }
  po::notify(vm);
  return true;
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(option + ": expected KEY=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string suite_file_out(const std::string& out, const std::string& suite_name) {
  if (out.empty()) return "results/" + suite_name + ".h5";
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec))
    throw UsageError("--out " + out + ": is a folder; give the suite file, e.g. " +
                     (std::filesystem::path(out) / (suite_name + ".h5")).string() +
                     " (its run files go to <its folder>/" + suite_name + "/runs/)");
  return out;
}

namespace {

void print_usage(std::ostream& os) {
  os << "usage: srbench COMMAND [OPTIONS]   (srbench COMMAND --help for its options; srbench --version)\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string name = c.name;
    name.resize(18, ' ');
    os << "  " << name << c.summary << "\n";
  }
}

// SRBENCH_EIGEN_CACHE_SIZES=L1,L2,L3 (bytes): the cache sizes Eigen's products block by, instead
// of those it detects on this machine — so that one machine can check that no number depends on
// them (scripts/cross-build.sh; docs/harness.md, "The same numbers on every machine"). Returns
// false (having said why) on a value that is not three positive sizes.
bool apply_eigen_cache_sizes() {
  const char* env = std::getenv("SRBENCH_EIGEN_CACHE_SIZES");
  if (!env) return true;
  std::ptrdiff_t size[3] = {0, 0, 0};
  const char* p = env;
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    const long long v = std::strtoll(p, &end, 10);
    const bool last = i == 2;
    if (end == p || v <= 0 || v > (1LL << 40) || (last ? *end != '\0' : *end != ',')) {
      std::cerr << "srbench: SRBENCH_EIGEN_CACHE_SIZES='" << env
                << "': expected three cache sizes in bytes, L1,L2,L3 (e.g. 32768,1048576,33554432)\n";
      return false;
    }
    size[i] = static_cast<std::ptrdiff_t>(v);
    p = end + 1;
  }
  Eigen::setCpuCacheSizes(size[0], size[1], size[2]);
  return true;
}

}  // namespace
}  // namespace srbench::harness

int main(int argc, char** argv) {
  using namespace srbench::harness;
  srbench::flush_denormals();  // the mode every srbench number is computed in (common/float_mode.hpp)
  if (!apply_eigen_cache_sizes()) return 2;
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (name == "--version") {  // the build is what every run file records as its `build`
    std::cout << "srbench " << srbench::version() << " (commit " << srbench::commit() << ")\nbuild: " << srbench::build_description() << "\n"
              << "eigen cache sizes: " << Eigen::l1CacheSize() << "," << Eigen::l2CacheSize() << ","
              << Eigen::l3CacheSize() << " bytes ("
              << (std::getenv("SRBENCH_EIGEN_CACHE_SIZES") ? "SRBENCH_EIGEN_CACHE_SIZES" : "detected") << ")\n";
    return 0;
  }
  const Command* command = nullptr;
  std::vector<std::string> names;
  for (const auto& c : commands()) {
    names.emplace_back(c.name);
    if (name == c.name) command = &c;
  }
  if (!command) {
    std::cerr << "srbench: unknown command '" << name << "'";
    const std::string near = srbench::closest_name(name, names);
    if (!near.empty()) std::cerr << " (did you mean '" << near << "'?)";
    std::cerr << "\n";
    print_usage(std::cerr);
    return 2;
  }
  const Args args(argv + 2, argv + argc);
  try {
    return command->run(args);
  } catch (const UsageError& e) {
    std::cerr << "srbench " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const ConfigError& e) {  // a suite that does not validate: names file, line, YAML path
    std::cerr << "srbench " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const srbench::tasks::TaskError& e) {
    std::cerr << "srbench " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const srbench::InputError& e) {  // a bad model config, checkpoint or batch (ModelError)
    std::cerr << "srbench " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << "srbench " << name << ": " << e.what() << " (see srbench " << name << " --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "srbench " << name << ": error: " << e.what() << "\n";
    return 1;
  }
}
