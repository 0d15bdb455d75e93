#pragma once
// A whole transformer call computed outside the op-by-op graph: the candidate's fused CUDA
// blocks (kernels/cuda/full_call.h). core/runs/call_runner.h uses one where the impl spec runs
// every block group on the candidate on a GPU and the binary was built with one.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/model/transformer.h"

namespace h3p::model {

class FusedCall {
 public:
  virtual ~FusedCall() = default;
  // The call's outputs, as Transformer::forward returns them (on the weights' device).
  virtual CallOutputs forward(const CallInputs& inputs) = 0;
  // Block `index` alone over the packed stream `x`, with a context the transformer prepared
  // (the gate measures blocks in isolation); on the weights' device.
  virtual at::Tensor block(std::size_t index, const at::Tensor& x,
                           const CallContext& context) = 0;
  // One line for manifests: what runs fused and what stays on the graph's provider ops.
  virtual std::string describe() const = 0;
};

// Builds the fused call over a loaded transformer (kept by reference); throws InputError
// naming the config field when the transformer's shapes or dtypes are not supported.
using FusedCallFactory = std::function<std::unique_ptr<FusedCall>(const Transformer&)>;

}  // namespace h3p::model
