#include "app/cli/candidate.h"

#include "kernels/candidate_ops.h"
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

}  // namespace h3p::cli
