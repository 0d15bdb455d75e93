// `h3parity export`: a run's stored frames and audio (decoded/) as a lossless MKV (FFV1 +
// FLAC) and a shareable MP4 (H.264 + AAC). Needs a build with media; a headless build says so.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "core/common/error.h"
#ifdef H3P_HAVE_MEDIA
#include "core/media/clip_export.h"
#endif

namespace h3p::cli {
namespace fs = std::filesystem;

void add_export(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::vector<std::string> runs;
    std::string out, mkv, mp4, preset = "medium";
    int crf = 18;
    bool no_mkv = false, no_mp4 = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "export", "turn runs' stored frames and audio into MKV (FFV1 + FLAC, lossless) and MP4 "
                "(H.264 + AAC) files");
  cmd->add_option("runs", opt->runs, "run directories (or decoded-frames directories)")
      ->required();
  cmd->add_option("--out", opt->out,
                  "directory for the files (default: <run>/export); names <seed dir>.mkv/.mp4 "
                  "when several runs share it");
  cmd->add_option("--mkv", opt->mkv, "the MKV file (one run only)");
  cmd->add_option("--mp4", opt->mp4, "the MP4 file (one run only)");
  cmd->add_flag("--no-mkv", opt->no_mkv, "skip the MKV");
  cmd->add_flag("--no-mp4", opt->no_mp4, "skip the MP4");
  cmd->add_option("--crf", opt->crf, "H.264 quality of the MP4")->capture_default_str();
  cmd->add_option("--preset", opt->preset, "x264 preset of the MP4")->capture_default_str();
  cmd->callback([&action, &global, opt] {
    action = [&global, opt]() -> int {
#ifndef H3P_HAVE_MEDIA
      (void)global;
      throw InputError("export: this build has no media support (H3P_WITH_MEDIA=OFF); the run "
                       "keeps its decoded tensors, export it on a machine with FFmpeg");
#else
      if (opt->runs.size() > 1 && (!opt->mkv.empty() || !opt->mp4.empty())) {
        throw InputError("export: --mkv/--mp4 name one file; give one run or use --out");
      }
      ProgressBar bar("export", parse_progress_mode(global.progress));
      for (std::size_t i = 0; i < opt->runs.size(); ++i) {
        const fs::path run = opt->runs[i];
        media::ExportParams params;
        params.decoded_dir = fs::exists(run / "manifest.json") ? run / "decoded" : run;
        const fs::path dir = opt->out.empty() ? run / "export" : fs::path(opt->out);
        const std::string stem = opt->out.empty() || opt->runs.size() == 1
                                     ? "video"
                                     : run.parent_path().filename().string() + "-" +
                                           run.filename().string();
        params.mkv = opt->no_mkv ? fs::path() : (opt->mkv.empty() ? dir / (stem + ".mkv") : fs::path(opt->mkv));
        params.mp4 = opt->no_mp4 ? fs::path() : (opt->mp4.empty() ? dir / (stem + ".mp4") : fs::path(opt->mp4));
        params.crf = opt->crf;
        params.preset = opt->preset;
        params.progress = [&](double f, const std::string& what) {
          bar.update((i + f) / opt->runs.size(), what);
        };
        media::export_clip(params);
        bar.finish();
        for (const fs::path& f : {params.mkv, params.mp4}) {
          if (!f.empty()) std::printf("wrote %s\n", f.string().c_str());
        }
      }
      return 0;
#endif
    };
  });
}

}  // namespace h3p::cli
