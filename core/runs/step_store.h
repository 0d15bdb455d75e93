#pragma once
// The per-step files of a run: steps/NNN.safetensors holds one transformer call (its inputs,
// when saved, under the diffusers forward argument names, and its outputs `sample` and
// `audio_sample`); steps/NNN.json, the sidecar, is written after it and holds the digests
// that make resume bit-exact and tamper-evident:
//   step, file, file_digest      the call file and the SHA-256 of its bytes
//   input_digest                 SHA-256 of the call's inputs (see input_digest())
//   previous_digest              SHA-256 of the previous sidecar's bytes (of manifest.json
//                                for step 0), chaining every step back to the manifest
//   inputs_saved, format_version
//   segment                      the numerics segment that computed the step
//                                (numerics_segments.h); absent in older runs, read as 0
// A step counts as saved only once its sidecar exists; a call file without one (a crash
// between the two writes) is treated as absent and overwritten.
#include <string>
#include <vector>

#include "core/io/aten_bridge.h"
#include "core/runs/run_paths.h"
#include "core/runs/sidecar.h"

namespace h3p::runs {

// Call files hold inputs named by model::call_input_names() and outputs named by
// model::call_output_names() (core/model/transformer.h).

// A verified step read back from disk.
struct LoadedStep {
  StepRecord record;
  at::Tensor sample;                    // video velocity, as saved
  at::Tensor audio_sample;              // audio velocity, as saved
  std::vector<io::NamedTensor> inputs;  // in saved order; empty unless record.inputs_saved
};

// SHA-256 of io::encode_safetensors over `inputs` in the given order with no metadata: the
// same bytes for the same names, dtypes, shapes and values, wherever the tensors live.
std::string input_digest(const std::vector<io::NamedTensor>& inputs);

// Reads and writes steps/ of one run. Not thread-safe; one writer per run (hold a RunLock).
class StepStore {
 public:
  // `impl_spec` is recorded in each call file's metadata. The run's segments.json, where it
  // exists, is read (and validated against manifest.json) for set_segments.
  explicit StepStore(RunPaths paths, std::string impl_spec = {});

  // Saves step `step`: the call file (inputs first when save_inputs, then outputs `sample` and
  // `audio_sample`) atomically, then the sidecar, atomically. Requires step ==
  // count_complete(), manifest.json present (step 0), and no sidecar at `step` yet. Input
  // names must be model::call_input_names() members, unique; outputs exactly sample and audio_sample.
  // Throws InputError naming the file on any violation or I/O failure.
  void save(int step, const std::vector<io::NamedTensor>& inputs, bool save_inputs,
            const std::vector<io::NamedTensor>& outputs);

  // Steps 0..n-1 whose sidecars exist, consecutively from 0 (existence only; load verifies).
  int count_complete() const;

  // Reads step `step` and verifies: sidecar JSON (canonical form, fields, step, file name),
  // the chain to the previous sidecar (or manifest.json), the call file's digest and
  // structure, the saved inputs against input_digest, the segment it names (set_segments),
  // and that input_digest equals
  // `expected_input_digest` (the digest of the inputs being replayed). Any mismatch,
  // corruption or truncation throws InputError naming the sidecar or call file.
  LoadedStep load(int step, const std::string& expected_input_digest) const;

  // As load, without comparing against replayed inputs (for tools that read a finished run).
  LoadedStep load_saved(int step) const;

  const RunPaths& paths() const { return paths_; }

  // The run's numerics segments by their first steps (numerics_segments.h; default {0};
  // non-decreasing, from 0, else InputError): load requires each sidecar to name the segment its
  // step falls in, and save records that segment (the last, where steps are saved in order).
  void set_segments(std::vector<int> first_steps);

 private:
  LoadedStep load_checked(int step, const std::string* expected_input_digest) const;
  RunPaths paths_;
  std::string impl_spec_;
  std::vector<int> segment_starts_ = {0};
};

}  // namespace h3p::runs
