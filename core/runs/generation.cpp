#include "core/runs/generation.h"

#include <initializer_list>
#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/aten_bridge.h"
#include "core/io/sha256.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/call_file.h"
#include "core/model/init_model.h"
#include "core/model/presets.h"
#include "core/ops/device.h"
#include "core/ops/group_ops.h"
#include "core/ops/provider_ops.h"
#include "core/runs/gate.h"
#include "core/model/decoder.h"
#include "core/runs/call_runner.h"
#include "core/runs/decoded_write.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/runs/environment.h"
#include "core/runs/identity.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"
#include "core/ops/numerics_env.h"
#include "core/runs/run_lock.h"
#include "core/runs/run_inputs.h"
#include "core/runs/run_paths.h"
#include "core/runs/run_setup.h"
#include "core/runs/step_store.h"
#include "core/sampling/denoise_loop.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

// Wall time of consecutive stages.
class Stopwatch {
 public:
  // Seconds since construction or the previous lap.
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

double rms(const at::Tensor& t) {
  return t.numel() == 0 ? 0.0 : std::sqrt(t.to(at::kDouble).pow(2).mean().item<double>());
}

}  // namespace

SaveInputs parse_save_inputs(const std::string& text) {
  if (text == "every") return SaveInputs::every;
  if (text == "first") return SaveInputs::first;
  if (text == "none") return SaveInputs::none;
  throw InputError("--save-inputs: must be every, first or none, got '" + text + "'");
}

std::string to_string(SaveInputs policy) {
  switch (policy) {
    case SaveInputs::every: return "every";
    case SaveInputs::first: return "first";
    case SaveInputs::none: return "none";
  }
  return "?";
}

std::string GenerateParams::describe() const {
  std::ostringstream out;
  out << "contract: " << contract.name << "\nimpl: " << impl_spec << "\nseed: " << seed
      << "\nruns: " << runs_root.string() << "\ndevice: " << device
      << "\nsave_inputs: " << to_string(save_inputs)
      << "\nverify_last_step: " << (verify_last_step ? "true" : "false")
      << "\ngate: " << (skip_gate ? "skipped" : gate_file.empty() ? "default" : gate_file.string())
      << "\n";
  return out.str();
}

fs::path materialise_model(const contract::Contract& contract, const fs::path& runs_root) {
  const auto builtin = contract.builtin_model();
  if (!builtin) return contract.model_path();
  const fs::path dir = runs_root / "models" / builtin->directory_name();
  if (fs::exists(dir / "transformer" / "config.json")) return dir;
  model::InitModelParams params;
  params.preset = model::find_preset(builtin->preset, builtin->layers.value_or(-1));
  params.seed = builtin->seed.value_or(params.preset.seed);
  params.decoders = builtin->decoders.empty() ? params.decoders : builtin->decoders;
  params.seeded_weights = builtin->seeded;
  model::init_model(dir, params);
  return dir;
}

GenerateResult generate_run(const GenerateParams& p, const ops::OpSetPtr& candidate) {
  // 1. What runs: impl spec, device, model, identity.
  const ops::ImplSpec spec = ops::ImplSpec::parse(p.impl_spec);
  const at::Device device = ops::resolve_device(p.device);
  // The spec's implementations (a plugin loaded and checked) before anything is written.
  ops::resolve_group_ops(spec, candidate);
  const fs::path model_dir = materialise_model(p.contract, p.runs_root);
  const fs::path transformer_dir = model::resolve_transformer_dir(model_dir);
  Stopwatch stage;
  const ModelIdentity identity = compute_identity(transformer_dir);
  if (p.on_stage) p.on_stage("identity", stage.lap());
  // The numerical gate, when the contract requires it: refused before anything is written.
  const nlohmann::json gate =
      check_generation_gate(p.contract, model_dir, identity, spec, device.str(),
                            {p.gate_file, p.skip_gate});
  stage.lap();
  auto loaded = model::load_transformer(transformer_dir, device);
  const model::Transformer transformer(loaded.config, std::move(loaded.weights));
  CallRunner calls(transformer, spec, candidate, device, p.fused_candidate);
  ops::wait_for_device(device);
  if (p.on_stage) p.on_stage("load", stage.lap());

  // 2. The request: geometry, conditioning, plan.
  const contract::Contract& c = p.contract;
  const sampling::Conditioning conditioning = contract_conditioning(c, loaded.config.text_dim);
  const sampling::SamplingPlan plan = contract_plan(c, conditioning);
  const auto plugin = ops::plugin::plugin_identity_for(spec);
  const nlohmann::json plugin_json =
      plugin ? ops::plugin::plugin_identity_to_json(*plugin) : nlohmann::json();
  const nlohmann::json numerics = ops::numerics_environment(
      {device, &calls.group_ops(),
       ops::AttentionShape{loaded.config.num_attention_heads, plan.layout.sequence_length,
                           loaded.config.attention_head_dim,
                           transformer.attention_dtype()},
       calls.fused_description(), plugin_json});
  if (p.on_numerics) p.on_numerics(numerics);

  // 3. The run directory, locked for this process.
  const RunPaths paths = RunPaths::locate(p.runs_root, c.name, spec.text, p.seed);
  paths.create_directories();
  RunLock lock = RunLock::acquire(paths.root());
  // A process killed mid-write leaves temporaries that nothing reads; only the lock holder
  // may remove them.
  for (const fs::path& dir :
       {paths.root(), paths.inputs_dir(), paths.steps_dir(), decoded_dir(paths)}) {
    io::remove_stale_temporaries(dir);
  }

  Manifest expected;
  expected.contract_name = c.name;
  expected.contract_digest = contract::contract_digest(c);
  expected.impl_spec = spec.text;
  expected.seed = p.seed;
  expected.identity = identity;
  expected.plugin = plugin_json;
  expected.environment = environment_info();
  expected.environment["numerics"] = numerics;
  expected.environment["device"] = ops::describe_device(device);
  expected.environment["ops"] = spec.describe();
  // Where the model lives, for tools that read the run later; location-free for presets so
  // that runs made under different runs directories stay byte-identical.
  expected.environment["model"] = model_record(c, transformer_dir);
  if (!gate.is_null()) expected.environment["gate"] = gate;
  if (const std::string fused = calls.fused_description(); !fused.empty()) {
    expected.environment["fused_call"] = fused;
  }
  expected.params = plan_params(plan, c.sampling_steps, c.video_shift, c.audio_shift,
                                to_string(p.save_inputs));

  // 4. Inputs: drawn once for a new run, read back (digest-checked) for an existing one.
  sampling::InitialNoise noise;
  std::vector<NumericsSegment> segments;
  const bool created = !fs::exists(paths.manifest());
  if (!created) {
    const Manifest existing = read_manifest(paths.manifest());
    segments = read_segments(paths, existing);
    check_compatible(existing, expected, paths.manifest());
    check_digest(paths.noise(), existing.noise_digest, paths.manifest());
    check_digest(paths.conditioning(), existing.conditioning_digest, paths.manifest());
    noise = read_noise(paths.noise(), plan.keyframe_shapes.size());
  } else {
    noise = draw_run_noise(plan, p.seed);
    write_run_inputs(paths, noise, conditioning, p.seed, expected);
    write_manifest(paths.manifest(), expected);
    segments = read_segments(paths, expected);
  }
  // The contract itself (canonical JSON; its digest is the manifest's contract_digest), so
  // tools that read the run later find the bounds fixed before generation.
  write_run_contract(paths, c);

  // 5. Replay what is saved, checking each call's inputs against its sidecar.
  StepStore store(paths, spec.text);
  sampling::SamplerState state = sampling::initial_state(plan, conditioning, noise);
  GenerateResult result;
  result.run_dir = paths.root();
  result.num_calls = plan.num_calls();
  const int saved = std::min(store.count_complete(), plan.num_calls());
  auto report = [&](StepEvent e) {
    result.steps.push_back(e);
    if (p.on_step) p.on_step(e);
  };
  // The numerics environment against the segment that computed the last saved step: checked
  // only when there are steps left to compute here.
  const NumericsSegment current = segments.back();
  const std::vector<std::string> changed =
      saved < plan.num_calls() ? numerics_changes(current.numerics, numerics)
                               : std::vector<std::string>{};
  std::optional<NumericsSegment> next;
  if (!changed.empty()) {
    next = NumericsSegment{};
    next->index = current.index + 1;
    next->first_step = saved;
    next->check = saved == 0 ? "unchecked" : "verified";
    next->changed = changed;
    next->numerics = numerics;
    next->host = expected.environment.value("hostname", "");
  }
  result.numerics_check = created ? "new run" : "same";
  store.set_segments(segment_starts(segments));
  // Under a changed environment, the two ends of the stretch the current segment computed are
  // recomputed (a library's difference can show on some inputs only: docs/numerics-environment.md).
  auto recheck = [&](int i) {
    const bool last = i == saved - 1 && (p.verify_last_step || next);
    const bool first_of_segment = next && i == current.first_step;
    return last || first_of_segment;
  };
  for (int i = 0; i < saved; ++i) {
    const model::CallInputs inputs = sampling::step_inputs(plan, state, i);
    const LoadedStep step = store.load(i, input_digest(model::named_call_inputs(inputs)));
    const model::CallOutputs outputs{step.sample, step.audio_sample};
    if (recheck(i) && !(next && next->difference)) {
      const model::CallOutputs again = calls.forward(inputs);
      if (next) next->recomputed_steps.push_back(i);
      for (auto [name, got, want] : {std::tuple{"sample", again.sample, outputs.sample},
                                     std::tuple{"audio_sample", again.audio_sample,
                                                outputs.audio_sample}}) {
        auto d = metrics::diff_tensors(got.to(at::kCPU), want, name);
        if (d.bitwise_equal) continue;
        if (!next) {
          throw CheckFailed(paths.step_file(i).string() + ": recomputing step " +
                            std::to_string(i) + " gives a different '" + name +
                            "' (relative L2 " + short_figure(d.rel_l2) + ")");
        }
        if (!p.accept_new_numerics) {
          throw InputError(
              paths.manifest().string() + ": field 'environment.numerics': this process's "
              "numerics environment differs from the one that computed steps " +
              std::to_string(current.first_step) + "-" + std::to_string(saved - 1) + " (" +
              describe_changes(current.numerics, numerics, changed) + "), and recomputing "
              "step " + std::to_string(i) + " here gives a different '" + name +
              "' (relative L2 " + short_figure(d.rel_l2) + ", max |diff| " +
              short_figure(d.max_abs) + ", " + paths.step_file(i).string() +
              "): continuing would mix numerics. Resume where the run was made (slurm "
              "generate --constraint / --gpu-type pins a node type), or pass "
              "--accept-new-numerics to continue and mark the run mixed");
        }
        next->check = "accepted";
        next->difference = OutputDifference{i, name, d.rel_l2, d.max_abs};
        break;
      }
      if (i == saved - 1) result.verified_last_step = !next || !next->difference;
    }
    sampling::apply_step(plan, state, outputs, i);
    report({i, plan.num_calls(), true, plan.video_schedule.timesteps[i],
            plan.audio_schedule.timesteps[i], rms(outputs.sample), rms(outputs.audio_sample), 0});
    ++result.replayed;
  }

  // A new segment is recorded before any step it computes.
  if (next) {
    segments.push_back(*next);
    write_segments(paths, segments);
    result.numerics_check = next->check;
    result.numerics_changes = describe_changes(current.numerics, numerics, changed);
  }
  store.set_segments(segment_starts(segments));
  result.segment = segments.back().index;
  result.mixed = is_mixed(segments);

  // 6. Compute the rest.
  for (int i = saved; i < plan.num_calls(); ++i) {
    if (p.stop_requested && p.stop_requested->load()) {
      throw Preempted(paths.root().string() + ": stopped before step " + std::to_string(i));
    }
    const auto start = std::chrono::steady_clock::now();
    const model::CallInputs inputs = sampling::step_inputs(plan, state, i);
    const model::CallOutputs outputs = calls.forward(inputs);
    const bool keep_inputs = p.save_inputs == SaveInputs::every ||
                             (p.save_inputs == SaveInputs::first && i == 0);
    store.save(i, model::named_call_inputs(inputs), keep_inputs,
               model::named_call_outputs(outputs));
    sampling::apply_step(plan, state, {outputs.sample.to(at::kCPU), outputs.audio_sample.to(at::kCPU)}, i);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report({i, plan.num_calls(), false, plan.video_schedule.timesteps[i],
            plan.audio_schedule.timesteps[i], rms(outputs.sample), rms(outputs.audio_sample),
            seconds});
    ++result.computed;
  }

  // 7. Final latents, written when missing or different (a fresh file is byte-identical).
  const sampling::FinalLatents latents = sampling::final_latents(plan, state);
  const bool latents_changed = write_final_latents(paths, latents);

  result.segments = describe_segments(segments, std::min(store.count_complete(), plan.num_calls()));

  // 8. Decoded video and audio, when the model has its decoders (vae/, audio_vae/); decoded
  // again only when the latents changed or the decoded files are incomplete.
  stage.lap();
  result.decoded = decode_run_outputs(paths, model_dir, latents, device, c.fps,
                                      c.audio_sample_rate, latents_changed, p.on_decode);
  if (p.on_stage && result.decoded) p.on_stage("decode", stage.lap());
  return result;
}

}  // namespace h3p::runs
