#pragma once
// One whole MiniMax-H3 transformer call on the GPU with the candidate's fused blocks: the
// provider's prepare (embeddings, token refiner, timestep embedding, RoPE tables), then every
// block through CandidateBlock, then the provider's output head. Prepare and head are under
// 1 % of a call at the released widths; the blocks are the candidate's.
#include <string>
#include <vector>

#include "core/model/fused_call.h"
#include "core/model/transformer.h"
#include "core/ops/group_ops.h"
#include "kernels/cuda/candidate_block.h"

namespace h3p::kernels::cuda {

class CandidateCall final : public model::FusedCall {
 public:
  // Stacks every block's q/k/v weights once. Throws InputError naming the field unless the
  // weights are bf16 on a CUDA device and attention_head_dim is 128 (the attention kernel's).
  CandidateCall(const model::Transformer& transformer, CandidateBlockOptions options = {});

  // The call's outputs, as Transformer::forward returns them.
  model::CallOutputs forward(const model::CallInputs& inputs) override;
  at::Tensor block(std::size_t index, const at::Tensor& x,
                   const model::CallContext& context) override;
  std::string describe() const override;

 private:
  const model::Transformer& transformer_;
  ops::GroupOps provider_;
  std::vector<CandidateBlockWeights> blocks_;
  CandidateBlock block_;
};

// Random weights for `config` on `device` in the released checkpoint dtypes, drawn as
// init-model draws them (weights N(0, 1/fan_in), biases N(0, 0.02²), norms 1 + N(0, 0.05²))
// but on the device itself (seeded, reproducible per device kind).
// The factory generation uses for `--impl candidate` on a GPU (default options).
model::FusedCallFactory candidate_call_factory();

model::TransformerWeights random_transformer_weights(const model::TransformerConfig& config,
                                                     at::Device device, uint64_t seed);

}  // namespace h3p::kernels::cuda
