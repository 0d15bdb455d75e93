#pragma once
// The layout of one run directory, RUNS/<contract>/<impl-dir>/seed-<n>/:
//   manifest.json                       identity, contract digest, impl spec, environment
//   .lock                               advisory lock of the generating process (run_lock.h)
//   inputs/noise.safetensors            initial noise, drawn once
//   inputs/conditioning.safetensors     conditioning rows fed to every call
//   steps/NNN.safetensors + NNN.json    one transformer call and its sidecar (NNN = 000..)
//   segments.json                       numerics segments, once a resume changed environment
//   latents.safetensors                 final latents
//   metrics/                            comparison outputs
// Paths only; nothing here touches the disk except create_directories().
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace h3p::runs {

// Maps an impl spec to a directory name, reversibly: ':' -> '@', ',' -> '+', every other
// allowed character ([A-Za-z0-9._=-]) kept ("candidate:attention=provider,gemm=provider" ->
// "candidate@attention=provider+gemm=provider"). Throws InputError for an empty spec, one
// starting with '.', or one holding any other character ('/', '@', '+', spaces, ...). A plugin
// spec's reference is reduced to its file name first ("plugin:/opt/k/libk.so:rest=provider" ->
// "plugin@libk.so@rest=provider"), so for plugin specs the map is reversible only up to the
// directory of the plugin (the manifest holds the spec verbatim).
std::string impl_dir_name(std::string_view impl_spec);

// Inverse of impl_dir_name. Throws InputError when `dir_name` is not such a name.
std::string impl_spec_from_dir_name(std::string_view dir_name);

// Paths inside one run directory. Cheap value type.
class RunPaths {
 public:
  // RUNS/<contract>/<impl_dir_name(impl_spec)>/seed-<seed>. The contract name must be
  // directory-safe (contracts are validated so); throws InputError otherwise.
  static RunPaths locate(const std::filesystem::path& runs_root, const std::string& contract_name,
                         std::string_view impl_spec, std::uint64_t seed);

  // Wraps an existing run directory.
  explicit RunPaths(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path manifest() const { return root_ / "manifest.json"; }
  std::filesystem::path lock_file() const { return root_ / ".lock"; }
  std::filesystem::path inputs_dir() const { return root_ / "inputs"; }
  std::filesystem::path noise() const { return inputs_dir() / "noise.safetensors"; }
  std::filesystem::path conditioning() const { return inputs_dir() / "conditioning.safetensors"; }
  std::filesystem::path steps_dir() const { return root_ / "steps"; }
  // steps/NNN.safetensors (at least 3 digits, zero-padded); step >= 0.
  std::filesystem::path step_file(int step) const;
  // steps/NNN.json, the sidecar of step_file(step).
  std::filesystem::path step_sidecar(int step) const;
  std::filesystem::path latents() const { return root_ / "latents.safetensors"; }
  // Where a resume continued under another numerics environment (numerics_segments.h).
  std::filesystem::path segments() const { return root_ / "segments.json"; }
  std::filesystem::path metrics_dir() const { return root_ / "metrics"; }

  // Creates root, inputs/, steps/ and metrics/. Throws InputError naming the path on failure.
  void create_directories() const;

 private:
  std::filesystem::path root_;
};

// "NNN": the step number zero-padded to 3 digits (wider when it needs more).
std::string step_stem(int step);

}  // namespace h3p::runs
