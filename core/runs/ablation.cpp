#include "core/runs/ablation.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <sstream>

#include "core/common/error.h"
#include "core/model/weights.h"
#include "core/ops/device.h"
#include "core/ops/group_ops.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/runs/call_runner.h"
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

// The runner of one impl spec over the ablation's model and device.
std::unique_ptr<CallRunner> runner_for(const ComparedRuns& runs, const std::string& spec,
                                       const AblationParams& params,
                                       const ops::OpSetPtr& candidate) {
  return std::make_unique<CallRunner>(runs.transformer, ops::ImplSpec::parse(spec), candidate,
                                      ops::resolve_device(params.device),
                                      params.fused_candidate);
}

// Runs `call`; a provider variant this build or device cannot run becomes its error text.
template <typename Call>
std::string variant_error(const std::string& spec, Call&& call) {
  try {
    call();
    return {};
  } catch (const CheckFailed&) {
    throw;
  } catch (const std::exception& e) {
    // The first line only: LibTorch appends a backtrace to its errors.
    const std::string what = e.what();
    return spec + ": " + what.substr(0, what.find('\n'));
  }
}

}  // namespace

std::string AblationParams::describe() const {
  std::ostringstream out;
  out << "provider_run: " << provider_run.string() << "\ncandidate_run: "
      << candidate_run.string() << "\nstep: " << step << "\ndevice: " << device << "\n";
  for (const std::string& v : variants) out << "variant: " << v << "\n";
  return out.str();
}

AblationResult run_ablation(const AblationParams& params, const ops::OpSetPtr& candidate) {
  ComparedRuns runs = open_compared(params);
  RunReader& provider = runs.provider;
  RunReader& cand = runs.candidate;
  const RunReader::Step step = provider.step(params.step);

  AblationResult result;
  result.params = params;
  result.provider_spec = provider.manifest().impl_spec;
  result.candidate_spec = cand.manifest().impl_spec;

  // The specs replayed, in table order: the candidate run's own spec (the built-in candidate
  // or a plugin), then that spec with each group it runs swapped back to the provider.
  const ops::ImplSpec base = ops::ImplSpec::parse(result.candidate_spec);
  // An imported provider run (import:LABEL) was computed elsewhere: its replay row is this
  // binary's provider against it (for a diffusers recording, the provider against diffusers).
  const bool imported = !provider.manifest().imported.is_null();
  std::vector<std::pair<std::string, std::string>> specs = {
      {imported ? std::string("provider") : result.provider_spec,
       imported ? "provider against the imported run " + result.provider_spec
                : std::string("provider replay (must be bitwise equal)")},
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
  const std::size_t candidate_rows = specs.size();
  for (const std::string& v : params.variants) {
    specs.push_back({v, "provider variant: the provider's own spread"});
  }

  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& [text, what] = specs[i];
    if (params.progress) params.progress(static_cast<double>(i) / specs.size(), text);
    AblationRow row;
    row.impl_spec = text;
    row.what = what;
    row.variant = i >= candidate_rows;
    auto replay = [&] {
      const auto runner = runner_for(runs, text, params, candidate);
      const auto start = std::chrono::steady_clock::now();
      const model::CallOutputs out = runner->forward(step.inputs);
      row.video = metrics::diff_tensors(out.sample.to(at::kCPU), step.saved.sample, text + " sample");
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      row.audio = metrics::diff_tensors(out.audio_sample.to(at::kCPU), step.saved.audio_sample,
                                        text + " audio_sample");
    };
    if (row.variant) {
      row.error = variant_error(text, replay);
    } else {
      replay();
    }
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
    nlohmann::json row = {{"impl_spec", r.impl_spec}, {"what", r.what}, {"variant", r.variant}};
    if (r.error.empty()) {
      row.update({{"video", diff_json(r.video)}, {"audio", diff_json(r.audio)},
                  {"seconds", r.seconds}});
    } else {
      row["error"] = r.error;
    }
    rows_json.push_back(row);
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
    const std::string label = "`" + r.impl_spec + "`" + (r.variant ? " (variant)" : "");
    if (!r.error.empty()) {
      out << "| " << label << " | not run: " << r.error << " | | | | |\n";
      continue;
    }
    out << "| " << label << " | " << fmt(r.video.rel_l2) << " | " << fmt(r.audio.rel_l2)
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
  const auto candidate_runner = runner_for(runs, cand.manifest().impl_spec, params, candidate);
  StepStore candidate_store(cand.paths());
  DriftResult result;
  // The variants that run here; one that cannot is reported once and left out.
  std::vector<std::pair<std::string, std::unique_ptr<CallRunner>>> variants;
  for (const std::string& v : params.variants) {
    std::unique_ptr<CallRunner> runner;
    const std::string error = variant_error(v, [&] { runner = runner_for(runs, v, params, candidate); });
    if (error.empty()) {
      variants.emplace_back(v, std::move(runner));
    } else {
      result.variant_errors.push_back(error);
    }
  }
  const int steps = provider.saved_steps();
  for (int k = 0; k < steps; ++k) {
    if (params.progress) params.progress(static_cast<double>(k) / steps, "step " + std::to_string(k));
    const RunReader::Step step = provider.step(k);
    const model::CallOutputs out = candidate_runner->forward(step.inputs);
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
    for (auto it = variants.begin(); it != variants.end();) {
      VariantDrift d{it->first, {}, {}};
      const std::string error = variant_error(it->first, [&] {
        const model::CallOutputs v = it->second->forward(step.inputs);
        d.video = metrics::diff_tensors(v.sample.to(at::kCPU), step.saved.sample, "sample");
        d.audio = metrics::diff_tensors(v.audio_sample.to(at::kCPU), step.saved.audio_sample, "audio");
      });
      if (!error.empty()) {  // e.g. a backend that refuses this step's shape: dropped throughout
        result.variant_errors.push_back(error);
        for (DriftRow& done : result.rows) {
          std::erase_if(done.variants, [&](const VariantDrift& x) { return x.impl_spec == it->first; });
        }
        it = variants.erase(it);
        continue;
      }
      row.variants.push_back(d);
      ++it;
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
    if (!r.variants.empty()) {
      nlohmann::json variants = nlohmann::json::array();
      for (const VariantDrift& v : r.variants) {
        variants.push_back({{"impl_spec", v.impl_spec},
                            {"video_rel_l2", v.video.rel_l2},
                            {"audio_rel_l2", v.audio.rel_l2}});
      }
      row["variants"] = variants;
    }
    steps.push_back(row);
  }
  nlohmann::json out = {{"steps", steps}};
  if (!variant_errors.empty()) out["variant_errors"] = variant_errors;
  return out;
}

std::string DriftResult::to_markdown() const {
  std::ostringstream out;
  out << "## Per-step drift\n\nTeacher-forced: the candidate on the provider's saved inputs of "
         "each step (one-step error). Free-running: the candidate run's own call against the "
         "provider's (accumulated drift).\n\n"
      << "| step | t video | t audio | teacher video | teacher audio | free video | free audio "
         "| variants video (min..max) |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  for (const DriftRow& r : rows) {
    std::string band = "-";
    if (!r.variants.empty()) {
      double lo = r.variants.front().video.rel_l2, hi = lo;
      for (const VariantDrift& v : r.variants) {
        lo = std::min(lo, v.video.rel_l2);
        hi = std::max(hi, v.video.rel_l2);
      }
      band = fmt(lo) + " .. " + fmt(hi);
    }
    out << "| " << r.step << " | " << r.video_t << " | " << r.audio_t << " | "
        << fmt(r.teacher_video.rel_l2) << " | " << fmt(r.teacher_audio.rel_l2) << " | "
        << (r.free_video ? fmt(r.free_video->rel_l2) : "-") << " | "
        << (r.free_audio ? fmt(r.free_audio->rel_l2) : "-") << " | " << band << " |\n";
  }
  if (!rows.empty() && !rows.front().variants.empty()) {
    out << "\nVariants: ";
    for (const VariantDrift& v : rows.front().variants) out << "`" << v.impl_spec << "` ";
    out << "(each on the same saved inputs, against the provider's saved outputs).\n";
  }
  for (const std::string& e : variant_errors) out << "\nNot run: " << e << "\n";
  return out.str();
}

}  // namespace h3p::runs
