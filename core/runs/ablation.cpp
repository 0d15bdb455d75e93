#include "core/runs/ablation.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/common/error.h"
#include "core/model/weights.h"
#include "core/ops/device.h"
#include "core/ops/group_ops.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/runs/comparable.h"
#include "core/runs/identity.h"
#include "core/runs/run_reader.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

// The two runs must come from the same request: contract, seed, model and stored inputs.
void check_comparable(const RunReader& provider, const RunReader& candidate) {
  runs::check_comparable(provider.manifest(), provider.paths().manifest(), candidate.manifest(),
                         candidate.paths().manifest());
}

// Loads the model the provider run was made with and checks it is the same model.
model::Transformer load_model(const AblationParams& params, const RunReader& provider,
                              const at::Device& device) {
  fs::path dir = params.model.empty() ? provider.model_dir() : params.model;
  if (dir.empty()) {
    throw_input(provider.paths().manifest().string(),
                "records no model directory; pass --model");
  }
  dir = model::resolve_transformer_dir(dir);
  const ModelIdentity identity = compute_identity(dir);
  if (identity.weights_digest != provider.manifest().identity.weights_digest ||
      identity.config_digest != provider.manifest().identity.config_digest) {
    throw_input(dir.string(), "is not the model " + provider.paths().manifest().string() +
                                  " was generated with (weights or config differ)");
  }
  auto loaded = model::load_transformer(dir, device);
  return model::Transformer(loaded.config, std::move(loaded.weights));
}

// The two runs of an analysis, checked comparable, and the model they were made with.
struct ComparedRuns {
  RunReader provider;
  RunReader candidate;
  model::Transformer transformer;
};

// A plugin run is replayed only with the plugin bytes it was made with: another build of the
// plugin would put its numerics into the run's table.
void check_plugin_unchanged(const RunReader& run) {
  const Manifest& m = run.manifest();
  if (m.plugin.is_null()) return;
  const std::string file = (run.paths().root() / "manifest.json").string();
  const auto recorded = ops::plugin::plugin_identity_from_json(m.plugin, file);
  const auto now = ops::plugin::plugin_identity_for(ops::ImplSpec::parse(m.impl_spec));
  if (!now || !ops::plugin::same_plugin_bytes(recorded, *now)) {
    throw InputError(file + ": field 'plugin': the plugin the run's spec loads now is not the one "
                     "the run was made with (" +
                     (now ? ops::plugin::first_identity_difference(recorded, *now) : "none") +
                     "); restore it to ablate this run");
  }
}

ComparedRuns open_compared(const AblationParams& params) {
  const at::Device device = ops::resolve_device(params.device);
  RunReader provider = RunReader::open(params.provider_run);
  RunReader candidate = RunReader::open(params.candidate_run);
  check_comparable(provider, candidate);
  check_plugin_unchanged(candidate);
  model::Transformer transformer = load_model(params, provider, device);
  return {std::move(provider), std::move(candidate), std::move(transformer)};
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

nlohmann::json diff_json(const metrics::TensorDiff& d) {
  return {{"rel_l2", d.rel_l2}, {"max_abs", d.max_abs}, {"bitwise_equal", d.bitwise_equal},
          {"finite", d.finite}};
}

}  // namespace

std::string AblationParams::describe() const {
  std::ostringstream out;
  out << "provider_run: " << provider_run.string() << "\ncandidate_run: "
      << candidate_run.string() << "\nstep: " << step << "\ndevice: " << device << "\n";
  return out.str();
}

AblationResult run_ablation(const AblationParams& params, const ops::OpSetPtr& candidate) {
  ComparedRuns runs = open_compared(params);
  RunReader& provider = runs.provider;
  RunReader& cand = runs.candidate;
  const model::Transformer& transformer = runs.transformer;
  const RunReader::Step step = provider.step(params.step);

  AblationResult result;
  result.params = params;
  result.provider_spec = provider.manifest().impl_spec;
  result.candidate_spec = cand.manifest().impl_spec;

  // The specs replayed, in table order: the candidate run's own spec (the built-in candidate
  // or a plugin), then that spec with each group it runs swapped back to the provider.
  const ops::ImplSpec base = ops::ImplSpec::parse(result.candidate_spec);
  std::vector<std::pair<std::string, std::string>> specs = {
      {result.provider_spec, "provider replay (must be bitwise equal)"},
      {base.text, "candidate run's spec, every group as it ran"}};
  const std::vector<ops::Group> groups =
      params.groups.empty() ? std::vector<ops::Group>(ops::kAllGroups.begin(), ops::kAllGroups.end())
                            : params.groups;
  std::shared_ptr<const ops::plugin::LoadedPlugin> plugin;
  if (base.uses_plugin()) plugin = ops::plugin::load_plugin(base.plugin);
  for (ops::Group g : groups) {
    const std::string name(ops::group_name(g));
    // A group the run already took from the provider has nothing to swap (also one a plugin
    // does not provide, taken from `rest=provider`).
    ops::GroupChoice c = base.choice(g);
    if (c.impl == ops::Impl::plugin && !plugin->provides(g) && base.rest) c = *base.rest;
    if (c.impl == ops::Impl::provider && c.backend.empty()) continue;
    specs.push_back({base.with_override(name + "=provider"), name + " from the provider"});
  }
  specs.push_back({base.with_override("interim=provider"), "every block-interior group from the provider"});
  specs.push_back({base.with_override("all=provider"), "every group from the provider"});

  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& [text, what] = specs[i];
    if (params.progress) params.progress(static_cast<double>(i) / specs.size(), text);
    const ops::GroupOps group_ops = ops::resolve_group_ops(ops::ImplSpec::parse(text), candidate);
    const auto start = std::chrono::steady_clock::now();
    const model::CallOutputs out = transformer.forward(step.inputs, group_ops);
    AblationRow row;
    row.impl_spec = text;
    row.what = what;
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    row.video = metrics::diff_tensors(out.sample.to(at::kCPU), step.saved.sample, text + " sample");
    row.audio = metrics::diff_tensors(out.audio_sample.to(at::kCPU), step.saved.audio_sample,
                                      text + " audio_sample");
    result.rows.push_back(row);
  }
  if (params.step < cand.saved_steps()) {
    const LoadedStep own = StepStore(cand.paths()).load_saved(params.step);
    result.free_video = metrics::diff_tensors(own.sample, step.saved.sample, "free-running sample");
    result.free_audio =
        metrics::diff_tensors(own.audio_sample, step.saved.audio_sample, "free-running audio");
  }
  if (params.progress) params.progress(1.0, "done");
  return result;
}

nlohmann::json AblationResult::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const AblationRow& r : rows) {
    rows_json.push_back({{"impl_spec", r.impl_spec}, {"what", r.what},
                         {"video", diff_json(r.video)}, {"audio", diff_json(r.audio)},
                         {"seconds", r.seconds}});
  }
  nlohmann::json out = {{"provider_run", params.provider_run.string()},
                        {"candidate_run", params.candidate_run.string()},
                        {"step", params.step},
                        {"provider_spec", provider_spec},
                        {"candidate_spec", candidate_spec},
                        {"rows", rows_json}};
  if (free_video) {
    out["free_running"] = {{"video", diff_json(*free_video)}, {"audio", diff_json(*free_audio)}};
  }
  return out;
}

std::string AblationResult::to_markdown() const {
  std::ostringstream out;
  out << "## Ablation at step " << params.step << "\n\n"
      << "Provider run `" << params.provider_run.string() << "` (" << provider_spec
      << "), candidate run `" << params.candidate_run.string() << "` (" << candidate_spec
      << "). Each row replays the provider's saved inputs of the step and is measured against "
         "the provider's saved outputs.\n\n"
      << "| impl spec | video rel L2 | audio rel L2 | video max abs | audio max abs | bitwise |\n"
      << "|---|---|---|---|---|---|\n";
  for (const AblationRow& r : rows) {
    out << "| `" << r.impl_spec << "` | " << fmt(r.video.rel_l2) << " | " << fmt(r.audio.rel_l2)
        << " | " << fmt(r.video.max_abs) << " | " << fmt(r.audio.max_abs) << " | "
        << (r.video.bitwise_equal && r.audio.bitwise_equal ? "yes" : "no") << " |\n";
  }
  if (free_video) {
    out << "| candidate run, free-running | " << fmt(free_video->rel_l2) << " | "
        << fmt(free_audio->rel_l2) << " | " << fmt(free_video->max_abs) << " | "
        << fmt(free_audio->max_abs) << " | "
        << (free_video->bitwise_equal && free_audio->bitwise_equal ? "yes" : "no") << " |\n";
  }
  return out.str();
}

DriftResult teacher_forced_drift(const AblationParams& params, const ops::OpSetPtr& candidate) {
  ComparedRuns runs = open_compared(params);
  RunReader& provider = runs.provider;
  RunReader& cand = runs.candidate;
  const model::Transformer& transformer = runs.transformer;
  const ops::GroupOps group_ops =
      ops::resolve_group_ops(ops::ImplSpec::parse(cand.manifest().impl_spec), candidate);
  StepStore candidate_store(cand.paths());
  DriftResult result;
  const int steps = provider.saved_steps();
  for (int k = 0; k < steps; ++k) {
    if (params.progress) params.progress(static_cast<double>(k) / steps, "step " + std::to_string(k));
    const RunReader::Step step = provider.step(k);
    const model::CallOutputs out = transformer.forward(step.inputs, group_ops);
    DriftRow row;
    row.step = k;
    row.video_t = provider.plan().video_schedule.timesteps[k];
    row.audio_t = provider.plan().audio_schedule.timesteps[k];
    row.teacher_video = metrics::diff_tensors(out.sample.to(at::kCPU), step.saved.sample, "sample");
    row.teacher_audio =
        metrics::diff_tensors(out.audio_sample.to(at::kCPU), step.saved.audio_sample, "audio");
    if (k < cand.saved_steps()) {
      const LoadedStep own = candidate_store.load_saved(k);
      row.free_video = metrics::diff_tensors(own.sample, step.saved.sample, "sample");
      row.free_audio = metrics::diff_tensors(own.audio_sample, step.saved.audio_sample, "audio");
    }
    result.rows.push_back(row);
  }
  if (params.progress) params.progress(1.0, "done");
  return result;
}

int DriftResult::first_over(double threshold) const {
  for (const DriftRow& r : rows) {
    if (r.teacher_video.rel_l2 > threshold || r.teacher_audio.rel_l2 > threshold) return r.step;
  }
  return -1;
}

nlohmann::json DriftResult::to_json() const {
  nlohmann::json steps = nlohmann::json::array();
  for (const DriftRow& r : rows) {
    nlohmann::json row = {{"step", r.step},
                          {"video_t", r.video_t},
                          {"audio_t", r.audio_t},
                          {"teacher_forced", {{"video_rel_l2", r.teacher_video.rel_l2},
                                              {"audio_rel_l2", r.teacher_audio.rel_l2}}}};
    if (r.free_video) {
      row["free_running"] = {{"video_rel_l2", r.free_video->rel_l2},
                             {"audio_rel_l2", r.free_audio->rel_l2}};
    }
    steps.push_back(row);
  }
  return {{"steps", steps}};
}

std::string DriftResult::to_markdown() const {
  std::ostringstream out;
  out << "## Per-step drift\n\nTeacher-forced: the candidate on the provider's saved inputs of "
         "each step (one-step error). Free-running: the candidate run's own call against the "
         "provider's (accumulated drift).\n\n"
      << "| step | t video | t audio | teacher video | teacher audio | free video | free audio |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (const DriftRow& r : rows) {
    out << "| " << r.step << " | " << r.video_t << " | " << r.audio_t << " | "
        << fmt(r.teacher_video.rel_l2) << " | " << fmt(r.teacher_audio.rel_l2) << " | "
        << (r.free_video ? fmt(r.free_video->rel_l2) : "-") << " | "
        << (r.free_audio ? fmt(r.free_audio->rel_l2) : "-") << " |\n";
  }
  return out.str();
}

}  // namespace h3p::runs
