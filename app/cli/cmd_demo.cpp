// `h3parity demo`: the main job on the embedded tiny model: the demo contract's seeds with the
// provider, resumable, ending with a per-step table.
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/embedded_contracts.h"
#include "app/cli/progress.h"
#include "app/cli/stop_signals.h"
#include "core/runs/generation.h"

namespace h3p::cli {

void add_demo(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string runs = "runs";
    std::string contract;
    std::string impl = "provider";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "the main job on the embedded tiny model: generate every seed of the demo "
              "contract (resumable) and print the per-step table");
  cmd->add_option("--runs", opt->runs, "runs directory")->capture_default_str();
  cmd->add_option("--contract", opt->contract, "contract to use instead of the embedded demo");
  cmd->add_option("--impl", opt->impl, "impl spec")->capture_default_str();
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::GenerateParams params;
      params.contract = opt->contract.empty()
                            ? contract::parse_contract(nlohmann::json::parse(demo_contract_json()),
                                                       "embedded demo contract")
                            : contract::load_contract(opt->contract);
      params.impl_spec = opt->impl;
      params.runs_root = opt->runs;
      params.stop_requested = &install_stop_signals();
      std::printf("demo: contract '%s', model %s, %dx%d, %d frames, %d grid points, seeds",
                  params.contract.name.c_str(), params.contract.model.c_str(),
                  params.contract.width, params.contract.height, params.contract.frames,
                  params.contract.sampling_steps);
      for (auto s : params.contract.seeds) std::printf(" %llu", static_cast<unsigned long long>(s));
      std::printf("\n");
      std::map<uint64_t, runs::GenerateResult> results;
      for (uint64_t seed : params.contract.seeds) {
        params.seed = seed;
        ProgressBar bar("seed " + std::to_string(seed), parse_progress_mode(global.progress));
        params.on_step = [&](const runs::StepEvent& e) {
          bar.update(static_cast<double>(e.step + 1) / e.num_calls,
                     "step " + std::to_string(e.step + 1) + "/" + std::to_string(e.num_calls));
        };
        results[seed] = runs::generate_run(params, candidate_ops());
        bar.finish();
        const auto& r = results[seed];
        std::printf("seed %llu: %s (%d computed, %d replayed)\n",
                    static_cast<unsigned long long>(seed), r.run_dir.string().c_str(), r.computed,
                    r.replayed);
      }
      // Per-step table: timesteps, then per seed the RMS of the video and audio velocities
      // and the wall time of the call (blank when replayed from disk).
      std::printf("\n%4s %9s %9s", "step", "t_video", "t_audio");
      for (const auto& [seed, r] : results) {
        std::printf(" | %5s %-4llu %8s %8s", "seed", static_cast<unsigned long long>(seed),
                    "|v|", "ms");
      }
      std::printf("\n");
      const auto& first = results.begin()->second;
      for (std::size_t i = 0; i < first.steps.size(); ++i) {
        std::printf("%4zu %9.6f %9.6f", i, first.steps[i].video_t, first.steps[i].audio_t);
        for (const auto& [seed, r] : results) {
          const auto& e = r.steps[i];
          char ms[16] = "replay";
          if (!e.replayed) std::snprintf(ms, sizeof ms, "%.1f", e.seconds * 1e3);
          std::printf(" | %8.4f %8.4f %8s", e.video_velocity_rms, e.audio_velocity_rms, ms);
        }
        std::printf("\n");
      }
      std::printf("(|v|: RMS of the video and audio velocities of each call)\n");
      return 0;
    };
  });
}

}  // namespace h3p::cli
