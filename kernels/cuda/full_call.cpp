#include "kernels/cuda/full_call.h"

#include <ATen/ATen.h>

#include <cmath>
#include <map>

#include "core/common/error.h"
#include "core/io/dtype.h"
#include "core/model/weights.h"
#include "core/ops/impl_spec.h"

namespace h3p::kernels::cuda {

namespace {

// The transformer as the fused blocks need it, or InputError naming what differs.
const model::Transformer& supported(const model::Transformer& transformer) {
  const model::TransformerConfig& c = transformer.config();
  const std::string what = "the CUDA candidate block: ";
  if (c.attention_head_dim != 128) {
    throw InputError(what + "transformer config attention_head_dim is " +
                     std::to_string(c.attention_head_dim) + "; the attention kernel needs 128");
  }
  if (transformer.weights().blocks.empty()) throw InputError(what + "the model has no blocks");
  const at::Tensor& probe = transformer.weights().blocks.front().attn.to_q;
  if (!probe.is_cuda()) {
    throw InputError(what + "the weights are on " + probe.device().str() + ", not a CUDA device");
  }
  if (probe.scalar_type() != at::kBFloat16) {
    throw InputError(what + std::string("the block weights are ") +
                     c10::toString(probe.scalar_type()) + "; it needs bf16");
  }
  return transformer;
}

// The fused block's view of a call context.
CandidateBlockContext block_context(const model::CallContext& context,
                                    const model::TransformerConfig& c) {
  return {context.temb, context.adaln_rows, context.cos, context.sin, c.norm_eps, c.qk_norm_eps};
}

}  // namespace

CandidateCall::CandidateCall(const model::Transformer& transformer, CandidateBlockOptions options)
    : transformer_(supported(transformer)),
      provider_(ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr)),
      block_(options) {
  for (const model::BlockWeights& w : transformer.weights().blocks) {
    try {
      blocks_.push_back(CandidateBlockWeights::from(w));
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("the CUDA candidate block: ") + e.what());
    }
  }
}

std::string CandidateCall::describe() const {
  return "blocks: candidate fused CUDA blocks (" + std::to_string(blocks_.size()) +
         "); embed and head: provider ops";
}

model::FusedCallFactory candidate_call_factory() {
  return [](const model::Transformer& transformer) -> std::unique_ptr<model::FusedCall> {
    return std::make_unique<CandidateCall>(transformer);
  };
}

model::CallOutputs CandidateCall::forward(const model::CallInputs& inputs) {
  const model::CallContext context = transformer_.prepare(inputs, provider_);
  const CandidateBlockContext blocks_context = block_context(context, transformer_.config());
  at::Tensor x = context.x;
  for (const CandidateBlockWeights& w : blocks_) x = block_.forward(w, x, blocks_context);
  return transformer_.head(x, context, provider_);
}

at::Tensor CandidateCall::block(std::size_t index, const at::Tensor& x,
                                const model::CallContext& context) {
  if (index >= blocks_.size()) {
    throw InputError("the CUDA candidate block: block " + std::to_string(index) +
                     " of a model with " + std::to_string(blocks_.size()));
  }
  return block_.forward(blocks_[index], x, block_context(context, transformer_.config()));
}

model::TransformerWeights random_transformer_weights(const model::TransformerConfig& config,
                                                     at::Device device, uint64_t seed) {
  at::manual_seed(seed);
  std::map<std::string, at::Tensor> tensors;
  for (const model::ParamSpec& spec : model::parameter_specs(config)) {
    const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
    at::Tensor t = at::randn(spec.shape, options);
    switch (spec.kind) {
      case model::ParamKind::weight:
        t.mul_(1.0 / std::sqrt(static_cast<double>(spec.fan_in)));
        break;
      case model::ParamKind::bias: t.mul_(0.02); break;
      case model::ParamKind::norm_weight: t.mul_(0.05).add_(1.0); break;
    }
    tensors.emplace(spec.name, t.to(spec.checkpoint_dtype == io::DType::F32 ? at::kFloat
                                                                             : at::kBFloat16));
  }
  return model::assemble_weights(config, std::move(tensors), "random weights");
}

}  // namespace h3p::kernels::cuda
