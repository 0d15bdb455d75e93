#pragma once
// GroupOps: the OpSet each operator group of one call runs, resolved from an impl spec.
#include <array>

#include "core/ops/impl_spec.h"
#include "core/ops/op_group.h"
#include "core/ops/op_set.h"

namespace h3p::ops {

class GroupOps {
 public:
  // Every group runs `ops`.
  explicit GroupOps(OpSetPtr ops);
  GroupOps(std::array<OpSetPtr, kGroupCount> per_group) : ops_(std::move(per_group)) {}

  const OpSet& operator()(Group g) const { return *ops_[static_cast<std::size_t>(g)]; }
  const OpSetPtr& ptr(Group g) const { return ops_[static_cast<std::size_t>(g)]; }

 private:
  std::array<OpSetPtr, kGroupCount> ops_;
};

// Resolves a spec: provider groups get the provider OpSet with their backend; candidate groups
// get `candidate`; plugin groups load the spec's plugin (once per process) and run its tables,
// and the groups it does not provide take the spec's `rest` choice. Throws InputError when the
// spec needs a candidate and `candidate` is null, when the plugin cannot be loaded, or when it
// lacks a group the spec gives it and no `rest` is named (listing every such group).
GroupOps resolve_group_ops(const ImplSpec& spec, const OpSetPtr& candidate);

}  // namespace h3p::ops
