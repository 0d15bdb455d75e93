#pragma once
// PluginOps: the OpSet of one operator group run by a loaded plugin. Each primitive checks its
// operands against the provider's contract (plugin_contract.h), passes them as compact
// row-major DLTensors, allocates the output with the provider's shape and dtype, and turns a
// plugin's error status into an InputError naming the plugin, group and primitive. NaN or Inf
// in a primitive's output is refused in check mode (--check-plugin); otherwise the call runner
// refuses a call whose outputs hold any, which costs one pass per call instead of one per
// primitive (and no synchronisation per primitive on a GPU).
#include <memory>

#include "core/ops/op_group.h"
#include "core/ops/op_set.h"
#include "core/ops/plugin/plugin_library.h"

namespace h3p::ops::plugin {

// An OpSet named "plugin[<name>]" whose primitives run `group`'s table of `plugin`.
OpSetPtr make_plugin_ops(std::shared_ptr<const LoadedPlugin> plugin, Group group);

}  // namespace h3p::ops::plugin
