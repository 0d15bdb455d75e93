#include "core/ops/group_ops.h"

#include <map>

#include "core/common/error.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/ops/plugin/plugin_ops.h"
#include "core/ops/provider_ops.h"

namespace h3p::ops {

GroupOps::GroupOps(OpSetPtr ops) {
  for (auto& slot : ops_) slot = ops;
}

GroupOps resolve_group_ops(const ImplSpec& spec, const OpSetPtr& candidate) {
  std::array<OpSetPtr, kGroupCount> per_group;
  std::map<std::string, OpSetPtr> providers;  // one provider OpSet per backend combination
  // The plugin, loaded once, and what its groups resolve to (`rest` for those it lacks).
  std::shared_ptr<const plugin::LoadedPlugin> loaded;
  if (spec.uses_plugin()) loaded = plugin::load_plugin(spec.plugin);
  std::string missing;
  for (Group g : kAllGroups) {
    GroupChoice c = spec.choice(g);
    OpSetPtr& slot = per_group[static_cast<std::size_t>(g)];
    if (c.impl == Impl::plugin) {
      if (loaded->provides(g)) {
        slot = plugin::make_plugin_ops(loaded, g);
        continue;
      }
      if (!spec.rest) {
        missing += " " + std::string(group_name(g));
        continue;
      }
      c = *spec.rest;
    }
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
  if (!missing.empty()) {
    throw InputError("impl spec '" + spec.text + "': " + loaded->label() +
                     " does not provide these groups:" + missing +
                     "; say where they come from (for example '" + spec.text +
                     (spec.text.find('=') == std::string::npos ? ":" : ",") +
                     "rest=provider') or swap them one by one");
  }
  return GroupOps(per_group);
}

}  // namespace h3p::ops
