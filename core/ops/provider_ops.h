#pragma once
// The provider OpSet: PyTorch's own eager operators, called in the order and with the operand
// kinds (tensor or scalar) the diffusers code uses, so each step rounds exactly as it does.
// Works with LibTorch 1.13 (CPU; no public SDPA or rms_norm: the composite forms that 2.x
// dispatches to on CPU are written out) and LibTorch 2.x on CPU and CUDA.
#include <string>

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

// "LibTorch <major>.<minor>.<patch>" of this build.
std::string torch_version_string();

}  // namespace h3p::ops
