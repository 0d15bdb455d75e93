#pragma once
// The per-step series of a comparison of two runs (run_compare.h), on LibTorch: every saved
// step's velocities and entering latents rebuilt by replaying both runs, and the final latents.
#include "core/metrics/compare/run_compare.h"

namespace h3p::compare {

// Fills out.steps, out.first_step_over and the final-latent differences for the runs
// params.candidate and params.provider; a CompareParams::step_series. Throws InputError when a
// run's steps cannot be read.
void add_step_series(Comparison& out, const CompareParams& params);

}  // namespace h3p::compare
