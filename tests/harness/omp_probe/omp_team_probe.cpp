// A preload library for tests (LD_PRELOAD): it wraps libgomp's GOMP_parallel, the call GCC emits for
// every `#pragma omp parallel`, and finds out which parallel regions a second thread really ran.
// Each thread of a region's team goes through run_member(); when one with a thread number > 0 has
// run the region's body, the region's outlined function is recorded — once per process and
// function — as a line "OFFSET\tOBJECT" appended to the file named by SRBENCH_OMP_PROBE: OFFSET
// (hex) is the function's address in its object as `nm` lists it, OBJECT the object's path, empty
// for the main program. Results are unchanged: every member still runs the region's body.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace {

using RegionFn = void (*)(void*);
using GompParallel = void (*)(RegionFn, void*, unsigned, unsigned);

struct Region {
  RegionFn fn;
  void* data;
  std::atomic<bool> second_thread_ran{false};
};

void run_member(void* region) {
  auto* r = static_cast<Region*>(region);
  if (omp_get_thread_num() > 0) r->second_thread_ran.store(true, std::memory_order_relaxed);
  r->fn(r->data);
}

void record(RegionFn fn) {
  static std::mutex mutex;
  static std::set<RegionFn> seen;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!seen.insert(fn).second) return;
  const char* path = std::getenv("SRBENCH_OMP_PROBE");
  Dl_info info;
  link_map* object = nullptr;
  if (!path || !dladdr1(reinterpret_cast<void*>(fn), &info, reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) ||
      !object)
    return;
  char line[4200];
  const int n = std::snprintf(line, sizeof line, "%lx\t%s\n",
                              static_cast<unsigned long>(reinterpret_cast<uintptr_t>(fn) - object->l_addr),
                              object->l_name ? object->l_name : "");
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (n > 0 && write(fd, line, static_cast<size_t>(n)) != n) std::fprintf(stderr, "omp_team_probe: cannot write %s\n", path);
  close(fd);
}

}  // namespace

extern "C" void GOMP_parallel(RegionFn fn, void* data, unsigned num_threads, unsigned flags) {
  static const auto real = reinterpret_cast<GompParallel>(dlsym(RTLD_NEXT, "GOMP_parallel"));
  if (!real) {
    std::fprintf(stderr, "omp_team_probe: libgomp's GOMP_parallel not found\n");
    std::abort();
  }
  Region region{fn, data};
  real(run_member, &region, num_threads, flags);
  if (region.second_thread_ran.load(std::memory_order_relaxed)) record(fn);
}
