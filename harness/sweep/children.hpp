// Child processes of a sweep: every run (and search) in its own process, a few at a time, so
// that nothing a run does — an exception, a crash, running out of memory — can take the sweep
// down.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace srbench::harness {

// Runs child(i) for i in [0, n) each in its own process, `jobs` at a time (the child must not
// return: it _exits); done(i, wait status, seconds) runs in the parent as each one ends.
void run_in_children(size_t n, int jobs, const std::function<void(size_t)>& child,
                     const std::function<void(size_t, int, double)>& done);

// "killed by signal 9", "exited with code 1" of a wait status.
std::string exit_text(int status);

}  // namespace srbench::harness
