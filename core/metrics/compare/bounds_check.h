#pragma once
// Which quality bounds a comparison is judged by, and the judgement. Bounds are fixed before
// generation: a run records its contract's digest, so the bounds come from a contract whose
// digest equals the runs' (a contract.json kept in the run or contract directory, a contract
// given on the command line, or one compiled into the binary). Other bounds are used only when
// asked for, and are then reported as a second, post-hoc rule.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/metrics/clip_compare.h"

namespace h3p::compare {

struct BoundsChoice {
  std::optional<contract::Bounds> bounds;  // none: no pass/fail
  std::string source;                      // where they came from, for the report
  bool post_hoc = false;                   // not the bounds the runs were generated under
  // How the chosen contract's bounds were calibrated; none for hand-written bounds.
  std::optional<contract::Calibration> calibration;
};

// Picks the bounds of a run whose manifest records `contract_digest` (empty for a video file):
// the first of `candidates` (contracts, in order of preference) with that digest. A given
// contract of another digest throws InputError naming it, unless `allow_post_hoc`, which then
// returns its bounds marked post-hoc. Also reads `<run>/contract.json` and
// `<run>/../../contract.json` when present (checked by digest).
BoundsChoice choose_bounds(const std::string& contract_digest, const std::filesystem::path& run_dir,
                           const std::optional<contract::Contract>& given, bool allow_post_hoc,
                           const std::vector<contract::Contract>& known);

// `v` as %.6g, the form figures take in failure lines.
std::string figure_text(double v);

// The bounds a clip comparison fails, one line each ("psnr_db 28.1 < psnr_db_min 30"); empty
// when it passes. A bound on audio fails when there is no audio to compare.
std::vector<std::string> bound_failures(const metrics::ClipComparison& clip,
                                        const contract::Bounds& bounds);

}  // namespace h3p::compare
