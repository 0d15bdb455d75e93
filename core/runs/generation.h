#pragma once
// Generation of one run (one seed of a contract with one impl spec), resumable bit-exactly:
// a fresh run draws its noise once and stores it; an existing run is replayed step by step
// from its saved calls (every replayed input digest checked against its sidecar, nothing
// recomputed), then continues with the first missing step. Ends by writing the latents.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/model/fused_call.h"
#include "core/ops/op_set.h"

namespace h3p::runs {

// Which calls keep their inputs in the step file (outputs are always kept).
enum class SaveInputs { every, first, none };
// Parses "every", "first" or "none"; throws InputError otherwise.
SaveInputs parse_save_inputs(const std::string& text);
std::string to_string(SaveInputs policy);

// One step as the loop reports it.
struct StepEvent {
  int step = 0;
  int num_calls = 0;
  bool replayed = false;  // read back from disk rather than computed
  float video_t = 0, audio_t = 0;
  double video_velocity_rms = 0, audio_velocity_rms = 0;
  double seconds = 0;     // wall time of the call (0 when replayed)
};

struct GenerateParams {
  contract::Contract contract;
  std::string impl_spec = "provider";
  std::uint64_t seed = 0;
  std::filesystem::path runs_root;
  std::string device = "cpu";
  SaveInputs save_inputs = SaveInputs::every;
  bool verify_last_step = false;
  // A resume under a different numerics environment whose recomputed last step differs:
  // continue anyway, as a new "accepted" segment (the run is then mixed), rather than refuse.
  bool accept_new_numerics = false;
  // Called once, before any step, with this process's numerics environment (the job log of a
  // Slurm task records it at every start).
  std::function<void(const nlohmann::json&)> on_numerics;
  std::function<void(const StepEvent&)> on_step;         // called after every step
  // Called once before the final latents are decoded, with what is decoded and, on CPU, how
  // long it should take (runs::decode_run_outputs).
  std::function<void(const std::string&)> on_decode;
  // Called after each stage done in this process with its wall time in seconds: "identity"
  // (hashing the weights), "load" (the transformer onto the device), "decode" (when it ran).
  std::function<void(const std::string&, double)> on_stage;
  const std::atomic<bool>* stop_requested = nullptr;     // checked between steps
  // Contracts with require_gate: the gate result to check (empty: gate.json next to the
  // model) and the override that starts without one; what was used is recorded in the
  // manifest's environment under "gate" (core/runs/gate.h).
  std::filesystem::path gate_file;
  bool skip_gate = false;
  // The candidate on a CUDA device runs as whole fused blocks built by this factory (empty
  // when the binary has no CUDA candidate: such a request is then refused up front).
  model::FusedCallFactory fused_candidate;
  // Prints itself (STYLE.md): one "key: value" per line.
  std::string describe() const;
};

struct GenerateResult {
  std::filesystem::path run_dir;
  int num_calls = 0;
  int replayed = 0;
  int computed = 0;
  bool verified_last_step = false;
  bool decoded = false;  // RUN/decoded/ holds the decoded video (and audio)
  // The numerics environment against the run's: "new run", "same", or the check of the
  // segment this process started ("verified", "accepted", "unchecked"); `numerics_changes`
  // names the changed fields; `segments` describes them all (numerics_segments.h).
  std::string numerics_check;
  std::string numerics_changes;
  int segment = 0;
  bool mixed = false;
  std::string segments;
  std::vector<StepEvent> steps;
};

// Runs or resumes. `candidate` is the candidate OpSet (null when the binary has none).
// Throws InputError for bad input or a run that cannot be continued (naming the file),
// CheckFailed when --verify-last-step finds a difference, Preempted when stopped. A resume
// whose numerics environment differs from the run's current segment recomputes the last saved
// step first: bitwise equal continues as a new "verified" segment; a difference throws
// InputError naming the changed fields and the differing output, unless accept_new_numerics.
GenerateResult generate_run(const GenerateParams& params, const ops::OpSetPtr& candidate);

// The model directory a contract names: a built-in model materialises once under
// `<runs_root>/models/<directory_name()>` (init-model with its settings; seeded weights write
// only configs and seed records); a path is returned as is.
std::filesystem::path materialise_model(const contract::Contract& contract,
                                        const std::filesystem::path& runs_root);

}  // namespace h3p::runs
