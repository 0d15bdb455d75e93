// `h3parity compare`: candidate runs (or video files) against provider runs: per-frame,
// per-step and summary metrics judged by the bounds fixed at generation, and beside them the
// noise floor (the provider variants of the same seed); a terminal table, JSON and Markdown.
// Exit 1 when any comparison fails its bounds (the noise-floor verdict never changes it).
#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/compare_setup.h"
#include "app/cli/embedded_contracts.h"
#include "app/cli/progress.h"
#ifndef H3P_HAVE_MEDIA
#include "app/cli/video_module.h"
#endif
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/metrics/compare/compare_output.h"
#include "core/metrics/compare/noise_floor.h"
#include "core/metrics/compare/run_compare.h"
#include "core/metrics/yuv_swscale_exact.h"
#ifdef H3P_HAVE_MEDIA
#include "core/media/video_stream.h"
#include "core/media/yuv_swscale.h"
#endif

namespace h3p::cli {

compare::CompareParams base_compare_params(const GlobalOptions& global,
                                           const std::string& contract, bool post_hoc,
                                           int threads, const std::string& yuv) {
  compare::CompareParams params;
  params.step_series = global.step_series;
  if (!contract.empty()) params.contract = contract::load_contract(contract);
  params.post_hoc = post_hoc;
  params.known_contracts.push_back(contract::parse_contract(
      nlohmann::json::parse(demo_contract_json()), "embedded demo contract"));
  params.clip.threads = threads;
  if (yuv != "builtin" && yuv != "swscale" && yuv != "libswscale") {
    throw InputError("--yuv: must be swscale, libswscale or builtin, got '" + yuv + "'");
  }
  if (yuv == "swscale") {  // libswscale's bytes without the library
    params.clip.yuv = [] { return metrics::make_swscale_exact_yuv_converter(); };
  }
#ifdef H3P_HAVE_MEDIA
  params.decode_video = [](const std::filesystem::path& video, int rate, bool keep_frames) {
    return media::start_video_decode(video, rate, 0, keep_frames);
  };
  if (yuv == "libswscale") params.clip.yuv = [] { return media::make_swscale_yuv_converter(); };
#else
  if (yuv == "libswscale") throw InputError("--yuv: libswscale: this build has no FFmpeg");
#endif
  return params;
}

namespace {

using Pairs = std::vector<std::pair<std::filesystem::path, std::filesystem::path>>;

bool has_video_file(const Pairs& pairs) {
  for (const auto& [candidate, provider] : pairs) {
    if (std::filesystem::is_regular_file(candidate) || std::filesystem::is_regular_file(provider)) {
      return true;
    }
  }
  return false;
}

// Whether this executable lacks what comparing `pairs` needs: per-step series (two runs), a
// video decoder (a video file) or FFmpeg itself (--yuv libswscale).
bool lacks_for(const Pairs& pairs, const std::string& yuv, const GlobalOptions& global,
               bool decodes_video) {
#ifdef H3P_HAVE_MEDIA
  constexpr bool kMedia = true;
#else
  constexpr bool kMedia = false;
#endif
  if (!kMedia && yuv == "libswscale") return true;
  if (!decodes_video && has_video_file(pairs)) return true;
  for (const auto& [candidate, provider] : pairs) {
    if (!global.step_series && compare::is_run(candidate) && compare::is_run(provider)) {
      return true;
    }
  }
  return false;
}

}  // namespace

void add_compare(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::vector<std::string> candidates, providers, variants;
    std::string json, markdown, contract, work;
    std::string yuv = "swscale";
    bool post_hoc = false;
    int threads = 0;
    double threshold = 1e-2;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "candidate run(s) against provider run(s): per-frame PSNR/SSIM (fp32 and "
                 "ffmpeg-compatible), temporal RMSE, audio L2, per-step drift, pass/fail against "
                 "the bounds fixed at generation");
  cmd->add_option("--candidate", opt->candidates,
                  "candidate run, directory of seed-* runs, decoded-frames directory or video "
                  "file (repeatable)")
      ->required();
  cmd->add_option("--provider", opt->providers,
                  "provider run (or directory of seed-* runs, or video file); several are "
                  "matched to candidates by seed")
      ->required();
  cmd->add_option("--variant", opt->variants,
                  "provider variant run (or directory of seed-* runs) measured against the "
                  "provider of its seed for the noise floor, besides the provider-variant runs "
                  "found beside the provider run (repeatable)");
  cmd->add_option("--json", opt->json, "write the result as JSON");
  cmd->add_option("--markdown", opt->markdown, "write the result as Markdown");
  cmd->add_option("--contract", opt->contract,
                  "contract whose bounds to judge by (must be the runs' contract unless --post-hoc)");
  cmd->add_flag("--post-hoc", opt->post_hoc,
                "accept a --contract other than the runs' and report its bounds as post-hoc");
  cmd->add_option("--threads", opt->threads, "worker threads (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--threshold", opt->threshold,
                  "velocity relative L2 that marks the first drifting step")
      ->capture_default_str();
  cmd->add_option("--yuv", opt->yuv,
                  "RGB->yuv420p conversion of the ffmpeg-compatible figures: swscale "
                  "(libswscale's conversion as the ffmpeg CLI does it, reimplemented byte for "
                  "byte), libswscale (through the library; needs media) or builtin")
      ->capture_default_str();
  cmd->add_option("--work", opt->work, "also keep video files decoded here, as decoded-frames directories");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      std::vector<std::filesystem::path> candidates, providers;
      for (const auto& c : opt->candidates) {
        for (const auto& p : compare::expand_runs(c)) candidates.push_back(p);
      }
      for (const auto& c : opt->providers) {
        for (const auto& p : compare::expand_runs(c)) providers.push_back(p);
      }
      const auto pairs = compare::pair_sides(candidates, providers);
      std::vector<std::filesystem::path> variants;
      for (const auto& v : opt->variants) {
        for (const auto& p : compare::expand_runs(v)) variants.push_back(p);
      }
      compare::CompareParams base =
          base_compare_params(global, opt->contract, opt->post_hoc, opt->threads, opt->yuv);
#ifndef H3P_HAVE_MEDIA
      // The front opens the video module only when a video file is compared.
      if (has_video_file(pairs)) base.decode_video = video_decoder_from_module();
#endif
      if (global.hand_over && lacks_for(pairs, opt->yuv, global, bool(base.decode_video))) {
        global.hand_over();
      }
      base.step_threshold = opt->threshold;
      base.work_dir = opt->work;
      std::vector<compare::Comparison> results;
      ProgressBar bar("compare", parse_progress_mode(global.progress));
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        compare::CompareParams params = base;
        params.candidate = pairs[i].first;
        params.provider = pairs[i].second;
        if (!opt->work.empty() && pairs.size() > 1) {
          params.work_dir = std::filesystem::path(opt->work) / std::to_string(i);
        }
        params.progress = [&](double f, const std::string& what) {
          bar.update((i + f) / pairs.size(), what);
        };
        results.push_back(compare::compare_pair(params));
        compare::add_noise_floor(results.back(), params, variants);
      }
      bar.finish();
      // Every --variant must have served some comparison.
      for (const auto& v : variants) {
        const bool used = std::any_of(results.begin(), results.end(), [&](const auto& r) {
          std::error_code e;
          if (std::filesystem::equivalent(v, r.candidate.path, e)) return true;
          return r.noise_floor && std::any_of(r.noise_floor->variants.begin(),
                                              r.noise_floor->variants.end(), [&](const auto& f) {
                                                return std::filesystem::equivalent(v, f.run, e);
                                              });
        });
        if (!used) {
          throw InputError("--variant " + v.string() + ": no compared provider run of the same "
                           "contract and seed");
        }
      }
      std::fputs(compare::terminal_table(results).c_str(), stdout);
      if (!opt->json.empty()) {
        io::atomic_write_text(opt->json, compare::to_json(results).dump(2) + "\n");
      }
      if (!opt->markdown.empty()) io::atomic_write_text(opt->markdown, compare::to_markdown(results));
      for (const auto& r : results) {
        if (r.passed() && !*r.passed()) return 1;
      }
      return 0;
    };
  });
}

}  // namespace h3p::cli
