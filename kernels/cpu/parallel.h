#pragma once
// Static work splitting for the CPU kernels. Every output element is produced by exactly one
// worker in a fixed order, so results are the same bytes at any thread count.
#include <algorithm>
#include <cstdint>
#include <thread>

#include <omp.h>

namespace h3p::kernels::cpu {

// Workers the kernels use now: the count forced by set_threads_for_tests(), else the core
// count (1 when unknown). Every kernel splits its work over this many, elementwise and gemm alike.
int kernel_threads();

// Forces the kernels' worker count (>= 1) for tests, benchmarks and `--threads`; 0 restores the
// core count. Not for use while kernels run on other threads.
void set_threads_for_tests(int threads);

// Calls body(begin, end) over [0, n) split into contiguous chunks of at least `grain` items,
// in parallel. Chunk boundaries depend on n and the thread count only; the body must write
// disjoint outputs for disjoint ranges.
template <typename Body>
void parallel_for(std::int64_t n, std::int64_t grain, Body&& body) {
  if (n <= 0) return;
  const std::int64_t chunks = std::max<std::int64_t>(
      1, std::min<std::int64_t>(kernel_threads(), (n + grain - 1) / std::max<std::int64_t>(grain, 1)));
  if (chunks == 1) {
    body(std::int64_t{0}, n);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(chunks))
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t begin = n * c / chunks;
    const std::int64_t end = n * (c + 1) / chunks;
    if (begin < end) body(begin, end);
  }
}

}  // namespace h3p::kernels::cpu
