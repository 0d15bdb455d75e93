#pragma once
// The forms a comparison is reported in: JSON (the keys ARCHITECTURE.md fixes under "compare
// --json keys", infinite values as the strings "inf" / "-inf"), Markdown, and a terminal table.
// Several comparisons give one table (candidate x seed: PSNR / SSIM / temporal RMSE / audio
// L2 / passed), as in a qualification report.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics/compare/run_compare.h"

namespace h3p::compare {

// A number as JSON: finite as is, ±inf as "inf" / "-inf", NaN as null.
nlohmann::json number_json(double value);

// {"candidate", "provider", "summary", "bounds", "failures", "frames", "audio_windows", "steps",
//  "step_threshold", "first_step_over_threshold", "final_latents", "notes", "noise_floor"};
// "bounds" carries "calibration" (rule, seeds, variants) when the contract was calibrated and
// "noise_floor" is null without variant runs.
nlohmann::json to_json(const Comparison& comparison);

// {"variants": [{"spec", "run", "psnr_db", "ssim", "temporal_rmse", "audio_rel_l2",
//  "step_video_rel_l2_max", "step_audio_rel_l2_max", "steps"}], "range": {metric: {"min",
//  "max"}}, "within_spread", "outside", "skipped"}.
nlohmann::json to_json(const NoiseFloor& noise_floor);

// Per contract and seed with variant runs: the variants' figures and range and each
// candidate's figures with its two verdicts, [{"contract", "seed", "variants", "range",
// "candidates": [{"candidate", "psnr_db", "ssim", "temporal_rmse", "audio_rel_l2",
// "within_spread", "passed"}]}].
nlohmann::json noise_floor_table_json(const std::vector<Comparison>& comparisons);

// The same as Markdown: one table per seed (empty text when no comparison has a noise floor).
std::string noise_floor_markdown(const std::vector<Comparison>& comparisons);

// One comparison: to_json(it). Several: {"comparisons": [...], "passed": all passed (null when
// none has bounds)}.
nlohmann::json to_json(const std::vector<Comparison>& comparisons);

// Summary table, then per comparison its failures, notes, per-step table and per-frame table.
std::string to_markdown(const std::vector<Comparison>& comparisons);

// The terminal summary table, one row per comparison, then failures and notes.
std::string terminal_table(const std::vector<Comparison>& comparisons);

// "pass", "FAIL" or "-" (no bounds).
std::string verdict(const Comparison& comparison);

// "within", "OUTSIDE" or "-" (no variant runs): the second verdict, the provider's own spread.
std::string spread_verdict(const Comparison& comparison);

}  // namespace h3p::compare
