#pragma once
// The candidate implementations this binary links: the per-op OpSet (h3p_kernels) and, on a
// build with a CUDA LibTorch and nvcc, the fused CUDA blocks and the CUDA kernels group by
// group (h3p_cuda_block), which the OpSet hands out through for_device().
#include "core/model/fused_call.h"
#include "core/ops/op_set.h"

namespace h3p::cli {

ops::OpSetPtr candidate_ops();

// The fused CUDA candidate call's factory; empty when the binary has none.
model::FusedCallFactory fused_candidate_call();

// CPU threads for LibTorch (the provider) and the candidate's CPU kernels together, so that a
// benchmark compares both at the same count; 0: one per core (the default).
void set_cpu_threads(int threads);

// Worker threads the candidate's CPU kernels use now.
int candidate_cpu_threads();

}  // namespace h3p::cli
