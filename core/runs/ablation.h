#pragma once
// Operator-swap ablation: replays a provider run's saved step with the candidate, with each
// operator group swapped back to the provider, with all block-interior groups swapped, and with
// every group swapped (which must equal the provider bit for bit), and measures each against
// the provider's saved outputs. Also the teacher-forced drift: the candidate on every saved
// provider step's inputs (one-step error), beside the free-running drift of the candidate's own
// run. This is how a reviewer finds which operator group causes the drift, and at which step.
// Provider variants (the provider with another backend) are measured beside the candidate in
// both tables: the provider's own spread, the scale a candidate's figures are read against.
// On a GPU the candidate's rows run through runs::CallRunner (fused blocks, or its CUDA kernels
// group by group where a group is swapped).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics/tensor_diff.h"
#include "core/model/fused_call.h"
#include "core/ops/op_group.h"
#include "core/ops/op_set.h"

namespace h3p::runs {

struct AblationParams {
  std::filesystem::path provider_run;   // the reference run (its saved calls are replayed)
  std::filesystem::path candidate_run;  // the candidate's own run (free-running outputs)
  int step = 0;
  std::vector<ops::Group> groups;       // groups to swap one at a time; empty: all
  std::string device = "cpu";
  std::filesystem::path model;          // overrides the model dir recorded in the provider run
  std::vector<std::string> variants;    // provider variant specs measured beside the candidate
  model::FusedCallFactory fused_candidate;  // the fused CUDA candidate call, where built
  std::function<void(double, const std::string&)> progress;
  // One "key: value" per line.
  std::string describe() const;
};

// One replay of the step with one impl spec, against the provider run's saved outputs.
struct AblationRow {
  std::string impl_spec;
  std::string what;  // human description ("attention from the provider", ...)
  bool variant = false;  // a provider variant: the provider's own spread, not the candidate
  std::string error;     // a variant this build or device cannot run (then no figures)
  metrics::TensorDiff video, audio;
  double seconds = 0;
};

struct AblationResult {
  AblationParams params;
  std::string provider_spec, candidate_spec;
  std::vector<AblationRow> rows;
  // The candidate run's own saved step against the provider's (inputs differ: accumulated
  // drift); absent when the candidate run has not saved that step.
  std::optional<metrics::TensorDiff> free_video, free_audio;
  nlohmann::json to_json() const;
  std::string to_markdown() const;
};

// Throws InputError when the runs are not comparable (another contract, seed, model or
// inputs), naming the manifest and field; the provider run's step must be saved.
AblationResult run_ablation(const AblationParams& params, const ops::OpSetPtr& candidate);

// One provider variant on one step's saved inputs, against the provider's saved outputs.
struct VariantDrift {
  std::string impl_spec;
  metrics::TensorDiff video, audio;
};

struct DriftRow {
  int step = 0;
  float video_t = 0, audio_t = 0;
  metrics::TensorDiff teacher_video, teacher_audio;  // candidate on the provider's inputs
  std::optional<metrics::TensorDiff> free_video, free_audio;  // candidate run vs provider run
  std::vector<VariantDrift> variants;                // in params.variants order
};

struct DriftResult {
  std::vector<DriftRow> rows;
  std::vector<std::string> variant_errors;  // "spec: why" for variants that could not run
  // First step whose teacher-forced video or audio relative L2 exceeds `threshold`; -1: none.
  int first_over(double threshold) const;
  nlohmann::json to_json() const;
  std::string to_markdown() const;
};

// Teacher-forced drift over every saved provider step (params.step and groups unused).
DriftResult teacher_forced_drift(const AblationParams& params, const ops::OpSetPtr& candidate);

}  // namespace h3p::runs
