#pragma once
// What computes a transformer call for an impl spec on a device: the op-by-op graph with the
// spec's group ops; for the candidate on a GPU, the fused CUDA blocks when every block group
// runs the candidate, else the candidate's CUDA kernels group by group (OpSet::for_device).
// Embed and head have no candidate kernels on CUDA: they run on provider ops there.
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "core/model/fused_call.h"
#include "core/model/transformer.h"
#include "core/ops/group_ops.h"
#include "core/ops/impl_spec.h"
#include "core/ops/op_set.h"

namespace h3p::runs {

class CallRunner {
 public:
  // Throws InputError before anything runs when the candidate is asked for on CUDA and the
  // binary has no CUDA candidate (neither `fused_candidate` nor candidate->for_device).
  CallRunner(const model::Transformer& transformer, const ops::ImplSpec& spec,
             const ops::OpSetPtr& candidate, const at::Device& device,
             const model::FusedCallFactory& fused_candidate);

  // `trace` receives the graph's intermediate stages; the fused call has none (InputError).
  model::CallOutputs forward(const model::CallInputs& inputs, const model::CallTrace& trace = {});
  // Block `index` alone over `x` with a context from the transformer's prepare.
  at::Tensor block(std::size_t index, const at::Tensor& x, const model::CallContext& context);
  // For manifests: what runs fused and what stays on provider ops; empty for the op-by-op
  // graph (the group op sets' numerics_path() then says which kernels ran).
  std::string fused_description() const;
  // The op set of every group of the op-by-op graph (also what the fused call's embed and
  // head run).
  const ops::GroupOps& group_ops() const { return group_ops_; }

 private:
  // Refuses outputs holding NaN or Inf (plugin specs: a plugin's non-finite output on CUDA is
  // caught here rather than by a synchronising check after every primitive).
  void check_finite(const model::CallOutputs& out) const;

  const model::Transformer& transformer_;
  ops::GroupOps group_ops_;
  std::string spec_text_;
  bool check_outputs_ = false;
  std::unique_ptr<model::FusedCall> fused_;
};

}  // namespace h3p::runs
