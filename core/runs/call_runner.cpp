#include "core/runs/call_runner.h"

#include <ATen/ATen.h>

#include <array>

#include "core/common/error.h"
#include "core/ops/op_group.h"
#include "core/ops/provider_ops.h"

namespace h3p::runs {

namespace {

// True when every block-interior group of `spec` runs the candidate.
bool whole_candidate_blocks(const ops::ImplSpec& spec) {
  for (ops::Group g : ops::kAllGroups) {
    if (ops::is_interim(g) && spec.choice(g).impl != ops::Impl::candidate) return false;
  }
  return true;
}

// The spec's group ops on a GPU, group by group: candidate groups run `gpu_candidate`, except
// embed and head, which have no candidate kernels on CUDA and run the provider's ops (as in the
// fused call).
ops::GroupOps gpu_group_ops(const ops::ImplSpec& spec, const ops::OpSetPtr& gpu_candidate) {
  const ops::GroupOps resolved = ops::resolve_group_ops(spec, gpu_candidate);
  const ops::GroupOps provider(ops::make_provider_ops());
  std::array<ops::OpSetPtr, ops::kGroupCount> per_group;
  for (ops::Group g : ops::kAllGroups) {
    const bool host_only = g == ops::Group::embed || g == ops::Group::head;
    per_group[static_cast<std::size_t>(g)] =
        host_only && resolved.ptr(g) == gpu_candidate ? provider.ptr(g) : resolved.ptr(g);
  }
  return ops::GroupOps(per_group);
}

}  // namespace

CallRunner::CallRunner(const model::Transformer& transformer, const ops::ImplSpec& spec,
                       const ops::OpSetPtr& candidate, const at::Device& device,
                       const model::FusedCallFactory& fused_candidate)
    : transformer_(transformer),
      group_ops_(ops::make_provider_ops()),
      spec_text_(spec.text),
      check_outputs_(spec.uses_plugin()) {
  if (!device.is_cuda() || !spec.uses_candidate()) {
    group_ops_ = ops::resolve_group_ops(spec, candidate);
    return;
  }
  // The candidate on a GPU: whole fused blocks when no block group is swapped, else the
  // candidate's CUDA kernels group by group.
  if (whole_candidate_blocks(spec) && fused_candidate) {
    group_ops_ = ops::resolve_group_ops(spec, candidate);
    fused_ = fused_candidate(transformer);
    return;
  }
  const ops::OpSetPtr gpu_candidate = candidate ? candidate->for_device(device) : nullptr;
  if (!gpu_candidate) {
    throw InputError("impl spec '" + spec.text + "' on " + device.str() +
                     ": this build has no CUDA candidate (kernels/cuda needs nvcc and a CUDA "
                     "build of LibTorch: scripts/gpu-node-build.sh); run the candidate with "
                     "--device cpu");
  }
  group_ops_ = gpu_group_ops(spec, gpu_candidate);
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
