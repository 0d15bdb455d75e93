#pragma once
// OpSet: the operator primitives the transformer graph calls. The graph never computes
// anything itself beyond structural indexing; every arithmetic step goes through the OpSet
// chosen for its call site's group. The provider OpSet (provider_ops.h) reproduces PyTorch's
// arithmetic op by op; a candidate OpSet (h3p_kernels) reimplements the same contracts.
//
// Tensor conventions: rows-first 2-D activations (S, C); attention tensors (S, H, D). Every
// method returns a new tensor in the dtype PyTorch's eager op would produce, rounding after
// each elementwise step exactly as the diffusers code does.
#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>

namespace h3p::ops {

class OpSet {
 public:
  virtual ~OpSet() = default;

  // Short name recorded in manifests ("provider", "provider[attention=math]", "candidate").
  virtual std::string name() const = 0;

  // The kernel path this op set takes in this process, where it chooses one itself (the
  // candidate's ISA, for instance); recorded in the numerics environment (numerics_env.h).
  // Empty when its kernels are chosen by the libraries numerics_env.h already records.
  virtual std::string numerics_path() const { return {}; }

  // The op set that runs this implementation's kernels for tensors on `device`, where it keeps
  // separate kernels per device (the built-in candidate: kernels/cpu, or kernels/cuda group
  // by group); null when this op set serves `device` itself or has no kernels for it.
  virtual std::shared_ptr<const OpSet> for_device(const at::Device& device) const {
    (void)device;
    return nullptr;
  }

  // y = x·wᵀ (+ b) in x's dtype (x, w, b share a dtype), fp32 accumulation: nn.Linear.
  virtual at::Tensor linear(const at::Tensor& x, const at::Tensor& w,
                            const std::optional<at::Tensor>& b) const = 0;
  // softmax(q·kᵀ/sqrt(D))·v over (S, H, D) inputs, no mask; returns (S, H, D).
  virtual at::Tensor attention(const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& v) const = 0;
  // h = (S, 2F) → value·silu(gate), value the first half (diffusers SwiGLU).
  virtual at::Tensor swiglu(const at::Tensor& h) const = 0;
  // silu(x) in x's dtype.
  virtual at::Tensor silu(const at::Tensor& x) const = 0;
  // RMSNorm over the last dim with weight, as nn.RMSNorm computes it (fp32 statistics).
  virtual at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight,
                              double eps) const = 0;
  // rms_norm(x)·(1 + scale) + shift with per-row scale and shift (S, C) in x's dtype.
  virtual at::Tensor norm_modulate(const at::Tensor& x, const at::Tensor& weight, double eps,
                                   const at::Tensor& scale, const at::Tensor& shift) const = 0;
  // table.index_select(0, rows): the per-row AdaLN gather.
  virtual at::Tensor gather_rows(const at::Tensor& table, const at::Tensor& rows) const = 0;
  // Rotate-half RoPE over the first cos.size(-1) channels of every head of x (S, H, D);
  // cos/sin (S, R) fp32 are cast to x's dtype first; the rest passes through.
  virtual at::Tensor rope(const at::Tensor& x, const at::Tensor& cos,
                          const at::Tensor& sin) const = 0;
  // x + gate·y with per-row gate (S, C).
  virtual at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& gate,
                                    const at::Tensor& y) const = 0;
  // x + y (the token refiner's ungated residual).
  virtual at::Tensor add(const at::Tensor& x, const at::Tensor& y) const = 0;
  // Sinusoidal timestep embedding (n,) fp32 → (n, dim): cos first, max period 10000, shift 0.
  virtual at::Tensor timestep_sinusoid(const at::Tensor& t, int64_t dim) const = 0;
};

using OpSetPtr = std::shared_ptr<const OpSet>;

}  // namespace h3p::ops
