#pragma once
// Whether two runs answer the same request and so may be compared: same contract, seed, model
// (weights and config) and the same stored initial noise and conditioning (by digest).
#include <filesystem>

#include "core/runs/manifest.h"

namespace h3p::runs {

// Throws InputError "<candidate manifest>: field '<field>': <what> differs from <provider
// manifest>; the runs are not comparable" at the first difference, in the order contract,
// seed, weights, config, noise, conditioning.
void check_comparable(const Manifest& provider, const std::filesystem::path& provider_manifest,
                      const Manifest& candidate, const std::filesystem::path& candidate_manifest);

}  // namespace h3p::runs
