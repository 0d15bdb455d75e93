#pragma once
// manifest.json of a run: what the run is bound to (identity, contract digest, impl spec,
// seed, generation params, input digests) and, for information only, the environment.
// A resume reads it back and refuses any difference except the environment (of which only
// the device kind must match).
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/runs/identity.h"

namespace h3p::runs {

// The format this build writes and reads.
inline constexpr int kManifestFormatVersion = 1;

struct Manifest {
  int format_version = kManifestFormatVersion;
  std::string contract_name;
  std::string contract_digest;  // contract::contract_digest of the generating contract
  std::string impl_spec;        // verbatim, as given on the command line
  std::uint64_t seed = 0;
  ModelIdentity identity;
  nlohmann::json environment = nlohmann::json::object();  // environment_info(); see below
  nlohmann::json params = nlohmann::json::object();       // geometry, steps, shifts, save_inputs
  std::string noise_digest;         // sha256 of inputs/noise.safetensors; empty until written
  std::string conditioning_digest;  // sha256 of inputs/conditioning.safetensors; likewise
  // The candidate plugin a plugin spec ran (ops/plugin/plugin_library.h PluginIdentity: kind,
  // library, library_sha256, argument, name, version, abi_version, sources, groups); null
  // when no group runs a plugin. Part of what the run is bound to.
  nlohmann::json plugin;
  // A run made elsewhere and brought in by `h3parity import` (runs/import_run.h): label,
  // source (the call-file directory as given), files (each call file's name and SHA-256, in
  // step order); null for runs generated here. Its impl_spec is then "import:<label>".
  nlohmann::json imported;

  bool operator==(const Manifest&) const = default;
};

// The JSON form: keys format_version, contract_name, contract_digest, impl_spec, seed,
// identity, environment, params, noise_digest, conditioning_digest, plugin where a plugin
// ran and imported for an imported run (each absent otherwise, so manifests of other runs are
// unchanged).
nlohmann::json manifest_to_json(const Manifest& manifest);

// Validates and converts; `context` (the file) prefixes every error:
// "<context>: field '<name>': <what>". Unknown keys and other format versions are refused.
Manifest manifest_from_json(const nlohmann::json& json, const std::string& context);

// Writes `file` atomically (temp, fsync, rename, fsync dir) as indented JSON with a final
// newline. Returns the SHA-256 of the bytes written (step 0's sidecar chains to it).
std::string write_manifest(const std::filesystem::path& file, const Manifest& manifest);

// Reads and validates `file`. Throws InputError naming the file (missing, truncated, invalid).
Manifest read_manifest(const std::filesystem::path& file);

// Throws InputError "<manifest_file>: field '<first differing field>': ..." unless `existing`
// (read from manifest_file) may be continued by a process that would write `expected`.
// Compared in order: format_version, identity (weights, config, then the first differing
// source file), contract_name, contract_digest, impl_spec, plugin (the first differing field:
// a changed plugin library or Python source does not continue a run), seed, params (first
// differing key),
// noise_digest and conditioning_digest (only where both are non-empty), then the device kind
// (environment.device without its index, where both record one: steps computed on another
// kind of device would not continue the run's numerics). The rest of the environment is not
// compared.
void check_compatible(const Manifest& existing, const Manifest& expected,
                      const std::filesystem::path& manifest_file);

// The kind of a device as --device names it: "cuda:1" -> "cuda", "cpu" -> "cpu".
std::string device_kind(const std::string& device);

}  // namespace h3p::runs
