#pragma once
// Compare settings shared by `compare`, `report` and `demo`: the contracts to judge by, threads
// and the media hooks (video-file decoding, swscale colour conversion) when built with media.
#include <string>

#include "app/cli/commands.h"
#include "core/metrics/compare/run_compare.h"

namespace h3p::cli {

// `contract` (a file, may be empty) overrides the bounds found with the runs; `yuv` is
// "swscale", "libswscale" or "builtin"; the per-step series come from `global`. Throws
// InputError for an unknown `yuv`.
compare::CompareParams base_compare_params(const GlobalOptions& global,
                                           const std::string& contract, bool post_hoc,
                                           int threads, const std::string& yuv);

}  // namespace h3p::cli
