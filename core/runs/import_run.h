#pragma once
// `h3parity import`: a run made elsewhere (call files recorded around another pipeline, e.g.
// diffusers) brought in as a run directory like any other. The recorded calls are replayed
// through this build's scheduler from the contract's initial state for the seed (the noise
// and conditioning a `generate` of that contract and seed would use); every recorded input
// must equal the replayed one bit for bit, so the imported steps are the trajectory the
// recorded velocities drive. Nothing is written unless every call checks out: the run is
// assembled in a temporary directory beside its place and renamed into it at the end.
//
// The run is RUNS/<contract>/import@<label>/seed-<n>/ with impl spec "import:<label>" (not an
// executable spec: nothing recomputes or continues it) and the manifest's `imported` field
// (label, source directory, each call file's SHA-256). Steps keep their inputs; latents are
// written and decoded when the model has decoders, as generate finishes a run.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/contract/contract.h"

namespace h3p::runs {

struct ImportParams {
  contract::Contract contract;
  std::filesystem::path calls_dir;  // NNN.safetensors, one call file per step from 000
  std::uint64_t seed = 0;           // one of the contract's seeds
  std::filesystem::path runs_root;
  std::string label;                // [A-Za-z0-9._-]+, not starting with '.'
  std::filesystem::path model;      // the model directory; empty: the contract's model
  std::string device = "cpu";       // where the final latents are decoded
  std::function<void(int step, int num_calls)> on_step;  // after each call is checked
  std::function<void(const std::string&)> on_decode;     // before decoding (run_setup.h)
  // Prints itself (STYLE.md): one "key: value" per line.
  std::string describe() const;
};

struct ImportResult {
  std::filesystem::path run_dir;
  int num_calls = 0;
  bool decoded = false;
};

// The impl spec an import with `label` records: "import:<label>". Throws InputError for a
// label that cannot name a run directory.
std::string import_spec(const std::string& label);

// Imports. Throws InputError naming the file and field for a missing directory, a gap in the
// step numbering, a truncated or malformed call file, a missing tensor, or the first recorded
// input (in step order, then call_input_names() order) that differs from the replayed state;
// and for a run directory that already exists. Leaves nothing behind when it throws.
ImportResult import_run(const ImportParams& params);

}  // namespace h3p::runs
