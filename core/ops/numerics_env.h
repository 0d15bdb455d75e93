#pragma once
// The numerics environment of this process: what decides which kernels compute a run's
// arithmetic (CPU ISA and each dispatching library's choice, thread count, torch build, GPU,
// driver, CUDA libraries, the attention backend selected, the op sets' own kernel paths, the
// environment variables that steer them). Recorded in a run's manifest as
// environment.numerics and compared on resume (runs/numerics_segments.h). Field by field:
// docs/numerics-environment.md.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/ops/group_ops.h"

namespace h3p::ops {

// The attention call a run makes, for asking LibTorch which SDPA backend it would select.
struct AttentionShape {
  std::int64_t heads = 0;
  std::int64_t sequence = 0;
  std::int64_t head_dim = 0;
  at::ScalarType dtype = at::kBFloat16;
};

struct NumericsRequest {
  at::Device device = at::Device(at::kCPU);
  const GroupOps* ops = nullptr;            // the call's op sets; null: none recorded
  std::optional<AttentionShape> attention;  // null: the backend is reported as not probed
  std::string fused_call;                   // runs::CallRunner::fused_description(), or empty
  nlohmann::json plugin;                    // plugin identity JSON where a plugin runs, or null
};

// One JSON object: cpu, torch, device, cuda (on a CUDA device), attention, kernels, plugin
// (where one runs), env. Never throws for a library that cannot be asked: its field is absent
// or "unknown".
nlohmann::json numerics_environment(const NumericsRequest& request);

// The environment variables that steer kernel selection in the libraries h3parity runs on
// (BLAS, oneDNN, MKL, ATen, cuBLAS, the candidate kernels); numerics_environment records those
// that are set.
const std::vector<std::string>& numerics_variables();

}  // namespace h3p::ops
