#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {

int kernel_threads() {
  static const int threads = [] {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
  }();
  return threads;
}

}  // namespace h3p::kernels::cpu
