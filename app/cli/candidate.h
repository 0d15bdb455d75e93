#pragma once
// The candidate OpSet this binary links (h3p_kernels), or null when none is built.
#include "core/ops/op_set.h"

namespace h3p::cli {

ops::OpSetPtr candidate_ops();

}  // namespace h3p::cli
