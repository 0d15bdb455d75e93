#pragma once
// PluginOps: the OpSet of one operator group run by a loaded plugin. Each primitive checks its
// operands against the provider's contract (plugin_contract.h), passes them as compact
// row-major DLTensors, allocates the output with the provider's shape and dtype, and turns a
// plugin's error status into an InputError naming the plugin, group and primitive. A CPU
// output holding NaN or Inf is refused; on CUDA that check runs in check mode (the call
// runner checks every call's outputs on every device).
#include <memory>

#include "core/ops/op_group.h"
#include "core/ops/op_set.h"
#include "core/ops/plugin/plugin_library.h"

namespace h3p::ops::plugin {

// An OpSet named "plugin[<name>]" whose primitives run `group`'s table of `plugin`.
OpSetPtr make_plugin_ops(std::shared_ptr<const LoadedPlugin> plugin, Group group);

}  // namespace h3p::ops::plugin
