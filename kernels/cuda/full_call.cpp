#include "kernels/cuda/full_call.h"

#include <ATen/ATen.h>

#include <cmath>
#include <map>

#include "core/io/dtype.h"
#include "core/model/weights.h"
#include "core/ops/impl_spec.h"

namespace h3p::kernels::cuda {

CandidateCall::CandidateCall(const model::Transformer& transformer, CandidateBlockOptions options)
    : transformer_(transformer),
      provider_(ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr)),
      block_(options) {
  for (const model::BlockWeights& w : transformer.weights().blocks) {
    blocks_.push_back(CandidateBlockWeights::from(w));
  }
}

model::CallOutputs CandidateCall::forward(const model::CallInputs& inputs) {
  const model::CallContext context = transformer_.prepare(inputs, provider_);
  const model::TransformerConfig& c = transformer_.config();
  const CandidateBlockContext block_context{context.temb, context.adaln_rows, context.cos,
                                            context.sin, c.norm_eps, c.qk_norm_eps};
  at::Tensor x = context.x;
  for (const CandidateBlockWeights& w : blocks_) x = block_.forward(w, x, block_context);
  return transformer_.head(x, context, provider_);
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
