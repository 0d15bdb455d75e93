#pragma once
// Differences between two tensors of the same shape: relative L2, max abs error, bit identity.
#include <ATen/core/Tensor.h>

#include <string>

namespace h3p::metrics {

struct TensorDiff {
  double rel_l2 = 0;   // ||a - b||₂ / ||b||₂ in fp64 (0 when both are zero; inf when only b is)
  double max_abs = 0;  // max |a - b| in fp64
  bool bitwise_equal = false;  // same dtype, shape and bytes
  bool finite = true;          // neither a nor b holds NaN or Inf
};

// `a` is measured against the reference `b`. Throws InputError naming `what` on a shape mismatch.
TensorDiff diff_tensors(const at::Tensor& a, const at::Tensor& b, const std::string& what);

}  // namespace h3p::metrics
