// `h3parity bench`: time one transformer call of a preset (small by default) with the provider
// and with the candidate, in one run, on the demo geometry; print median time, GFLOP/s and the
// candidate/provider ratio. The specs' calls are interleaved (one call of each spec per round),
// so a machine whose speed drifts during the run (clocks, heat, neighbours) biases none of them.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/plugin_options.h"
#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/embedded_contracts.h"
#include "core/common/error.h"
#include "core/contract/contract.h"
#include "core/io/atomic_file.h"
#include "core/model/call_cost.h"
#include "core/model/init_model.h"
#include "core/ops/device.h"
#include "core/runs/call_runner.h"
#include "core/ops/provider_ops.h"
#include "core/sampling/denoise_loop.h"

namespace h3p::cli {
namespace {

// Wall time of one forward, its outputs on the host (as generation takes them after every
// step): a GPU call is timed to its end, not to the return of its last launch.
double call_seconds(runs::CallRunner& runner, const model::CallInputs& in) {
  const auto start = std::chrono::steady_clock::now();
  const model::CallOutputs out = runner.forward(in);
  (void)out.sample.to(at::kCPU);
  if (out.audio_sample.defined()) (void)out.audio_sample.to(at::kCPU);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

void add_bench(CLI::App& app, Action& action, const GlobalOptions&) {
  struct Options {
    std::string preset = "small", model, device = "cpu", json, contract;
    std::vector<std::string> impls{"provider", "candidate"};
    int repeats = 5;
    int threads = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "time one transformer call (demo geometry, or a contract's) for several impl "
               "specs in one run: median time, GFLOP/s, and each one's ratio to the first");
  add_check_plugin_flag(cmd);
  cmd->add_option("--preset", opt->preset, "model preset to build in a temporary directory")
      ->capture_default_str();
  cmd->add_option("--model", opt->model, "use this model directory instead of a preset");
  cmd->add_option("--impl", opt->impls, "impl specs to time; the first is the peer")
      ->capture_default_str();
  cmd->add_option("--repeats", opt->repeats, "timed calls per impl spec (median), interleaved round by round")
      ->capture_default_str();
  cmd->add_option("--device", opt->device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--threads", opt->threads,
                  "CPU threads of the provider (LibTorch) and the candidate's kernels alike; "
                  "0: one per core")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", opt->json, "also write the figures as JSON");
  cmd->add_option("--contract", opt->contract,
                  "take the call's geometry (frames, size, text tokens, steps, shifts) from this "
                  "contract instead of the demo's; the model still comes from --model/--preset");
  cmd->callback([&action, opt] {
    action = [opt] {
      namespace fs = std::filesystem;
      if (opt->repeats < 1) throw InputError("--repeats: must be >= 1");
      set_cpu_threads(opt->threads);
      const at::Device device = ops::resolve_device(opt->device);
      fs::path model_dir = opt->model;
      fs::path temp;
      if (model_dir.empty()) {
        temp = fs::temp_directory_path() / ("h3parity-bench-" + std::to_string(::getpid()));
        model::InitModelParams params;
        params.preset = model::find_preset(opt->preset);
        params.seed = params.preset.seed;
        model_dir = model::init_model(temp, params);
      }
      auto loaded = model::load_transformer(model::resolve_transformer_dir(model_dir), device);
      if (!temp.empty()) io::remove_tree(temp);
      const model::Transformer transformer(loaded.config, std::move(loaded.weights));

      // Step 0 of the demo contract's request (or --contract's), with the model's text width.
      const contract::Contract c =
          opt->contract.empty()
              ? contract::parse_contract(nlohmann::json::parse(demo_contract_json()),
                                         "embedded demo contract")
              : contract::load_contract(opt->contract);
      const auto geometry = sampling::resolve_geometry(c.frames, c.height, c.width, c.fps);
      const auto conditioning = sampling::synthesize_conditioning(
          c.prompt, c.text_tokens, transformer.config().text_dim);
      const auto plan = sampling::make_plan(geometry, conditioning, c.sampling_steps,
                                            c.video_shift, c.audio_shift);
      const auto noise = sampling::draw_initial_noise(
          42, {}, {1, sampling::kLatentChannels, geometry.num_latent_frames,
                   geometry.latent_height, geometry.latent_width},
          {plan.layout.audio_indices.size(0), sampling::kAudioLatentChannels});
      const auto inputs = sampling::step_inputs(
          plan, sampling::initial_state(plan, conditioning, noise), 0);
      const model::CallCost cost = model::call_cost(
          transformer.config(), plan.layout.sequence_length, c.text_tokens, 1);

      std::printf("bench: %s, %lld rows (%lld text), %.3f GFLOP per call, %d threads, %s, %s\n",
                  opt->model.empty() ? ("preset " + opt->preset).c_str() : opt->model.c_str(),
                  static_cast<long long>(plan.layout.sequence_length),
                  static_cast<long long>(c.text_tokens), cost.total() / 1e9,
                  at::get_num_threads(), ops::describe_device(device).c_str(),
                  ops::torch_version_string().c_str());
      int width = 28;
      for (const std::string& text : opt->impls) width = std::max(width, static_cast<int>(text.size()));
      std::printf("%-*s %12s %10s %10s\n", width, "impl spec", "median ms", "GFLOP/s", "ratio");
      // Every spec warmed up once, then `repeats` rounds of one timed call per spec.
      std::vector<std::unique_ptr<runs::CallRunner>> runners;
      for (const std::string& text : opt->impls) {
        runners.push_back(std::make_unique<runs::CallRunner>(
            transformer, ops::ImplSpec::parse(text), candidate_ops(), device, fused_candidate_call()));
        runners.back()->forward(inputs);
      }
      std::vector<std::vector<double>> times(runners.size());
      for (int r = 0; r < opt->repeats; ++r) {
        for (std::size_t i = 0; i < runners.size(); ++i) times[i].push_back(call_seconds(*runners[i], inputs));
      }
      nlohmann::json rows = nlohmann::json::array();
      const double peer = median(times[0]);
      for (std::size_t i = 0; i < runners.size(); ++i) {
        const std::string& text = opt->impls[i];
        const double s = median(times[i]);
        std::printf("%-*s %12.2f %10.2f %10.3f\n", width, text.c_str(), s * 1e3, cost.total() / s / 1e9,
                    s / peer);
        nlohmann::json ms = nlohmann::json::array();
        for (double t : times[i]) ms.push_back(t * 1e3);
        rows.push_back({{"impl", text}, {"median_ms", s * 1e3}, {"times_ms", ms},
                        {"gflops", cost.total() / s / 1e9}, {"ratio_to_first", s / peer}});
        if (const std::string fused = runners[i]->fused_description(); !fused.empty()) {
          std::printf("%-*s %s\n", width, "", fused.c_str());
          rows.back()["fused_call"] = fused;
        }
      }
      if (!opt->json.empty()) {
        nlohmann::json out = {{"preset", opt->preset},
                              {"sequence_length", plan.layout.sequence_length},
                              {"gflop_per_call", cost.total() / 1e9},
                              {"threads", at::get_num_threads()},
                              {"candidate_threads", candidate_cpu_threads()},
                              {"device", ops::describe_device(device)},
                              {"torch", ops::torch_version_string()},
                              {"repeats", opt->repeats},
                              {"rows", rows}};
        io::atomic_write_text(opt->json, out.dump(2) + "\n");
      }
      return 0;
    };
  });
}

}  // namespace h3p::cli
