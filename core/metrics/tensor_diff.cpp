#include "core/metrics/tensor_diff.h"

#include <ATen/ATen.h>

#include <cstring>
#include <limits>

#include "core/common/error.h"

namespace h3p::metrics {

TensorDiff diff_tensors(const at::Tensor& a, const at::Tensor& b, const std::string& what) {
  if (a.sizes() != b.sizes()) {
    throw InputError(what + ": shapes differ: " + c10::str(a.sizes()) + " vs " +
                     c10::str(b.sizes()));
  }
  TensorDiff d;
  at::Tensor ca = a.to(at::kCPU).contiguous();
  at::Tensor cb = b.to(at::kCPU).contiguous();
  d.bitwise_equal = ca.scalar_type() == cb.scalar_type() &&
                    (ca.numel() == 0 ||
                     std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0);
  at::Tensor da = ca.to(at::kDouble), db = cb.to(at::kDouble);
  d.finite = at::isfinite(da).all().item<bool>() && at::isfinite(db).all().item<bool>();
  if (ca.numel() == 0) return d;
  const double num = at::sub(da, db).norm().item<double>();
  const double den = db.norm().item<double>();
  d.rel_l2 = den > 0 ? num / den : (num > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  d.max_abs = at::sub(da, db).abs().max().item<double>();
  return d;
}

}  // namespace h3p::metrics
