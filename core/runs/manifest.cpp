#include "core/runs/manifest.h"

#include <set>
#include <utility>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/io/atomic_file.h"

namespace h3p::runs {

namespace {

using nlohmann::json;

const json& require(const json& object, const std::string& key, const std::string& context) {
  auto it = object.find(key);
  if (it == object.end()) throw_field(context, key, "missing");
  return *it;
}

std::string string_field(const json& object, const std::string& key, const std::string& context,
                         bool allow_empty) {
  const json& value = require(object, key, context);
  if (!value.is_string()) throw_field(context, key, "must be a string");
  std::string text = value.get<std::string>();
  if (!allow_empty && text.empty()) throw_field(context, key, "must not be empty");
  return text;
}

std::string digest_field(const json& object, const std::string& key, const std::string& context,
                         bool allow_empty) {
  std::string text = string_field(object, key, context, allow_empty);
  if (!(allow_empty && text.empty()) && !is_sha256_hex(text)) {
    throw_field(context, key, "must be a lower-case hex SHA-256");
  }
  return text;
}

// Path of the first place where `a` and `b` differ ("" when equal); objects by sorted key.
std::string first_difference(const json& a, const json& b, const std::string& path) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [key, value] : a.items()) keys.insert(key);
    for (const auto& [key, value] : b.items()) keys.insert(key);
    for (const auto& key : keys) {
      const std::string sub = path + "." + key;
      if (!a.contains(key) || !b.contains(key)) return sub;
      std::string diff = first_difference(a.at(key), b.at(key), sub);
      if (!diff.empty()) return diff;
    }
    return {};
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::string diff = first_difference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
    return {};
  }
  return a == b ? std::string() : path;
}

std::string show(const json& value) { return value.is_null() ? "absent" : value.dump(); }

// The value at a path made by first_difference, or null when absent.
json value_at(const json& root, const std::string& path) {
  std::size_t i = 0;
  const json* node = &root;
  while (i < path.size()) {
    if (path[i] == '.') {
      std::size_t end = path.find_first_of(".[", i + 1);
      std::string key = path.substr(i + 1, end == std::string::npos ? end : end - i - 1);
      if (!node->is_object() || !node->contains(key)) return nullptr;
      node = &node->at(key);
      i = end == std::string::npos ? path.size() : end;
    } else if (path[i] == '[') {
      std::size_t end = path.find(']', i);
      std::size_t index = std::stoul(path.substr(i + 1, end - i - 1));
      if (!node->is_array() || index >= node->size()) return nullptr;
      node = &(*node)[index];
      i = end + 1;
    } else {
      return nullptr;
    }
  }
  return *node;
}

void check_identity(const ModelIdentity& run, const ModelIdentity& now,
                    const std::string& context) {
  if (run.weights_digest != now.weights_digest) {
    throw_field(context, "identity.weights_digest",
                "the run was made with other model weights (" + run.weights_digest + ", now " +
                    now.weights_digest + ")");
  }
  if (run.config_digest != now.config_digest) {
    throw_field(context, "identity.config_digest",
                "the run was made with another model config (" + run.config_digest + ", now " +
                    now.config_digest + ")");
  }
  if (run.sources_digest == now.sources_digest && run.source_files == now.source_files) return;
  std::set<std::string> paths;
  for (const auto& [path, sha] : run.source_files) paths.insert(path);
  for (const auto& [path, sha] : now.source_files) paths.insert(path);
  for (const auto& path : paths) {
    auto a = run.source_files.find(path);
    auto b = now.source_files.find(path);
    const std::string field = "identity.source_files['" + path + "']";
    if (a == run.source_files.end()) {
      throw_field(context, field, "this binary has a model source the run was not made with");
    }
    if (b == now.source_files.end()) {
      throw_field(context, field, "the run was made with a model source this binary lacks");
    }
    if (a->second != b->second) {
      throw_field(context, field,
                  "model source differs from the one the run was made with (" + a->second +
                      ", now " + b->second + ")");
    }
  }
  throw_field(context, "identity.sources_digest",
              "differs (" + run.sources_digest + ", now " + now.sources_digest + ")");
}

// The first difference between two manifests' plugin objects: the field ("plugin.sources
// ['/x/k.py']") and what differs in words; empty when equal. Source paths hold dots, so they
// are compared here rather than through first_difference's dotted paths.
std::pair<std::string, std::string> plugin_difference(const json& run, const json& now) {
  if (run == now) return {};
  if (run.is_null() || now.is_null()) {
    return {"plugin", run.is_null() ? "the run was made without a plugin, this request loads one"
                                    : "the run was made with plugin " + run.dump() +
                                          ", this request loads none"};
  }
  auto text = [](const json& o, const char* key) {
    return o.contains(key) && o.at(key).is_string() ? o.at(key).get<std::string>() : o.value(key, json()).dump();
  };
  for (const char* key : {"library_sha256", "kind", "name", "version", "abi_version", "argument",
                          "library"}) {
    if (text(run, key) != text(now, key)) {
      return {std::string("plugin.") + key, "the run was made with '" + text(run, key) +
                                                "', this request loads '" + text(now, key) + "'"};
    }
  }
  const json none = json::object();
  const json& a = run.contains("sources") ? run.at("sources") : none;
  const json& b = now.contains("sources") ? now.at("sources") : none;
  for (const auto& [file, digest] : a.items()) {
    const std::string field = "plugin.sources['" + file + "']";
    if (!b.contains(file)) return {field, "the run imported this file; this request does not"};
    if (b.at(file) != digest) {
      return {field, "the file changed (sha256 " + digest.dump() + ", now " + b.at(file).dump() + ")"};
    }
  }
  for (const auto& [file, digest] : b.items()) {
    if (!a.contains(file)) {
      return {"plugin.sources['" + file + "']", "this request imports a file the run did not"};
    }
  }
  return {"plugin", "differs (" + run.dump() + ", now " + now.dump() + ")"};
}

// A string member of the environment, or "" where absent or not a string.
std::string environment_string(const Manifest& manifest, const char* key) {
  const auto it = manifest.environment.find(key);
  return it != manifest.environment.end() && it->is_string() ? it->get<std::string>()
                                                             : std::string();
}

// The `imported` object: label and source strings, files an array of {file, sha256}.
json imported_from_json(const json& v, const std::string& context) {
  if (!v.is_object()) throw_field(context, "imported", "must be an object");
  static const std::set<std::string> allowed = {"label", "source", "files"};
  for (const auto& [key, item] : v.items()) {
    if (!allowed.contains(key)) throw_field(context, "imported." + key, "unknown field");
  }
  for (const char* key : {"label", "source"}) {
    if (!v.contains(key) || !v.at(key).is_string()) {
      throw_field(context, std::string("imported.") + key, "must be a string");
    }
  }
  if (!v.contains("files") || !v.at("files").is_array()) {
    throw_field(context, "imported.files", "must be an array");
  }
  for (std::size_t i = 0; i < v.at("files").size(); ++i) {
    const json& f = v.at("files")[i];
    const std::string field = "imported.files[" + std::to_string(i) + "]";
    if (!f.is_object() || f.size() != 2 || !f.contains("file") || !f.at("file").is_string() ||
        !f.contains("sha256") || !f.at("sha256").is_string() ||
        !is_sha256_hex(f.at("sha256").get<std::string>())) {
      throw_field(context, field, "must be {file: string, sha256: lower-case hex SHA-256}");
    }
  }
  return v;
}

}  // namespace

json manifest_to_json(const Manifest& manifest) {
  json out = {{"format_version", manifest.format_version},
          {"contract_name", manifest.contract_name},
          {"contract_digest", manifest.contract_digest},
          {"impl_spec", manifest.impl_spec},
          {"seed", manifest.seed},
          {"identity", identity_to_json(manifest.identity)},
          {"environment", manifest.environment},
          {"params", manifest.params},
          {"noise_digest", manifest.noise_digest},
          {"conditioning_digest", manifest.conditioning_digest}};
  if (!manifest.plugin.is_null()) out["plugin"] = manifest.plugin;
  if (!manifest.imported.is_null()) out["imported"] = manifest.imported;
  return out;
}

Manifest manifest_from_json(const json& value, const std::string& context) {
  if (!value.is_object()) throw InputError(context + ": a manifest must be a JSON object");
  static const std::set<std::string> allowed = {
      "format_version", "contract_name", "contract_digest", "impl_spec",    "seed",
      "identity",       "environment",   "params",          "noise_digest", "conditioning_digest",
      "plugin",         "imported"};
  for (const auto& [key, item] : value.items()) {
    if (!allowed.contains(key)) throw_field(context, key, "unknown field");
  }
  Manifest manifest;
  const json& version = require(value, "format_version", context);
  if (!version.is_number_integer()) throw_field(context, "format_version", "must be an integer");
  if (version.get<std::int64_t>() != kManifestFormatVersion) {
    throw_field(context, "format_version",
                "unsupported version " + version.dump() + " (this build reads " +
                    std::to_string(kManifestFormatVersion) + ")");
  }
  manifest.format_version = kManifestFormatVersion;
  manifest.contract_name = string_field(value, "contract_name", context, false);
  manifest.contract_digest = digest_field(value, "contract_digest", context, false);
  manifest.impl_spec = string_field(value, "impl_spec", context, false);
  const json& seed = require(value, "seed", context);
  if (!seed.is_number_unsigned()) throw_field(context, "seed", "must be a non-negative integer");
  manifest.seed = seed.get<std::uint64_t>();
  manifest.identity = identity_from_json(require(value, "identity", context), context);
  manifest.environment = require(value, "environment", context);
  if (!manifest.environment.is_object()) throw_field(context, "environment", "must be an object");
  manifest.params = require(value, "params", context);
  if (!manifest.params.is_object()) throw_field(context, "params", "must be an object");
  manifest.noise_digest = digest_field(value, "noise_digest", context, true);
  manifest.conditioning_digest = digest_field(value, "conditioning_digest", context, true);
  if (auto it = value.find("plugin"); it != value.end()) {
    if (!it->is_object()) throw_field(context, "plugin", "must be an object");
    for (const char* key : {"library", "library_sha256", "name", "version"}) {
      const std::string field = std::string("plugin.") + key;
      if (!it->contains(key) || !it->at(key).is_string())
        throw_field(context, field, "must be a string");
    }
    if (!is_sha256_hex(it->at("library_sha256").get<std::string>())) {
      throw_field(context, "plugin.library_sha256", "must be a lower-case hex SHA-256");
    }
    manifest.plugin = *it;
  }
  if (auto it = value.find("imported"); it != value.end()) {
    manifest.imported = imported_from_json(*it, context);
  }
  return manifest;
}

std::string write_manifest(const std::filesystem::path& file, const Manifest& manifest) {
  return io::atomic_write_text(file, manifest_to_json(manifest).dump(2) + "\n");
}

Manifest read_manifest(const std::filesystem::path& file) {
  const std::string text = io::read_file(file);
  return manifest_from_json(contract::parse_json_text(text, file.string()), file.string());
}

void check_compatible(const Manifest& existing, const Manifest& expected,
                      const std::filesystem::path& manifest_file) {
  const std::string context = manifest_file.string();
  if (existing.format_version != expected.format_version) {
    throw_field(context, "format_version",
                "run has " + std::to_string(existing.format_version) + ", this build writes " +
                    std::to_string(expected.format_version));
  }
  check_identity(existing.identity, expected.identity, context);
  auto compare = [&](const std::string& field, const std::string& run, const std::string& now) {
    if (run != now) {
      throw_field(context, field, "run has '" + run + "', this request has '" + now + "'");
    }
  };
  compare("contract_name", existing.contract_name, expected.contract_name);
  compare("contract_digest", existing.contract_digest, expected.contract_digest);
  compare("impl_spec", existing.impl_spec, expected.impl_spec);
  if (const auto [field, what] = plugin_difference(existing.plugin, expected.plugin); !field.empty()) {
    throw_field(context, field,
                what +
                    ": a changed plugin does not continue a run (its numerics are not the run's); "
                    "restore the plugin the run was made with, or generate into another --runs "
                    "directory (`h3parity adopt` re-binds a run whose plugin only moved)");
  }
  compare("seed", std::to_string(existing.seed), std::to_string(expected.seed));
  const std::string diff = first_difference(existing.params, expected.params, "params");
  if (!diff.empty()) {
    throw_field(context, diff,
                "run has " + show(value_at(existing.params, diff.substr(6))) +
                    ", this request has " + show(value_at(expected.params, diff.substr(6))));
  }
  if (!existing.noise_digest.empty() && !expected.noise_digest.empty()) {
    compare("noise_digest", existing.noise_digest, expected.noise_digest);
  }
  if (!existing.conditioning_digest.empty() && !expected.conditioning_digest.empty()) {
    compare("conditioning_digest", existing.conditioning_digest, expected.conditioning_digest);
  }
  const std::string run_device = environment_string(existing, "device");
  const std::string now_device = environment_string(expected, "device");
  if (!run_device.empty() && !now_device.empty() &&
      device_kind(run_device) != device_kind(now_device)) {
    throw_field(context, "environment.device",
                "run was computed on '" + run_device + "', this request runs on '" + now_device +
                    "' (resume with --device " + device_kind(run_device) + ")");
  }
}

std::string device_kind(const std::string& device) { return device.substr(0, device.find(':')); }

}  // namespace h3p::runs
