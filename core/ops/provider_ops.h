#pragma once
// The provider OpSet: PyTorch's own eager operators, called in the order and with the operand
// kinds (tensor or scalar) the diffusers code uses, so each step rounds exactly as it does.
// Works with LibTorch 1.13 (CPU; no public SDPA or rms_norm: the composite forms that 2.x
// dispatches to on CPU are written out) and LibTorch 2.x on CPU and CUDA.
#include <string>
#include <vector>

#include "core/ops/op_set.h"

namespace h3p::ops {

struct ProviderOptions {
  // SDPA backend: "" (PyTorch's default dispatch), "flash", "efficient", "math", "cudnn".
  std::string attention_backend;
  // GEMM backend: "" (at::linear), "cublaslt" (LibTorch 2.x on CUDA only).
  std::string gemm_backend;
};

// Builds the provider OpSet; throws InputError when a backend is unknown to this build.
OpSetPtr make_provider_ops(const ProviderOptions& options = {});

// nn.RMSNorm over the last dim as this LibTorch computes it (at::rms_norm on 2.4+, the CPU
// composite before): fp32 statistics, normalise, cast back, then the weight when given.
at::Tensor torch_rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight,
                          double eps);

// (S, H, D) -> (1, H, S, D), a view, as diffusers' native attention dispatch permutes q, k, v
// before SDPA (whose backend choice depends on these strides).
at::Tensor heads_first_view(const at::Tensor& shd);

// F.scaled_dot_product_attention with default scale and no mask over (B, H, S, D): PyTorch's
// default dispatch on 2.x, its math form (q and k each scaled by sqrt(scale)) on 1.13.
at::Tensor torch_sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// The provider's variants on `device`, as impl specs: each SDPA backend this build can force
// there (CUDA on LibTorch 2.x: flash, efficient, cudnn, math; CPU: math) and, on CUDA, the
// GEMMs through cuBLASLt. Their spread against the plain provider is its own noise floor.
std::vector<std::string> provider_variants(const at::Device& device);

// "LibTorch <major>.<minor>.<patch>" of this build.
std::string torch_version_string();

}  // namespace h3p::ops
