#include "core/runs/run_reader.h"

#include "core/common/error.h"
#include "core/contract/builtin_model.h"
#include "core/model/call_file.h"
#include "core/runs/run_inputs.h"

namespace h3p::runs {

RunReader RunReader::open(const std::filesystem::path& run_dir) {
  RunReader r{RunPaths(run_dir)};
  if (!std::filesystem::exists(r.paths_.manifest())) {
    throw_input(run_dir.string(), "not a run directory (no manifest.json)");
  }
  r.manifest_ = read_manifest(r.paths_.manifest());
  check_digest(r.paths_.noise(), r.manifest_.noise_digest, r.paths_.manifest());
  check_digest(r.paths_.conditioning(), r.manifest_.conditioning_digest, r.paths_.manifest());
  r.conditioning_ = read_conditioning(r.paths_.conditioning());
  r.plan_ = plan_from_params(r.manifest_.params, r.conditioning_, r.paths_.manifest());
  r.noise_ = read_noise(r.paths_.noise(), r.plan_.keyframe_shapes.size());
  r.store_.emplace(r.paths_);
  r.saved_ = std::min(r.store_->count_complete(), r.plan_.num_calls());
  r.state_ = sampling::initial_state(r.plan_, r.conditioning_, r.noise_);
  return r;
}

std::filesystem::path RunReader::model_dir() const {
  auto it = manifest_.environment.find("model");
  if (it == manifest_.environment.end() || !it->is_string()) return {};
  const std::string model = it->get<std::string>();
  if (const auto builtin = contract::parse_builtin_model(model)) {
    // Built-in models materialise under RUNS/models/<name>; the run is
    // RUNS/<contract>/<impl>/seed-<n>.
    const auto runs_root = std::filesystem::absolute(paths_.root()).lexically_normal()
                               .parent_path().parent_path().parent_path();
    return runs_root / "models" / builtin->directory_name();
  }
  return model;
}

RunReader::Step RunReader::step(int step) {
  if (step < 0 || step >= saved_) {
    throw_input(paths_.root().string(), "step " + std::to_string(step) + " is not saved (" +
                                            std::to_string(saved_) + " saved steps)");
  }
  if (step < position_) {
    state_ = sampling::initial_state(plan_, conditioning_, noise_);
    position_ = 0;
  }
  while (true) {
    model::CallInputs inputs = sampling::step_inputs(plan_, state_, position_);
    LoadedStep saved = store_->load(position_, input_digest(model::named_call_inputs(inputs)));
    if (position_ == step) return {std::move(inputs), std::move(saved)};
    sampling::apply_step(plan_, state_, {saved.sample, saved.audio_sample}, position_);
    ++position_;
  }
}

}  // namespace h3p::runs
