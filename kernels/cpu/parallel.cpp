#include "kernels/cpu/parallel.h"

#include <atomic>

namespace h3p::kernels::cpu {
namespace {

std::atomic<int> threads_override{0};

int core_count() {
  static const int cores = [] {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
  }();
  return cores;
}

}  // namespace

int kernel_threads() {
  const int forced = threads_override.load(std::memory_order_relaxed);
  return forced > 0 ? forced : core_count();
}

void set_threads_for_tests(int threads) {
  threads_override.store(threads > 0 ? threads : 0, std::memory_order_relaxed);
}

}  // namespace h3p::kernels::cpu
