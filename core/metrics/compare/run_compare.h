#pragma once
// `compare`: a candidate against the provider. Each side is a run directory (its decoded/
// outputs and saved steps), a directory of decoded frames (frames.json), or a video file
// FFmpeg reads (decoded into memory on a thread of its own through a hook that h3p_media
// supplies, while the metric pass reads each frame as it arrives; then only pixel and audio
// metrics are computed, and the result says so). Two runs are
// checked comparable first (same contract, seed, model, initial noise and conditioning) and
// their decoded shapes must agree; otherwise InputError, before any metric is computed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/metrics/clip_compare.h"
#include "core/metrics/compare/bounds_check.h"
#include "core/metrics/compare/noise_floor.h"
#include "core/metrics/tensor_diff_result.h"
#include "core/runs/decoding_clip.h"

namespace h3p::compare {

// Starts decoding `video` (audio as stereo fp32 resampled to `sample_rate` when > 0), keeping
// every frame when `keep_frames`, else into a ring of frame slots that the reader releases
// frame by frame. Supplied by h3p_media (media::start_video_decode); empty in a build without it.
using VideoDecoder = std::function<std::unique_ptr<runs::DecodingClip>(
    const std::filesystem::path& video, int sample_rate, bool keep_frames)>;

struct CompareParams;
struct Comparison;

// Fills the per-step series of a comparison of two runs (step_series.h supplies the LibTorch
// one); compare_pair leaves them out, with a note, when this is empty.
using StepSeries = std::function<void(Comparison& out, const CompareParams& params)>;

struct CompareParams {
  std::filesystem::path candidate;  // run directory, decoded directory or video file
  std::filesystem::path provider;
  metrics::ClipParams clip;
  double step_threshold = 1e-2;     // relative L2 marking the first drifting step
  std::optional<contract::Contract> contract;  // --contract: bounds to judge by
  bool post_hoc = false;            // allow a contract of another digest (reported as post-hoc)
  std::vector<contract::Contract> known_contracts;  // compiled-in contracts
  VideoDecoder decode_video;
  StepSeries step_series;
  // When set, each video file's decoded frames and audio are also kept here, in the raw-frame
  // form (<work_dir>/candidate or /provider), for the workbench.
  std::filesystem::path work_dir;
  std::function<void(double, const std::string&)> progress;
  // One "key: value" per line.
  std::string describe() const;
};

// One side as opened.
struct SideInfo {
  std::filesystem::path path;
  std::string kind;        // "run", "decoded" or "video"
  std::string impl_spec;   // runs only
  std::optional<std::uint64_t> seed;
  std::string contract_name, contract_digest;
  // Runs only: the numerics segments (runs/numerics_segments.h) in words, and whether the run
  // is mixed (a segment continued although its spot check differed).
  std::string segments;
  int segment_count = 1;
  bool mixed = false;
};

// Per step: the candidate's saved velocities and the latents entering the step, against the
// provider's.
struct StepRow {
  int step = 0;
  metrics::TensorDiff video, audio;                // velocities (sample, audio_sample)
  metrics::TensorDiff video_latent, audio_latent;  // hidden_states, audio_hidden_states
};

struct Comparison {
  SideInfo candidate, provider;
  metrics::ClipComparison clip;
  std::vector<StepRow> steps;              // empty unless both sides are runs
  int first_step_over = -1;                // first step whose velocity rel L2 > threshold
  double step_threshold = 0;
  std::optional<metrics::TensorDiff> final_video_latents, final_audio_latents;
  BoundsChoice bounds;
  std::vector<std::string> failures;       // bounds failed (empty when passed)
  std::vector<std::string> notes;          // what was not computed and why
  // The provider's own spread on this seed (noise_floor.h); none without variant runs.
  std::optional<NoiseFloor> noise_floor;
  // True/false against the bounds; nullopt without bounds.
  std::optional<bool> passed() const;
};

// Compares one pair. Throws InputError when the sides cannot be read or are not comparable.
Comparison compare_pair(const CompareParams& params);

// Whether `path` is a run directory (it holds manifest.json).
bool is_run(const std::filesystem::path& path);

// Expands a path into runs: a run directory (manifest.json) stays itself; a directory whose
// seed-*/ subdirectories are runs gives those, sorted by seed; anything else stays as given.
std::vector<std::filesystem::path> expand_runs(const std::filesystem::path& path);

// Pairs every candidate with a provider: with one provider, all against it; otherwise by seed
// (and contract digest). Throws InputError for a candidate run without a matching provider.
std::vector<std::pair<std::filesystem::path, std::filesystem::path>> pair_sides(
    const std::vector<std::filesystem::path>& candidates,
    const std::vector<std::filesystem::path>& providers);

}  // namespace h3p::compare
