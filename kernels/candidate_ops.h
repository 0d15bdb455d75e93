#pragma once
// The candidate OpSet: every OpSet primitive runs on our own kernels (kernels/cpu). ATen is
// used only to check arguments and to allocate results; no ATen arithmetic runs. CPU tensors
// only: CUDA tensors are refused with InputError (on a GPU the candidate runs as the fused
// blocks of kernels/cuda/full_call.h, or group by group through for_device()).
#include "core/ops/op_set.h"

namespace h3p::kernels {

// The candidate OpSet (name "candidate"). Thread-safe to share; each call allocates its result.
// `on_cuda`, where the binary has one, is what for_device() returns for a CUDA device: the
// candidate's CUDA kernels group by group (kernels/cuda/group_ops.h).
ops::OpSetPtr make_candidate_ops(ops::OpSetPtr on_cuda = nullptr);

}  // namespace h3p::kernels
