// `h3parity demo`: the main job on the embedded tiny model: every seed of the demo contract
// with the provider and the candidate (resumable), then for the first seed the per-step drift
// (free-running and teacher-forced) and the step-0 operator-swap ablation table.
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/embedded_contracts.h"
#include "app/cli/progress.h"
#include "app/cli/stop_signals.h"
#include "app/cli/compare_setup.h"
#include "core/io/atomic_file.h"
#include "core/metrics/compare/compare_output.h"
#include "core/metrics/compare/evidence_report.h"
#include "core/runs/decoded.h"
#ifdef H3P_HAVE_MEDIA
#include "core/media/clip_export.h"
#endif
#include "core/runs/ablation.h"
#include "core/runs/generation.h"

namespace h3p::cli {
namespace {

void print_step_table(const runs::GenerateResult& provider, const runs::DriftResult* drift) {
  std::printf("\n%4s %9s %9s | %8s %8s", "step", "t_video", "t_audio", "|v| vid", "|v| aud");
  if (drift) std::printf(" | %11s %11s | %11s %11s", "free vid", "free aud", "1-step vid", "1-step aud");
  std::printf("\n");
  for (std::size_t i = 0; i < provider.steps.size(); ++i) {
    const auto& e = provider.steps[i];
    std::printf("%4zu %9.6f %9.6f | %8.4f %8.4f", i, e.video_t, e.audio_t, e.video_velocity_rms,
                e.audio_velocity_rms);
    if (drift && i < drift->rows.size()) {
      const auto& r = drift->rows[i];
      std::printf(" | %11.3e %11.3e | %11.3e %11.3e", r.free_video ? r.free_video->rel_l2 : 0.0,
                  r.free_audio ? r.free_audio->rel_l2 : 0.0, r.teacher_video.rel_l2,
                  r.teacher_audio.rel_l2);
    }
    std::printf("\n");
  }
  std::printf("(|v|: RMS of the provider's velocities; free: the candidate run's call against the "
              "provider's, relative L2; 1-step: the candidate on the provider's inputs)\n");
}

}  // namespace

void add_demo(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string runs = "runs";
    std::string contract;
    std::string candidate = "candidate";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "the main job on the embedded tiny model: generate every seed of the demo "
              "contract with the provider and the candidate (resumable), then the per-step "
              "drift and the step-0 ablation table");
  cmd->add_option("--runs", opt->runs, "runs directory")->capture_default_str();
  cmd->add_option("--contract", opt->contract, "contract to use instead of the embedded demo");
  cmd->add_option("--candidate", opt->candidate, "impl spec of the candidate runs")
      ->capture_default_str();
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::GenerateParams params;
      params.contract = opt->contract.empty()
                            ? contract::parse_contract(nlohmann::json::parse(demo_contract_json()),
                                                       "embedded demo contract")
                            : contract::load_contract(opt->contract);
      params.runs_root = opt->runs;
      params.stop_requested = &install_stop_signals();
      const contract::Contract& c = params.contract;
      std::printf("demo: contract '%s', model %s, %dx%d, %d frames, %d grid points, seeds", c.name.c_str(),
                  c.model.c_str(), c.width, c.height, c.frames, c.sampling_steps);
      for (auto s : c.seeds) std::printf(" %llu", static_cast<unsigned long long>(s));
      std::printf("\n");

      const ops::OpSetPtr candidate = candidate_ops();
      std::vector<std::string> impls = {"provider"};
      if (candidate) impls.push_back(opt->candidate);
      std::map<std::pair<std::string, uint64_t>, runs::GenerateResult> results;
      for (const std::string& impl : impls) {
        for (uint64_t seed : c.seeds) {
          params.impl_spec = impl;
          params.seed = seed;
          ProgressBar bar(impl + " seed " + std::to_string(seed), parse_progress_mode(global.progress));
          params.on_step = [&](const runs::StepEvent& e) {
            bar.update(static_cast<double>(e.step + 1) / e.num_calls,
                       "step " + std::to_string(e.step + 1) + "/" + std::to_string(e.num_calls));
          };
          const runs::GenerateResult r = runs::generate_run(params, candidate);
          bar.finish();
          std::printf("%-10s seed %llu: %s (%d computed, %d replayed)\n", impl.c_str(),
                      static_cast<unsigned long long>(seed), r.run_dir.string().c_str(),
                      r.computed, r.replayed);
          results[{impl, seed}] = r;
        }
      }
      const uint64_t seed = c.seeds.front();
      const runs::GenerateResult& provider = results[{"provider", seed}];
      if (!candidate) {
        std::printf("\nno candidate OpSet in this build: provider runs only\n");
        print_step_table(provider, nullptr);
        return 0;
      }
      runs::AblationParams ablation;
      ablation.provider_run = provider.run_dir;
      ablation.candidate_run = results[{opt->candidate, seed}].run_dir;
      ablation.step = 0;
      const runs::DriftResult drift = runs::teacher_forced_drift(ablation, candidate);
      std::printf("\nseed %llu, per step:", static_cast<unsigned long long>(seed));
      print_step_table(provider, &drift);

      const runs::AblationResult table = runs::run_ablation(ablation, candidate);
      std::printf("\nseed %llu, step 0: the candidate with each operator group swapped to the "
                  "provider (relative L2 against the provider's saved outputs)\n",
                  static_cast<unsigned long long>(seed));
      std::printf("%-34s %12s %12s %8s\n", "impl spec", "video rel_l2", "audio rel_l2", "bitwise");
      for (const auto& row : table.rows) {
        std::printf("%-34s %12.3e %12.3e %8s\n", row.impl_spec.c_str(), row.video.rel_l2,
                    row.audio.rel_l2,
                    row.video.bitwise_equal && row.audio.bitwise_equal ? "yes" : "no");
      }
      const std::filesystem::path out = std::filesystem::path(opt->runs) / c.name;
      const std::string stem = "seed-" + std::to_string(seed);
      io::atomic_write_text(out / ("ablation-" + stem + "-step0.json"), table.to_json().dump(2) + "\n");
      io::atomic_write_text(out / ("ablation-" + stem + "-step0.md"), table.to_markdown());
      io::atomic_write_text(out / ("drift-" + stem + ".json"), drift.to_json().dump(2) + "\n");
      io::atomic_write_text(out / ("drift-" + stem + ".md"), drift.to_markdown());
      std::printf("\nwrote %s/{ablation-%s-step0,drift-%s}.{json,md}\n", out.string().c_str(),
                  stem.c_str(), stem.c_str());

      // Decoded outputs: the compare table of every seed against the bounds of the contract,
      // the shareable MP4s and the evidence report.
      if (!provider.decoded) {
        std::printf("\nthe model has no decoders: no pixel or audio comparison\n");
        return 0;
      }
      std::vector<compare::Comparison> comparisons;
      for (uint64_t s : c.seeds) {
        compare::CompareParams cp = base_compare_params(global, "", false, 0, "swscale");
        cp.provider = results[{"provider", s}].run_dir;
        cp.candidate = results[{opt->candidate, s}].run_dir;
        comparisons.push_back(compare::compare_pair(cp));
      }
      std::printf("\ncandidate against provider, decoded video and audio, judged by the contract's "
                  "bounds:\n%s", compare::terminal_table(comparisons).c_str());
#ifdef H3P_HAVE_MEDIA
      for (const auto& [key, r] : results) {
        media::ExportParams e;
        e.decoded_dir = runs::decoded_dir(runs::RunPaths(r.run_dir));
        e.mp4 = r.run_dir / "export" / (r.run_dir.filename().string() + ".mp4");
        if (!std::filesystem::exists(e.mp4)) media::export_clip(e);
      }
      std::printf("wrote an MP4 per run under <run>/export/\n");
#endif
      compare::ReportParams report;
      report.runs_root = opt->runs;
      report.compare = base_compare_params(global, "", false, 0, "swscale");
      const compare::ReportResult written = compare::write_report(report);
      std::printf("wrote %s (SHA256SUMS beside it)\n", written.markdown.string().c_str());
      return 0;
    };
  });
}

}  // namespace h3p::cli
