#include "kernels/cpu/gemm_dispatch.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "core/common/error.h"
#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

// -1: no override; otherwise the forced Isa's value.
std::atomic<int> isa_override{-1};
std::atomic<int> threads_override{0};

Isa lower_to_supported(Isa isa) {
  const Isa best = best_supported_isa();
  return static_cast<int>(isa) > static_cast<int>(best) ? best : isa;
}

Isa isa_from_environment() {
  const char* value = std::getenv("H3P_KERNELS_ISA");
  if (value == nullptr || *value == '\0') return best_supported_isa();
  const std::string v = value;
  if (v == "scalar") return Isa::scalar;
  if (v == "avx2") return lower_to_supported(Isa::avx2);
  if (v == "avx512") return lower_to_supported(Isa::avx512);
  throw InputError("environment: H3P_KERNELS_ISA: unknown value '" + v +
                   "' (scalar, avx2, avx512)");
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "unknown";
}

Isa best_supported_isa() {
  static const Isa best = [] {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
      return Isa::avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
#endif
    return Isa::scalar;
  }();
  return best;
}

Isa active_isa() {
  const int forced = isa_override.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Isa>(forced);
  static const Isa from_environment = isa_from_environment();
  return from_environment;
}

void set_isa_for_tests(std::optional<Isa> isa) {
  isa_override.store(isa ? static_cast<int>(lower_to_supported(*isa)) : -1,
                     std::memory_order_relaxed);
}

void set_threads_for_tests(int threads) {
  threads_override.store(threads > 0 ? threads : 0, std::memory_order_relaxed);
}

int gemm_threads() {
  const int forced = threads_override.load(std::memory_order_relaxed);
  return forced > 0 ? forced : kernel_threads();
}

}  // namespace h3p::kernels::cpu
