#include "core/runs/identity.h"


#include <algorithm>
#include <set>
#include <system_error>
#include <vector>

#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/io/seed_record.h"
#include "core/runs/compiled_sources.h"

namespace h3p::runs {

namespace {

using nlohmann::json;

bool is_weight_file(const std::string& name) {
  return name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json") ||
         name == io::kSeedRecordFile;
}

std::string field_error(const std::string& context, const std::string& field,
                        const std::string& what) {
  return context + ": field '" + field + "': " + what;
}

std::string digest_field(const json& object, const std::string& key, const std::string& context) {
  auto it = object.find(key);
  if (it == object.end()) throw InputError(field_error(context, "identity." + key, "missing"));
  if (!it->is_string() || !is_sha256_hex(it->get<std::string>())) {
    throw InputError(field_error(context, "identity." + key, "must be a lower-case hex SHA-256"));
  }
  return it->get<std::string>();
}

}  // namespace

std::string weights_cell(const ModelIdentity& identity) {
  std::string cell = "`" + identity.weights_digest.substr(0, 16) + "`";
  if (!identity.weights_source.empty()) cell += " (" + identity.weights_source + ")";
  return cell;
}

bool is_sha256_hex(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string sources_digest_of(const std::map<std::string, std::string>& files) {
  io::Sha256 hasher;
  for (const auto& [path, sha] : files) {
    hasher.update(std::string_view(path));
    hasher.update(std::string_view(" "));
    hasher.update(std::string_view(sha));
    hasher.update(std::string_view("\n"));
  }
  return hasher.hex_digest();
}

const std::map<std::string, std::string>& compiled_model_sources() {
  static const std::map<std::string, std::string> sources = [] {
    std::map<std::string, std::string> table;
    for (std::size_t i = 0; i < generated::kModelSourceCount; ++i) {
      table.emplace(generated::kModelSources[i].path, generated::kModelSources[i].sha256);
    }
    return table;
  }();
  return sources;
}

const std::string& compiled_model_sources_digest() {
  static const std::string digest = generated::kModelSourcesDigest;
  return digest;
}

ModelIdentity compute_identity(const std::filesystem::path& transformer_dir) {
  const std::string context = transformer_dir.string();
  std::error_code error;
  if (!std::filesystem::is_directory(transformer_dir, error)) {
    throw_input(context, "not a directory");
  }
  // Step 1: the weight files directly inside the directory, by name.
  std::vector<std::string> names;
  for (auto it = std::filesystem::directory_iterator(transformer_dir, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (is_weight_file(name) && it->is_regular_file()) names.push_back(name);
  }
  if (error) throw_input(context, "cannot list directory: " + error.message());
  if (names.empty()) {
    throw_input(context, std::string("no *.safetensors, *.safetensors.index.json or ") +
                             io::kSeedRecordFile + " file");
  }
  std::sort(names.begin(), names.end());

  // Step 2: digests.
  ModelIdentity identity;
  io::Sha256 weights;
  for (const auto& name : names) {
    const std::string sha = io::sha256_file(transformer_dir / name);
    weights.update(std::string_view(name + " " + sha + "\n"));
  }
  identity.weights_digest = weights.hex_digest();
  if (const auto record = io::read_seed_record(transformer_dir)) {
    identity.weights_source = record->describe();
  }
  const auto config = transformer_dir / "config.json";
  if (!std::filesystem::is_regular_file(config, error)) {
    throw_input(context, "no config.json");
  }
  identity.config_digest = io::sha256_file(config);
  identity.source_files = compiled_model_sources();
  identity.sources_digest = compiled_model_sources_digest();
  return identity;
}

json identity_to_json(const ModelIdentity& identity) {
  json files = json::object();
  for (const auto& [path, sha] : identity.source_files) files[path] = sha;
  json out = {{"weights_digest", identity.weights_digest},
              {"config_digest", identity.config_digest},
              {"sources_digest", identity.sources_digest},
              {"source_files", std::move(files)}};
  if (!identity.weights_source.empty()) out["weights_source"] = identity.weights_source;
  return out;
}

ModelIdentity identity_from_json(const json& value, const std::string& context) {
  if (!value.is_object()) throw InputError(field_error(context, "identity", "must be an object"));
  static const std::set<std::string> allowed = {"weights_digest", "config_digest", "sources_digest",
                                                "source_files", "weights_source"};
  for (const auto& [key, item] : value.items()) {
    if (!allowed.contains(key)) {
      throw InputError(field_error(context, "identity." + key, "unknown field"));
    }
  }
  ModelIdentity identity;
  identity.weights_digest = digest_field(value, "weights_digest", context);
  identity.config_digest = digest_field(value, "config_digest", context);
  identity.sources_digest = digest_field(value, "sources_digest", context);
  auto files = value.find("source_files");
  if (files == value.end()) {
    throw InputError(field_error(context, "identity.source_files", "missing"));
  }
  if (!files->is_object()) {
    throw InputError(field_error(context, "identity.source_files", "must be an object"));
  }
  for (const auto& [path, sha] : files->items()) {
    if (!sha.is_string() || !is_sha256_hex(sha.get<std::string>())) {
      throw InputError(field_error(context, "identity.source_files['" + path + "']",
                                   "must be a lower-case hex SHA-256"));
    }
    identity.source_files.emplace(path, sha.get<std::string>());
  }
  if (sources_digest_of(identity.source_files) != identity.sources_digest) {
    throw InputError(field_error(context, "identity.sources_digest",
                                 "does not match source_files (edited or corrupt)"));
  }
  if (auto source = value.find("weights_source"); source != value.end()) {
    if (!source->is_string() || source->get<std::string>().empty()) {
      throw InputError(field_error(context, "identity.weights_source", "must be a non-empty string"));
    }
    identity.weights_source = source->get<std::string>();
  }
  return identity;
}

}  // namespace h3p::runs
