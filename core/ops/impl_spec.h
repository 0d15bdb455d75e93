#pragma once
// Impl specs: which implementation runs each operator group, and for the provider which
// backend. Grammar (ARCHITECTURE.md, docs/plugins.md):
//   spec     := base [":" override ("," override)*]
//   base     := "provider" | "candidate" | "plugin:" REF | "python:" REF
//               REF: a plugin library path or a name looked up on H3P_PLUGIN_PATH (plugin), a
//               .py file or a module name (python); it must not contain ':' or ','
//   override := target "=" value
//   target   := a group name | "interim" (all block-interior groups) | "all"
//               | "rest" (plugin bases only: the groups the plugin does not provide)
//   value    := "provider" | "candidate" | "plugin" (plugin bases only) | a provider backend
//               of that group (attention: flash|efficient|math|cudnn; gemm: cublaslt), which
//               implies provider
// Overrides apply left to right, so `candidate:all=provider,attention=candidate` is valid; a
// group named twice explicitly is refused. The text is recorded verbatim in manifests. Which
// groups a plugin provides is known only once it is loaded (group_ops.h resolves `rest`).
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "core/ops/op_group.h"

namespace h3p::ops {

enum class Impl { provider, candidate, plugin };

// The plugin of a spec with a plugin base: a C library, or a Python file or module run through
// the embedded-CPython bridge.
enum class PluginKind { none, library, python };

struct PluginRef {
  PluginKind kind = PluginKind::none;
  std::string ref;  // as written after "plugin:" / "python:"
  bool operator==(const PluginRef&) const = default;
};

// What runs one group: the implementation and, for the provider, a backend ("" = default).
struct GroupChoice {
  Impl impl = Impl::provider;
  std::string backend;
  bool operator==(const GroupChoice&) const = default;
};

struct ImplSpec {
  std::string text;  // as given
  Impl base = Impl::provider;
  PluginRef plugin;  // kind none unless base is plugin
  std::array<GroupChoice, kGroupCount> groups{};
  // For plugin bases: what runs a group the plugin does not provide (`rest=...`); unset means
  // such a group is refused when the plugin is loaded.
  std::optional<GroupChoice> rest;

  // Parses and validates; throws InputError "impl spec '<text>': <what>".
  static ImplSpec parse(std::string_view text);
  const GroupChoice& choice(Group g) const { return groups[static_cast<std::size_t>(g)]; }
  // True when any group runs the candidate.
  bool uses_candidate() const;
  // True when any group may run the plugin.
  bool uses_plugin() const;
  // True when every group runs the provider with its default backend.
  bool is_plain_provider() const;
  // One line per group ("attention=provider[flash]"), for manifests and --help output.
  std::string describe() const;
  // This spec's text with `override_text` ("attention=provider") applied last.
  std::string with_override(std::string_view override_text) const;
};

}  // namespace h3p::ops
