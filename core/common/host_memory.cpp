#include "core/common/host_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace h3p {

void keep_freed_host_memory() {
#if defined(__GLIBC__)
  constexpr int kGiB = 1 << 30;
  // Both settings also turn off glibc's dynamic threshold, which would otherwise move it back.
  mallopt(M_MMAP_THRESHOLD, kGiB);
  mallopt(M_TRIM_THRESHOLD, kGiB);
#endif
}

}  // namespace h3p
