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

// Calls body(worker, workers) on each of `workers` = min(max_workers, team size) threads of one
// OpenMP team of kernel_threads() threads; the rest of the team idles. The team size stays the
// same from call to call on purpose: libgomp ends the surplus threads when a team is smaller
// than the last one and creates new threads for the next larger team (thread-local scratch, AMX
// state and all), which at 16 threads cost more than the kernels' work. Inline when one worker.
template <typename Body>
void run_workers(std::int64_t max_workers, Body&& body) {
  const int team = kernel_threads();
  if (team <= 1 || max_workers <= 1) {
    body(std::int64_t{0}, std::int64_t{1});
    return;
  }
#pragma omp parallel num_threads(team)
  {
    const std::int64_t workers = std::min<std::int64_t>(omp_get_num_threads(), max_workers);
    const std::int64_t worker = omp_get_thread_num();
    if (worker < workers) body(worker, workers);
  }
}

// Calls body(begin, end) once per worker over contiguous static chunks of [0, n), with at most
// max_workers workers. Chunk boundaries depend on n and the worker count only; the body must
// write disjoint outputs for disjoint ranges.
template <typename Body>
void run_ranges(std::int64_t n, std::int64_t max_workers, Body&& body) {
  if (n <= 0) return;
  run_workers(max_workers, [&](std::int64_t worker, std::int64_t workers) {
    const std::int64_t begin = n * worker / workers;
    const std::int64_t end = n * (worker + 1) / workers;
    if (begin < end) body(begin, end);
  });
}

// Calls body(begin, end) over [0, n) split into contiguous chunks of at least `grain` items,
// in parallel (run_ranges' contract).
template <typename Body>
void parallel_for(std::int64_t n, std::int64_t grain, Body&& body) {
  run_ranges(n, (n + grain - 1) / std::max<std::int64_t>(grain, 1), body);
}

}  // namespace h3p::kernels::cpu
