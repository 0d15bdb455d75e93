#include "core/ops/plugin/plugin_library.h"

#include <dlfcn.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <system_error>

#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/ops/plugin/plugin_contract.h"

namespace h3p::ops::plugin {
namespace {

using nlohmann::json;

const char* const kPythonBridge = "libh3p_python_plugin.so";
const char* const kPythonUnavailable = "python-plugin-unavailable.txt";

bool check_mode_on = [] {
  const char* env = std::getenv("H3P_CHECK_PLUGIN");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}();

std::string abi_text(uint32_t version) {
  return std::to_string(H3P_PLUGIN_ABI_VERSION_MAJOR(version)) + "." +
         std::to_string(H3P_PLUGIN_ABI_VERSION_MINOR(version));
}

// The table field `member` of a struct the other side compiled with `struct_size` bytes, or a
// zero value when the field lies beyond it (an older plugin).
template <typename Struct>
Struct sized_copy(const Struct* source, std::size_t struct_size) {
  Struct copy{};
  std::memcpy(&copy, source, std::min(struct_size, sizeof(Struct)));
  copy.struct_size = sizeof(Struct);
  return copy;
}

const H3pOps* group_field(const H3pPlugin& p, Group g) {
  switch (g) {
    case Group::gemm: return p.gemm;
    case Group::attention: return p.attention;
    case Group::swiglu: return p.swiglu;
    case Group::adaln: return p.adaln;
    case Group::qk_norm: return p.qk_norm;
    case Group::rope: return p.rope;
    case Group::norm: return p.norm;
    case Group::residual: return p.residual;
    case Group::embed: return p.embed;
    case Group::head: return p.head;
  }
  return nullptr;
}

bool has_primitive(const H3pOps& ops, Primitive p) {
  switch (p) {
    case Primitive::linear: return ops.linear != nullptr;
    case Primitive::attention: return ops.attention != nullptr;
    case Primitive::swiglu: return ops.swiglu != nullptr;
    case Primitive::silu: return ops.silu != nullptr;
    case Primitive::rms_norm: return ops.rms_norm != nullptr;
    case Primitive::norm_modulate: return ops.norm_modulate != nullptr;
    case Primitive::gather_rows: return ops.gather_rows != nullptr;
    case Primitive::rope: return ops.rope != nullptr;
    case Primitive::gated_residual: return ops.gated_residual != nullptr;
    case Primitive::add: return ops.add != nullptr;
    case Primitive::timestep_sinusoid: return ops.timestep_sinusoid != nullptr;
  }
  return false;
}

std::string read_first_line(const std::filesystem::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "r");
  if (f == nullptr) return {};
  char buffer[1024] = {};
  const bool ok = std::fgets(buffer, sizeof buffer, f) != nullptr;
  std::fclose(f);
  std::string line = ok ? buffer : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::filesystem::path absolute_existing(const std::filesystem::path& path,
                                        const std::string& context) {
  std::error_code error;
  const auto canonical = std::filesystem::canonical(path, error);
  if (error) throw_input(context, "'" + path.string() + "' not found (" + error.message() + ")");
  return canonical;
}

// Where `ref` resolves to, and the argument the plugin's create receives.
struct Resolved {
  std::filesystem::path library;
  std::string argument;
};

Resolved resolve(const PluginRef& ref) {
  if (ref.kind == PluginKind::library) return {find_plugin_library(ref.ref), ""};
  const std::string context = "impl spec python:" + ref.ref;
  const std::filesystem::path dir = executable_plugin_dir();
  const std::filesystem::path bridge = dir / kPythonBridge;
  if (!std::filesystem::exists(bridge)) {
    std::string why = read_first_line(dir / kPythonUnavailable);
    if (why.empty()) why = "no " + bridge.string();
    throw_input(context, "this build has no Python plugins: " + why);
  }
  std::string argument = ref.ref;
  const bool is_file = argument.size() > 3 && argument.ends_with(".py");
  if (is_file) argument = absolute_existing(argument, context).string();
  return {bridge, argument};
}

}  // namespace

std::filesystem::path locate_plugin(const PluginRef& ref) { return resolve(ref).library; }

void set_check_mode(bool on) { check_mode_on = on; }
bool check_mode() { return check_mode_on; }

std::filesystem::path executable_plugin_dir() {
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "plugins";
  return exe.parent_path() / "plugins";
}

std::filesystem::path find_plugin_library(const std::string& ref) {
  const std::string context = "impl spec plugin:" + ref;
  if (ref.find('/') != std::string::npos) return absolute_existing(ref, context);
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("H3P_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  dirs.push_back(executable_plugin_dir());
  std::string searched;
  for (const auto& dir : dirs) {
    for (const std::string& name : {ref, "lib" + ref + ".so"}) {
      const auto candidate = dir / name;
      if (std::filesystem::is_regular_file(candidate)) return absolute_existing(candidate, context);
      searched += " " + candidate.string();
    }
  }
  throw_input(context, "no plugin library named '" + ref + "' (searched:" + searched +
                           "; set H3P_PLUGIN_PATH or give a path)");
}

LoadedPlugin::~LoadedPlugin() {
  if (destroy_ != nullptr) destroy_(context_);
  // The library stays mapped: its code may still be referenced by static destructors.
}

const H3pOps* LoadedPlugin::ops(Group group) const {
  const auto i = static_cast<std::size_t>(group);
  return provided_[i] ? &tables_[i] : nullptr;
}

std::shared_ptr<const LoadedPlugin> load_plugin(const PluginRef& ref) {
  if (ref.kind == PluginKind::none) throw InputError("load_plugin: the impl spec names no plugin");
  const Resolved where = resolve(ref);
  // One plugin per library and argument for the whole process; destroyed at exit.
  static std::mutex registry_mutex;
  static std::map<std::string, std::shared_ptr<LoadedPlugin>> registry;
  const std::string key = where.library.string() + "\n" + where.argument;
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (auto it = registry.find(key); it != registry.end()) return it->second;

  std::string label = (ref.kind == PluginKind::python ? "python plugin '" + where.argument
                                                      : "plugin '" + where.library.string()) +
                      "'";
  auto fail = [&](const std::string& what) -> void { throw InputError(label + ": " + what); };

  std::shared_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  plugin->identity_.kind = ref.kind == PluginKind::python ? "python" : "library";
  plugin->identity_.library = where.library.string();
  plugin->identity_.argument = where.argument;
  try {
    plugin->identity_.library_sha256 = io::sha256_file(where.library);
  } catch (const std::exception& e) {
    fail(std::string("cannot read the library: ") + e.what());
  }

  ::dlerror();
  void* handle = ::dlopen(where.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    fail(std::string("cannot load: ") + (why ? why : "dlopen failed"));
  }
  plugin->handle_ = handle;
  auto entry = reinterpret_cast<H3pPluginEntryFn>(::dlsym(handle, H3P_PLUGIN_ENTRY_NAME));
  if (entry == nullptr) {
    fail(std::string("no entry point '") + H3P_PLUGIN_ENTRY_NAME +
         "' (an h3parity candidate plugin exports it; see include/h3parity/candidate_plugin.h)");
  }
  const H3pPlugin* table = entry(H3P_PLUGIN_ABI_VERSION);
  if (table == nullptr) {
    fail("its entry point refused this h3parity (plugin ABI " + abi_text(H3P_PLUGIN_ABI_VERSION) +
         ")");
  }
  constexpr std::size_t kMinimum = offsetof(H3pPlugin, abi_version) + sizeof(uint32_t);
  if (table->struct_size < kMinimum) {
    fail("H3pPlugin.struct_size " + std::to_string(table->struct_size) + " is too small (at least " +
         std::to_string(kMinimum) + ")");
  }
  const uint32_t abi = table->abi_version;
  plugin->identity_.abi_version = abi_text(abi);
  if (H3P_PLUGIN_ABI_VERSION_MAJOR(abi) != H3P_PLUGIN_ABI_MAJOR) {
    fail("H3pPlugin.abi_version " + abi_text(abi) + " is not supported: this h3parity speaks " +
         "plugin ABI " + std::to_string(H3P_PLUGIN_ABI_MAJOR) + ".x; rebuild the plugin against " +
         "its include/h3parity/candidate_plugin.h");
  }

  // create, then read the rest of the table (create may fill it in).
  H3pPlugin before = sized_copy(table, table->struct_size);
  if (before.create != nullptr) {
    const std::string torch_version = std::to_string(TORCH_VERSION_MAJOR) + "." +
                                      std::to_string(TORCH_VERSION_MINOR) + "." +
                                      std::to_string(TORCH_VERSION_PATCH);
    H3pCreateInfo info{sizeof(H3pCreateInfo), H3P_PLUGIN_ABI_VERSION, H3P_VERSION_STRING,
                       where.argument.c_str(), torch_version.c_str()};
    char error[8192] = {};
    void* context = nullptr;
    const int32_t status = before.create(&info, &context, error, sizeof error);
    error[sizeof error - 1] = '\0';
    if (status != H3P_OK) {
      fail("create failed (status " + std::to_string(status) + "): " +
           (error[0] ? std::string(error) : "no message"));
    }
    plugin->context_ = context;
  }
  const H3pPlugin p = sized_copy(table, table->struct_size);
  plugin->destroy_ = p.destroy;
  plugin->flags_ = p.flags;
  if (p.name == nullptr || p.name[0] == '\0') fail("H3pPlugin.name is empty");
  plugin->identity_.name = p.name;
  plugin->identity_.version = p.version ? p.version : "";
  label = (ref.kind == PluginKind::python ? "python plugin '" : "plugin '") +
          plugin->identity_.name + "' (" +
          (where.argument.empty() ? where.library.string() : where.argument) + ")";
  plugin->label_ = label;

  for (Group g : kAllGroups) {
    const H3pOps* ops = group_field(p, g);
    if (ops == nullptr) continue;
    if (ops->struct_size < sizeof(std::size_t)) {
      fail("H3pPlugin." + std::string(group_name(g)) + "->struct_size is " +
           std::to_string(ops->struct_size));
    }
    const H3pOps copy = sized_copy(ops, ops->struct_size);
    std::string missing;
    for (Primitive prim : group_primitives(g)) {
      if (!has_primitive(copy, prim)) missing += " " + std::string(primitive_name(prim));
    }
    if (!missing.empty()) {
      fail("group '" + std::string(group_name(g)) + "' is provided but lacks" + missing +
           " (a provided group fills every primitive it calls: `h3parity plugin-contract`)");
    }
    plugin->tables_[static_cast<std::size_t>(g)] = copy;
    plugin->provided_[static_cast<std::size_t>(g)] = true;
    plugin->identity_.groups.emplace_back(group_name(g));
  }
  if (plugin->identity_.groups.empty()) fail("provides no operator group");

  if (p.source_files != nullptr) {
    const char* list = p.source_files(plugin->context_);
    std::istringstream lines(list ? list : "");
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      try {
        plugin->identity_.sources[line] = io::sha256_file(line);
      } catch (const std::exception& e) {
        fail("source file '" + line + "': " + e.what());
      }
    }
  }
  registry.emplace(key, plugin);
  return plugin;
}

std::optional<PluginIdentity> plugin_identity_for(const ImplSpec& spec) {
  if (!spec.uses_plugin()) return std::nullopt;
  return load_plugin(spec.plugin)->identity();
}

json plugin_identity_to_json(const PluginIdentity& id) {
  return {{"kind", id.kind},
          {"library", id.library},
          {"library_sha256", id.library_sha256},
          {"argument", id.argument},
          {"name", id.name},
          {"version", id.version},
          {"abi_version", id.abi_version},
          {"sources", id.sources},
          {"groups", id.groups}};
}

PluginIdentity plugin_identity_from_json(const json& j, const std::string& context) {
  auto field = [&](const char* key) -> const json& {
    if (!j.is_object() || !j.contains(key)) {
      throw_input(context, std::string("field 'plugin.") + key + "': missing");
    }
    return j.at(key);
  };
  auto text = [&](const char* key) {
    const json& v = field(key);
    if (!v.is_string()) throw_input(context, std::string("field 'plugin.") + key + "': not a string");
    return v.get<std::string>();
  };
  PluginIdentity id;
  id.kind = text("kind");
  id.library = text("library");
  id.library_sha256 = text("library_sha256");
  id.argument = text("argument");
  id.name = text("name");
  id.version = text("version");
  id.abi_version = text("abi_version");
  const json& sources = field("sources");
  const json& groups = field("groups");
  if (!sources.is_object()) throw_input(context, "field 'plugin.sources': not an object");
  for (auto it = sources.begin(); it != sources.end(); ++it) {
    if (!it.value().is_string()) {
      throw_input(context, "field 'plugin.sources." + it.key() + "': not a string");
    }
    id.sources[it.key()] = it.value().get<std::string>();
  }
  if (!groups.is_array()) throw_input(context, "field 'plugin.groups': not an array");
  for (const json& g : groups) {
    if (!g.is_string()) throw_input(context, "field 'plugin.groups': not a list of strings");
    id.groups.push_back(g.get<std::string>());
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const char* known[] = {"kind", "name", "version", "library", "library_sha256",
                                  "argument", "abi_version", "sources", "groups"};
    if (std::find_if(std::begin(known), std::end(known),
                     [&](const char* k) { return it.key() == k; }) == std::end(known)) {
      throw_input(context, "field 'plugin." + it.key() + "': unknown");
    }
  }
  return id;
}

bool same_plugin_bytes(const PluginIdentity& a, const PluginIdentity& b) {
  auto digests = [](const PluginIdentity& p) {
    std::vector<std::string> out;
    for (const auto& [file, sha] : p.sources) out.push_back(sha);
    std::sort(out.begin(), out.end());
    return out;
  };
  return a.library_sha256 == b.library_sha256 && a.kind == b.kind && a.name == b.name &&
         a.version == b.version && a.abi_version == b.abi_version && a.groups == b.groups &&
         digests(a) == digests(b);
}

std::string first_identity_difference(const PluginIdentity& a, const PluginIdentity& b) {
  auto diff = [](const std::string& what, const std::string& x, const std::string& y) {
    return x == y ? std::string() : what + ": '" + x + "' -> '" + y + "'";
  };
  for (const std::string& d :
       {diff("kind", a.kind, b.kind), diff("library", a.library, b.library),
        diff("library_sha256", a.library_sha256, b.library_sha256),
        diff("argument", a.argument, b.argument), diff("name", a.name, b.name),
        diff("version", a.version, b.version), diff("abi_version", a.abi_version, b.abi_version)}) {
    if (!d.empty()) return d;
  }
  for (const auto& [file, digest] : a.sources) {
    auto it = b.sources.find(file);
    if (it == b.sources.end()) return "source file '" + file + "' is no longer imported";
    if (it->second != digest) {
      return "source file '" + file + "' changed: sha256 " + digest + " -> " + it->second;
    }
  }
  for (const auto& [file, digest] : b.sources) {
    if (!a.sources.count(file)) return "source file '" + file + "' is new";
  }
  if (a.groups != b.groups) return "the groups it provides changed";
  return {};
}

}  // namespace h3p::ops::plugin
