#pragma once
// The candidate OpSet: every OpSet primitive runs on our own kernels (kernels/cpu). ATen is
// used only to check arguments and to allocate results; no ATen arithmetic runs. CPU tensors
// only: CUDA tensors are refused with InputError (on a GPU the candidate runs as the fused
// blocks of kernels/cuda/full_call.h).
#include "core/ops/op_set.h"

namespace h3p::kernels {

// The candidate OpSet (name "candidate"). Thread-safe to share; each call allocates its result.
ops::OpSetPtr make_candidate_ops();

}  // namespace h3p::kernels
