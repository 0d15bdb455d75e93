#pragma once
// Differences between two tensors of the same shape: relative L2, max abs error, bit identity.
#include <ATen/core/Tensor.h>

#include <string>

#include "core/metrics/tensor_diff_result.h"

namespace h3p::metrics {

// `a` is measured against the reference `b`. Throws InputError naming `what` on a shape mismatch.
TensorDiff diff_tensors(const at::Tensor& a, const at::Tensor& b, const std::string& what);

}  // namespace h3p::metrics
