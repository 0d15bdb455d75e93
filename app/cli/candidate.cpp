#include "app/cli/candidate.h"

#include <ATen/Parallel.h>

#include "core/ops/device.h"
#include "kernels/candidate_ops.h"
#include "kernels/cpu/gemm_dispatch.h"
#ifdef H3P_HAVE_CUDA_BLOCK
#include "kernels/cuda/full_call.h"
#include "kernels/cuda/group_ops.h"
#endif

namespace h3p::cli {

ops::OpSetPtr candidate_ops() {
#ifdef H3P_HAVE_CUDA_BLOCK
  return kernels::make_candidate_ops(kernels::cuda::make_candidate_group_ops());
#else
  return kernels::make_candidate_ops();
#endif
}

model::FusedCallFactory fused_candidate_call() {
#ifdef H3P_HAVE_CUDA_BLOCK
  return kernels::cuda::candidate_call_factory();
#else
  return {};
#endif
}

void set_cpu_threads(int threads) {
  if (threads > 0) {
    at::set_num_threads(threads);
  } else {
    ops::configure_threads();
  }
  kernels::cpu::set_threads_for_tests(threads);
}

int candidate_cpu_threads() { return kernels::cpu::kernel_threads(); }

}  // namespace h3p::cli
