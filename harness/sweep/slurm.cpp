#include "harness/sweep/slurm.hpp"

#include <sstream>

namespace srbench::harness {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string sbatch_header(const SlurmPlan& p, const std::string& job_name, const std::string& log_pattern) {
  std::ostringstream s;
  s << "#SBATCH --job-name=" << job_name << "\n"
    << "#SBATCH --output=" << (p.suite_dir / "logs" / log_pattern).string() << "\n"
    << "#SBATCH --open-mode=append\n";  // a requeued task adds to its log instead of truncating it
  for (const auto& a : p.sbatch_args) s << "#SBATCH " << a << "\n";
  return s.str();
}

// The `#SBATCH` lines and the tail of an array script that runs `command` (one line, no exec):
// requeue on preemption, a warning before the time limit, signals forwarded to the sweep.
std::string requeue_header(const SlurmPlan& p) {
  return "#SBATCH --requeue\n#SBATCH --signal=B:USR1@" + std::to_string(p.signal_grace) + "\n";
}

std::string run_surviving_signals(const std::string& command) {
  std::ostringstream s;
  s << "# The sweep runs as a child of this shell, which forwards stop signals to it; USR1 (the time\n"
    << "# limit is near) stops it and requeues this task, which then resumes the shard.\n"
    << command << " &\n"
    << "sweep=$!\n"
    << "requeue=0\n"
    << "trap 'kill -TERM \"$sweep\" 2>/dev/null || true' TERM INT HUP\n"
    << "trap 'requeue=1; kill -TERM \"$sweep\" 2>/dev/null || true' USR1\n"
    << "set +e\n"
    << "while :; do\n"
    << "  wait \"$sweep\"\n"
    << "  rc=$?\n"
    << "  kill -0 \"$sweep\" 2>/dev/null || break  # wait returns early when a trap has run\n"
    << "done\n"
    << "if [ \"$requeue\" = 1 ]; then\n"
    << "  echo \"srbench slurm: the time limit is near: requeueing ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} to resume its shard\"\n"
    << "  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n"
    << "fi\n"
    << "exit \"$rc\"\n";
  return s.str();
}

}  // namespace

std::string sweep_array_script(const SlurmPlan& p) {
  const int n = p.tasks;
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Suite '" << p.suite_name << "' (" << p.runs << " runs) as a Slurm job array of " << n << " task(s), written by\n"
    << "#   " << p.command_line << "\n"
    << "# from " << p.suite_source << " as validated then (frozen in " << p.snapshot.filename().string()
    << ", so that every task expands the same runs).\n"
    << "# Task I runs the runs whose index mod " << n << " is I, one at a time, with one OpenMP thread per CPU\n"
    << "# Slurm allots it (--sbatch-arg=--cpus-per-task=C). Each finished run is written atomically to\n"
    << "# " << (p.suite_dir / "runs").string() << "/<run_id>.h5 and skipped by later tasks, so submitting\n"
    << "# this script again, whole or some tasks (sbatch --array=1,4 sweep.sbatch), resumes. Edit freely.\n"
    << "#SBATCH --array=0-" << n - 1 << (p.throttle ? "%" + std::to_string(p.throttle) : "") << "\n"
    << sbatch_header(p, "srbench-" + p.suite_name, "%A_%a.out") << requeue_header(p) << "\n"
    << "set -eu\n"
    << "cd " << shell_quote(p.workdir.string()) << "\n"
    << "echo \"srbench slurm: suite " << p.suite_name << ", array task ${SLURM_ARRAY_TASK_ID}/" << n
    << " (job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}) on $(hostname) at $(date -u +%FT%TZ)\"\n"
    << run_surviving_signals(shell_quote(p.srbench.string()) + " sweep " + shell_quote(p.snapshot.string()) +
                             " \\\n  --out " + shell_quote(p.out.string()) + " --shard \"${SLURM_ARRAY_TASK_ID}/" +
                             std::to_string(n) + "\" \\\n  --jobs 1 --threads \"${SLURM_CPUS_PER_TASK:-1}\"");
  return s.str();
}

std::string searches_array_script(const SlurmPlan& p) {
  const int n = p.search_tasks;
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# The " << p.searches << " spline search(es) of suite '" << p.suite_name << "' as a Slurm job array of " << n
    << " task(s), written by\n"
    << "#   " << p.command_line << "\n"
    << "# Task I runs the searches whose index mod " << n << " is I; each writes its splines file atomically to\n"
    << "# " << (p.suite_dir / "splines").string() << "/<name>.h5 (a finished one is skipped). The sweep array\n"
    << "# waits for this one (afterany) and runs any search still missing itself.\n"
    << "#SBATCH --array=0-" << n - 1 << (p.throttle ? "%" + std::to_string(p.throttle) : "") << "\n"
    << sbatch_header(p, "srbench-" + p.suite_name + "-searches", "searches-%A_%a.out") << requeue_header(p) << "\n"
    << "set -eu\n"
    << "cd " << shell_quote(p.workdir.string()) << "\n"
    << "echo \"srbench slurm: suite " << p.suite_name << ", searches task ${SLURM_ARRAY_TASK_ID}/" << n
    << " (job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}) on $(hostname) at $(date -u +%FT%TZ)\"\n"
    << run_surviving_signals(shell_quote(p.srbench.string()) + " sweep " + shell_quote(p.snapshot.string()) +
                             " \\\n  --out " + shell_quote(p.out.string()) + " --searches-only --shard \"${SLURM_ARRAY_TASK_ID}/" +
                             std::to_string(n) + "\" \\\n  --jobs 1 --threads \"${SLURM_CPUS_PER_TASK:-1}\"");
  return s.str();
}

std::string merge_job_script(const SlurmPlan& p) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Joins the run files of suite '" << p.suite_name << "' into " << p.out.string() << " once its array has ended\n"
    << "# (however its tasks ended), and lists the runs that are missing or failed.\n"
    << "# Written by: " << p.command_line << "\n"
    << sbatch_header(p, "srbench-" + p.suite_name + "-merge", "merge-%j.out")
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=1\n\n"  // after --sbatch-arg: the last value of an option wins
    << "set -eu\n"
    << "cd " << shell_quote(p.workdir.string()) << "\n"
    << "echo \"srbench slurm: merging suite " << p.suite_name << " (job ${SLURM_JOB_ID}) on $(hostname) at $(date -u +%FT%TZ)\"\n"
    << "exec " << shell_quote(p.srbench.string()) << " merge " << shell_quote(p.suite_dir.string()) << " --out "
    << shell_quote(p.out.string()) << "\n";
  return s.str();
}

}  // namespace srbench::harness
