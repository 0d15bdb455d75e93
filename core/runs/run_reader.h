#pragma once
// A run directory opened for reading by the tools that analyse runs (ablate, compare): the
// manifest, the stored inputs (digest-checked against the manifest), the sampling plan rebuilt
// from them, and each saved step's inputs rebuilt by replaying the saved outputs through the
// scheduler with every input digest checked against its sidecar. No lock is taken: readers
// never write.
#include <filesystem>
#include <optional>

#include "core/model/transformer.h"
#include "core/runs/manifest.h"
#include "core/runs/run_paths.h"
#include "core/runs/step_store.h"
#include "core/sampling/denoise_loop.h"

namespace h3p::runs {

class RunReader {
 public:
  // Throws InputError naming the manifest or input file when the run is unreadable.
  static RunReader open(const std::filesystem::path& run_dir);

  const Manifest& manifest() const { return manifest_; }
  const RunPaths& paths() const { return paths_; }
  const sampling::SamplingPlan& plan() const { return plan_; }
  const sampling::Conditioning& conditioning() const { return conditioning_; }
  const sampling::InitialNoise& noise() const { return noise_; }
  // Consecutive saved steps from 0.
  int saved_steps() const { return saved_; }
  // The model directory the run was generated with (recorded in the manifest's environment;
  // a preset resolves under the run's runs directory); empty when unknown.
  std::filesystem::path model_dir() const;

  // Step `step`'s call inputs and its verified saved step, replaying from the last position
  // (steps must be asked for in increasing order, or the replay restarts from step 0).
  struct Step {
    model::CallInputs inputs;
    LoadedStep saved;
  };
  Step step(int step);

 private:
  RunReader(RunPaths paths) : paths_(std::move(paths)) {}
  RunPaths paths_;
  Manifest manifest_;
  sampling::Conditioning conditioning_;
  sampling::InitialNoise noise_;
  sampling::SamplingPlan plan_;
  std::optional<StepStore> store_;  // set by open(), once the manifest has been read
  int saved_ = 0;
  sampling::SamplerState state_;
  int position_ = 0;  // the step state_ is at
};

}  // namespace h3p::runs
