#pragma once
// What a run is bound to: the model weights, its config, and the source files of the model
// paths (core/model, core/ops, core/sampling, kernels) compiled into this binary — not the
// commit, so orchestration changes can continue a run. Plus a description of the machine,
// which a manifest records but never compares.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace h3p::runs {

// Digests are lower-case hex SHA-256.
struct ModelIdentity {
  std::string weights_digest;  // over "<file name> <sha256>\n" lines of the weight files
  std::string config_digest;   // sha256 of config.json
  std::string sources_digest;  // sources_digest_of(source_files)
  std::map<std::string, std::string> source_files;  // path relative to the source root -> sha256
  // Empty for weight files; SeedRecord::describe() for seeded weights (drawn, never stored).
  std::string weights_source;

  bool operator==(const ModelIdentity&) const = default;
};

// Digest of a transformer directory plus this binary's compiled-in model sources.
// Weights digest: SHA-256 over the lines "<file name> <sha256 of the file>\n", sorted by file
// name, for every *.safetensors and *.safetensors.index.json directly inside `transformer_dir`,
// and its seed record (h3parity-seeded-weights.json) when the weights are seeded, which also
// sets weights_source. Config digest: sha256 of transformer_dir/config.json. Reads every
// weight byte (about a minute for the released 62 GB). Throws InputError naming the directory when it has no
// config.json or no weight file, or a file that cannot be read.
ModelIdentity compute_identity(const std::filesystem::path& transformer_dir);

// The model-path sources compiled into this binary: relative path -> sha256, hashed at build
// time from the tree the binary was built from.
const std::map<std::string, std::string>& compiled_model_sources();

// sources_digest_of(compiled_model_sources()), as computed at build time.
const std::string& compiled_model_sources_digest();

// SHA-256 over the lines "<path> <sha256>\n" of `files` in key order (the map's order).
std::string sources_digest_of(const std::map<std::string, std::string>& files);

// {"weights_digest", "config_digest", "sources_digest", "source_files": {path: sha256}}, plus
// "weights_source" when it is not empty.
nlohmann::json identity_to_json(const ModelIdentity& identity);

// Inverse of identity_to_json. Validates keys (unknown ones refused), 64-hex digests, and that
// sources_digest matches source_files. Errors: InputError "<context>: field 'identity.<key>': ...".
ModelIdentity identity_from_json(const nlohmann::json& json, const std::string& context);

// The weights of a run for a table cell: the digest's first 16 hex digits in backticks, and for
// seeded weights their source in parentheses ("`0123456789abcdef` (seeded ... seed=5)").
std::string weights_cell(const ModelIdentity& identity);

// True for a 64-character lower-case hex string.
bool is_sha256_hex(const std::string& text);

}  // namespace h3p::runs
