#pragma once
// The noise floor of a comparison: the provider's own spread on the same seed. Each provider
// variant run (the provider with a backend forced, `provider:attention=math`) is measured
// against the provider run with the same comparison, and a candidate's figures are read beside
// the variants' range. It gives a second verdict, "within the provider's own spread" (no worse
// than the worst variant on every metric), next to the bounds verdict, never in its place.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/clip_compare.h"

namespace h3p::compare {

struct Comparison;
struct CompareParams;

// One variant run against the provider run of its seed.
struct VariantFigures {
  struct Step {
    int step = 0;
    double video_rel_l2 = 0, audio_rel_l2 = 0;  // velocity relative L2
  };
  std::string spec;                   // the variant's impl spec
  std::filesystem::path run;
  double psnr_db = 0, ssim = 0, temporal_rmse = 0;  // psnr_db may be +inf
  std::optional<double> audio_rel_l2;                // none without audio
  std::vector<Step> steps;                           // per-step drift (empty without runs)
};

// Smallest and largest value of one metric over the variants.
struct FigureRange {
  double min = 0, max = 0;
};

struct NoiseFloor {
  std::vector<VariantFigures> variants;  // non-empty
  FigureRange psnr_db, ssim, temporal_rmse;
  std::optional<FigureRange> audio_rel_l2;  // none when no variant has audio
  // Metrics on which the candidate is worse than the worst variant, one line each ("psnr_db
  // 41.2 < worst variant 45.3"); empty when within the provider's own spread.
  std::vector<std::string> outside;
  std::vector<std::string> skipped;  // variant runs found but not measured: "<run>: <why>"
  bool within_spread() const { return outside.empty(); }
};

// True for "provider:<overrides>" whose overrides force at least one provider backend and run
// nothing but the provider (`provider:attention=flash`, `provider:gemm=cublaslt`); false for
// `provider` itself and for specs that run a candidate or a plugin.
bool is_provider_variant(const std::string& impl_spec);

// The figures of `variant_vs_provider` (a comparison whose candidate side is the variant).
VariantFigures variant_figures(const Comparison& variant_vs_provider);

// The ranges of `variants` and the candidate's place against them; nullopt when `variants` is
// empty.
std::optional<NoiseFloor> make_noise_floor(std::vector<VariantFigures> variants,
                                           const metrics::ClipComparison& candidate);

// Provider-variant runs beside `provider_run` (RUNS/<contract>/<impl>/seed-<n>): the same
// seed under every sibling impl directory whose manifest names a provider variant of the same
// contract digest and seed; sorted by impl spec.
std::vector<std::filesystem::path> find_variant_runs(const std::filesystem::path& provider_run);

// Sets out.noise_floor from the variant runs of the provider's seed: those found beside it and
// those in `explicit_variants` of the same contract and seed (others are left out), each
// measured against params.provider with `params` (the candidate run itself never counts). A
// found run that cannot be measured is listed in `skipped`; an explicit one throws InputError.
// Does nothing when the provider side is not a run.
void add_noise_floor(Comparison& out, const CompareParams& params,
                     const std::vector<std::filesystem::path>& explicit_variants);

}  // namespace h3p::compare
