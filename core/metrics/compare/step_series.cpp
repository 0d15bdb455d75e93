#include "core/metrics/compare/step_series.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/io/aten_bridge.h"
#include "core/metrics/tensor_diff.h"
#include "core/runs/run_reader.h"

namespace h3p::compare {
namespace fs = std::filesystem;

void add_step_series(Comparison& out, const CompareParams& params) {
  const fs::path& candidate = params.candidate;
  const fs::path& provider = params.provider;
  runs::RunReader p = runs::RunReader::open(provider);
  runs::RunReader c = runs::RunReader::open(candidate);
  const int steps = std::min(p.saved_steps(), c.saved_steps());
  if (p.saved_steps() != c.saved_steps()) {
    out.notes.push_back("saved steps differ (candidate " + std::to_string(c.saved_steps()) +
                        ", provider " + std::to_string(p.saved_steps()) + "): per-step series "
                        "over the first " + std::to_string(steps));
  }
  for (int k = 0; k < steps; ++k) {
    if (params.progress) params.progress(0.5 * k / std::max(1, steps), "step " + std::to_string(k));
    const runs::RunReader::Step ps = p.step(k);
    const runs::RunReader::Step cs = c.step(k);
    StepRow row;
    row.step = k;
    row.video = metrics::diff_tensors(cs.saved.sample, ps.saved.sample, "step sample");
    row.audio = metrics::diff_tensors(cs.saved.audio_sample, ps.saved.audio_sample,
                                      "step audio_sample");
    row.video_latent = metrics::diff_tensors(cs.inputs.hidden_states, ps.inputs.hidden_states,
                                             "step hidden_states");
    row.audio_latent = metrics::diff_tensors(cs.inputs.audio_hidden_states,
                                             ps.inputs.audio_hidden_states,
                                             "step audio_hidden_states");
    if (out.first_step_over < 0 &&
        (row.video.rel_l2 > params.step_threshold || row.audio.rel_l2 > params.step_threshold)) {
      out.first_step_over = k;
    }
    out.steps.push_back(row);
  }
  const fs::path pl = runs::RunPaths(provider).latents();
  const fs::path cl = runs::RunPaths(candidate).latents();
  if (fs::exists(pl) && fs::exists(cl)) {
    const io::SafetensorsFile pf = io::SafetensorsFile::open(pl);
    const io::SafetensorsFile cf = io::SafetensorsFile::open(cl);
    out.final_video_latents = metrics::diff_tensors(io::load_tensor(cf, "latents"),
                                                    io::load_tensor(pf, "latents"), "latents");
    out.final_audio_latents = metrics::diff_tensors(
        io::load_tensor(cf, "audio_latents"), io::load_tensor(pf, "audio_latents"), "audio_latents");
  }
}

}  // namespace h3p::compare
