#include "kernels/cpu/gemm_dispatch.h"

#include <atomic>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/common/error.h"
#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

// -1: no override; otherwise the forced Isa's value.
std::atomic<int> isa_override{-1};

#if defined(__x86_64__) && defined(__linux__)
// AMX needs CPUID.7.0:EDX AMX-BF16 (bit 22) and AMX-TILE (bit 24), and the kernel's permission
// for this process to use tile data (arch_prctl ARCH_REQ_XCOMP_PERM, Linux >= 5.16).
bool amx_available() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  if (((d >> 22) & 1u) == 0 || ((d >> 24) & 1u) == 0) return false;
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#else
bool amx_available() { return false; }
#endif

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
  if (v == "avx512bf16") return lower_to_supported(Isa::avx512bf16);
  if (v == "amx") return lower_to_supported(Isa::amx);
  throw InputError("environment: H3P_KERNELS_ISA: unknown value '" + v +
                   "' (scalar, avx2, avx512, avx512bf16, amx)");
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512bf16: return "avx512bf16";
    case Isa::amx: return "amx";
  }
  return "unknown";
}

Isa best_supported_isa() {
  static const Isa best = [] {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
      if (amx_available()) return Isa::amx;
      return __builtin_cpu_supports("avx512bf16") ? Isa::avx512bf16 : Isa::avx512;
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

}  // namespace h3p::kernels::cpu
