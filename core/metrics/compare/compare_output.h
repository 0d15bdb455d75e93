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
//  "step_threshold", "first_step_over_threshold", "final_latents", "notes"}.
nlohmann::json to_json(const Comparison& comparison);

// One comparison: to_json(it). Several: {"comparisons": [...], "passed": all passed (null when
// none has bounds)}.
nlohmann::json to_json(const std::vector<Comparison>& comparisons);

// Summary table, then per comparison its failures, notes, per-step table and per-frame table.
std::string to_markdown(const std::vector<Comparison>& comparisons);

// The terminal summary table, one row per comparison, then failures and notes.
std::string terminal_table(const std::vector<Comparison>& comparisons);

// "pass", "FAIL" or "-" (no bounds).
std::string verdict(const Comparison& comparison);

}  // namespace h3p::compare
