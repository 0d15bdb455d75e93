#pragma once
// The result of comparing two tensors (tensor_diff.h); torch-free so that reports can carry it.

namespace h3p::metrics {

struct TensorDiff {
  double rel_l2 = 0;   // ||a - b||₂ / ||b||₂ in fp64 (0 when both are zero; inf when only b is)
  double max_abs = 0;  // max |a - b| in fp64
  bool bitwise_equal = false;  // same dtype, shape and bytes
  bool finite = true;          // neither a nor b holds NaN or Inf
};

}  // namespace h3p::metrics
