#pragma once
// The candidate OpSet: our own kernels for every operator group (kernels/cpu, kernels/cuda).
// None of the groups is implemented yet, so make_candidate_ops() returns null and any impl
// spec that names the candidate is refused with a clear error.
#include "core/ops/op_set.h"

namespace h3p::kernels {

// The candidate OpSet, or null while this build carries none.
ops::OpSetPtr make_candidate_ops();

}  // namespace h3p::kernels
