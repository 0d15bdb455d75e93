#include "core/ops/group_ops.h"

#include <map>

#include "core/common/error.h"
#include "core/ops/provider_ops.h"

namespace h3p::ops {

GroupOps::GroupOps(OpSetPtr ops) {
  for (auto& slot : ops_) slot = ops;
}

GroupOps resolve_group_ops(const ImplSpec& spec, const OpSetPtr& candidate) {
  std::array<OpSetPtr, kGroupCount> per_group;
  std::map<std::string, OpSetPtr> providers;  // one provider OpSet per backend combination
  for (Group g : kAllGroups) {
    const GroupChoice& c = spec.choice(g);
    OpSetPtr& slot = per_group[static_cast<std::size_t>(g)];
    if (c.impl == Impl::candidate) {
      if (!candidate) {
        throw InputError("impl spec '" + spec.text + "': group '" + std::string(group_name(g)) +
                         "' needs the candidate OpSet, which this binary does not provide");
      }
      slot = candidate;
      continue;
    }
    ProviderOptions options;
    if (g == Group::attention) options.attention_backend = c.backend;
    if (g == Group::gemm) options.gemm_backend = c.backend;
    const std::string key = options.attention_backend + "|" + options.gemm_backend;
    auto it = providers.find(key);
    if (it == providers.end()) it = providers.emplace(key, make_provider_ops(options)).first;
    slot = it->second;
  }
  return GroupOps(per_group);
}

}  // namespace h3p::ops
