#pragma once
// Instruction-set and thread-count selection shared by the gemm and attention kernels. The ISA
// is chosen once at runtime: the best the CPU supports, lowered by the H3P_KERNELS_ISA
// environment variable (scalar | avx2 | avx512 | avx512bf16 | amx) or by set_isa_for_tests().
// Work is split over fixed, globally aligned tiles, so the thread count never changes any result.
#include <cstdint>
#include <optional>

#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {

// Code paths of the compute-bound kernels, lowest to highest.
enum class Isa {
  scalar,  // portable C++, always compiled and tested
  avx2,    // AVX2 + FMA, 8-lane fp32
  avx512,  // AVX-512 F/BW/VL + FMA, 16-lane fp32
  avx512bf16,  // avx512 plus AVX512-BF16 dot products (vdpbf16ps) for the bf16 gemm
  amx,         // avx512 plus AMX-BF16 tiles for the bf16 gemm (OS permission granted)
};

// "scalar", "avx2", "avx512", "avx512bf16" or "amx".
const char* isa_name(Isa isa);

// The highest path this CPU can run.
Isa best_supported_isa();

// The path the kernels take now: the test override if set, else H3P_KERNELS_ISA (read once;
// an unknown value throws InputError, a value above the CPU's support is lowered to it), else
// best_supported_isa().
Isa active_isa();

// Forces a path (lowered to what the CPU supports) for tests and benchmarks; nullopt restores
// the default. Not for use while kernels run on other threads.
void set_isa_for_tests(std::optional<Isa> isa);

// Calls body(item) once for every item in [0, items), split in contiguous static chunks over
// at most kernel_threads() workers. body must write disjoint outputs for distinct items.
template <typename Body>
void run_items(std::int64_t items, Body&& body) {
  run_ranges(items, items, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
  });
}

// Calls body(begin, end) once per worker over contiguous static chunks of [0, items), for
// work that needs per-thread setup; same split and contract as run_items.
template <typename Body>
void run_chunks(std::int64_t items, Body&& body) {
  run_ranges(items, items, body);
}

}  // namespace h3p::kernels::cpu
