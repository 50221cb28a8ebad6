// A C++ tool on libpti: kernel statistics (count, total, shortest, longest device time per
// kernel) from the kernel views, with the enabled views held by an RAII type
// (on for its lifetime, flushed and off at its end).
//
// Build: cc -c samples/c/workload.c && c++ -std=c++17 -Iinclude samples/cpp/kernel_stats.cpp workload.o -lpti -lOpenCL
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "pti/pti_view.h"

extern "C" {
#include "../c/workload.h"
}

namespace {

struct Stats {
  std::uint64_t count = 0, total = 0, shortest = UINT64_MAX, longest = 0;
};

std::mutex stats_lock;
std::map<std::string, Stats> stats;

void check(pti_result r, const char* what) {
  if (r != PTI_SUCCESS) throw std::runtime_error(std::string(what) + ": " + ptiResultTypeToString(r));
}

void requested(unsigned char** buffer, std::size_t* size) {
  *size = 1 << 20;
  *buffer = static_cast<unsigned char*>(std::malloc(*size));
}

void completed(unsigned char* buffer, std::size_t, std::size_t used) {
  pti_view_record_base* r = nullptr;
  std::lock_guard<std::mutex> guard(stats_lock);
  while (ptiViewGetNextRecord(buffer, used, &r) == PTI_SUCCESS) {
    if (r->_view_kind != PTI_VIEW_DEVICE_GPU_KERNEL && r->_view_kind != PTI_VIEW_DEVICE_CPU_KERNEL) continue;
    auto* k = reinterpret_cast<pti_view_record_kernel_v2*>(r);
    Stats& s = stats[k->_name];
    std::uint64_t ns = k->_end_timestamp - k->_start_timestamp;
    s.count++;
    s.total += ns;
    s.shortest = std::min(s.shortest, ns);
    s.longest = std::max(s.longest, ns);
  }
  std::free(buffer);
}

// Kernel views on for its lifetime; flushed and off at its end.
class KernelViews {
 public:
  KernelViews() {
    check(ptiViewSetCallbacks(requested, completed), "ptiViewSetCallbacks");
    check(ptiViewEnable(PTI_VIEW_DEVICE_GPU_KERNEL), "ptiViewEnable(GPU kernels)");
    check(ptiViewEnable(PTI_VIEW_DEVICE_CPU_KERNEL), "ptiViewEnable(CPU kernels)");
  }
  ~KernelViews() {
    ptiFlushAllViews();
    ptiViewDisable(PTI_VIEW_DEVICE_GPU_KERNEL);
    ptiViewDisable(PTI_VIEW_DEVICE_CPU_KERNEL);
  }
  KernelViews(const KernelViews&) = delete;
  KernelViews& operator=(const KernelViews&) = delete;
};

}  // namespace

int main() {
  try {
    {
      KernelViews views;
      if (run_workload(3, 1) != 0) return 1;
    }
    std::printf("%-16s %6s %12s %12s %12s\n", "kernel", "count", "total us", "min us", "max us");
    for (const auto& [name, s] : stats)
      std::printf("%-16s %6llu %12.3f %12.3f %12.3f\n", name.c_str(), static_cast<unsigned long long>(s.count),
                  s.total / 1e3, s.shortest / 1e3, s.longest / 1e3);
    return stats.empty();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_stats: %s\n", e.what());
    return 1;
  }
}
