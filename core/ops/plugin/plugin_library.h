#pragma once
// A loaded candidate plugin (include/h3parity/candidate_plugin.h): the library opened once per
// process, its table validated, its context created once and destroyed at process exit, and
// the identity a run records (path, SHA-256, name, version, source files).
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/ops/impl_spec.h"
#include "core/ops/op_group.h"
#include <h3parity/candidate_plugin.h>

namespace h3p::ops::plugin {

// What a run is bound to when a plugin computes some of its groups. Digests: lower-case hex.
struct PluginIdentity {
  std::string kind;             // "library" or "python"
  std::string library;          // absolute path of the shared library loaded
  std::string library_sha256;   // of that file's bytes
  std::string argument;         // python: the absolute .py file or the module name; else ""
  std::string name, version;    // as the plugin reports them
  std::string abi_version;      // "major.minor" the plugin was built with
  std::map<std::string, std::string> sources;  // absolute path -> sha256 (source_files())
  std::vector<std::string> groups;             // the groups it provides, in group order

  bool operator==(const PluginIdentity&) const = default;
};

nlohmann::json plugin_identity_to_json(const PluginIdentity& identity);
// Inverse; throws InputError "<context>: field 'plugin.<key>': ..." on a malformed object.
PluginIdentity plugin_identity_from_json(const nlohmann::json& json, const std::string& context);
// "" when equal, else the first difference in words ("library_sha256: 1f.. -> 9a..").
std::string first_identity_difference(const PluginIdentity& recorded,
                                      const PluginIdentity& current);

// True when both name the same bytes: library digest, the source files' digests (their paths
// may differ), name, version, ABI version and groups.
bool same_plugin_bytes(const PluginIdentity& a, const PluginIdentity& b);

class LoadedPlugin {
 public:
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;
  ~LoadedPlugin();  // destroys the context (at process exit: the registry holds every plugin)

  // The group's primitive table (a copy sized to this build's H3pOps), null if not provided.
  const H3pOps* ops(Group group) const;
  bool provides(Group group) const { return ops(group) != nullptr; }
  void* context() const { return context_; }
  bool thread_safe() const { return (flags_ & H3P_PLUGIN_THREAD_SAFE) != 0; }
  // Serialises the calls of a plugin that is not thread safe.
  std::mutex& call_mutex() const { return mutex_; }
  const PluginIdentity& identity() const { return identity_; }
  // "plugin 'NAME' (PATH)" for messages.
  const std::string& label() const { return label_; }

 private:
  friend std::shared_ptr<const LoadedPlugin> load_plugin(const PluginRef& ref);
  LoadedPlugin() = default;

  void* handle_ = nullptr;
  void* context_ = nullptr;
  void (*destroy_)(void*) = nullptr;
  uint32_t flags_ = 0;
  std::array<H3pOps, kGroupCount> tables_{};
  std::array<bool, kGroupCount> provided_{};
  PluginIdentity identity_;
  std::string label_;
  mutable std::mutex mutex_;
};

// The plugin `ref` names, loaded on first use and kept for the life of the process (one context
// per library and argument). Throws InputError naming the plugin and what is wrong: not found,
// cannot be opened, no entry point, another ABI major version, create failed, a provided group
// missing a primitive it calls, a Python plugin in a build without Python plugins.
std::shared_ptr<const LoadedPlugin> load_plugin(const PluginRef& ref);

// The identity of the plugin that runs groups of `spec` (loading it); nullopt when no group
// runs a plugin.
std::optional<PluginIdentity> plugin_identity_for(const ImplSpec& spec);

// Where `plugin:REF` is looked for: REF as a path when it holds a '/', else REF and libREF.so
// in every directory of H3P_PLUGIN_PATH (':'-separated), then in the plugins/ directory beside
// the running executable. Throws InputError listing what was searched.
std::filesystem::path find_plugin_library(const std::string& ref);

// The library `ref` resolves to (for python: the bridge), checking that it and a .py file
// exist, without loading anything (a submitting node may lack the plugin's GPU). InputError
// as load_plugin's for what cannot be found.
std::filesystem::path locate_plugin(const PluginRef& ref);

// The plugins/ directory beside the running executable.
std::filesystem::path executable_plugin_dir();

// Checks every primitive call's inputs and outputs more strictly (--check-plugin): guard
// bytes around each output, inputs compared before and after, outputs pre-filled with NaN so
// an element left unwritten fails, and a NaN/Inf check on every output on every device.
void set_check_mode(bool on);
bool check_mode();

}  // namespace h3p::ops::plugin
