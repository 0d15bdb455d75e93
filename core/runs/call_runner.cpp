#include "core/runs/call_runner.h"

#include <ATen/ATen.h>

#include "core/common/error.h"
#include "core/ops/op_group.h"

namespace h3p::runs {

CallRunner::CallRunner(const model::Transformer& transformer, const ops::ImplSpec& spec,
                       const ops::OpSetPtr& candidate, const at::Device& device,
                       const model::FusedCallFactory& fused_candidate)
    : transformer_(transformer),
      group_ops_(ops::resolve_group_ops(spec, candidate)),
      spec_text_(spec.text),
      check_outputs_(spec.uses_plugin()) {
  if (!device.is_cuda() || !spec.uses_candidate()) return;
  const std::string what = "impl spec '" + spec.text + "' on " + device.str() + ": ";
  if (!fused_candidate) {
    throw InputError(what +
                     "this build has no CUDA candidate (kernels/cuda needs nvcc and a "
                     "CUDA build of LibTorch: scripts/gpu-node-build.sh); run the "
                     "candidate with --device cpu");
  }
  for (ops::Group g : ops::kAllGroups) {
    if (ops::is_interim(g) && spec.choice(g).impl != ops::Impl::candidate) {
      throw InputError(what +
                       "the CUDA candidate runs whole fused blocks, so every block group "
                       "must be candidate, but '" +
                       std::string(ops::group_name(g)) +
                       "' is provider; per-group swaps run with --device cpu");
    }
  }
  fused_ = fused_candidate(transformer);
}

model::CallOutputs CallRunner::forward(const model::CallInputs& inputs,
                                       const model::CallTrace& trace) {
  if (!fused_) {
    model::CallOutputs out = transformer_.forward(inputs, group_ops_, trace);
    if (check_outputs_) check_finite(out);
    return out;
  }
  if (trace) {
    throw InputError(
        "the fused CUDA candidate has no per-stage trace; trace the candidate "
        "with --device cpu");
  }
  return fused_->forward(inputs);
}

at::Tensor CallRunner::block(std::size_t index, const at::Tensor& x,
                             const model::CallContext& context) {
  return fused_ ? fused_->block(index, x, context)
                : transformer_.block(index, x, context, group_ops_);
}

void CallRunner::check_finite(const model::CallOutputs& out) const {
  for (auto [name, t] : {std::pair{"sample", &out.sample}, std::pair{"audio_sample", &out.audio_sample}}) {
    if (t->defined() && !at::isfinite(*t).all().item<bool>()) {
      throw InputError("impl spec '" + spec_text_ + "': the call's '" + name +
                       "' holds NaN or Inf; rerun with --check-plugin to find the primitive");
    }
  }
}

std::string CallRunner::fused_description() const {
  return fused_ ? fused_->describe() : std::string();
}

}  // namespace h3p::runs
