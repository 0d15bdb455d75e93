#pragma once
// Growable 64-byte aligned fp32 scratch for the gemm and attention kernels; keep one per thread
// (thread_local) and reuse it across calls so steady-state calls do not allocate.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace h3p::kernels::cpu {

class AlignedScratch {
 public:
  // At least `floats` floats, 64-byte aligned; valid until the next get() on this object.
  float* get(std::size_t floats) {
    if (floats > size_ || !data_) {
      const std::size_t bytes = ((std::max<std::size_t>(floats, 1) * sizeof(float) + 63) / 64) * 64;
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data_) throw std::bad_alloc();
      size_ = bytes / sizeof(float);
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace h3p::kernels::cpu
