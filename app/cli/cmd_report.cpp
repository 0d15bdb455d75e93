// `h3parity report RUNS`: Markdown and JSON evidence for every seed and variant in a runs
// directory, with SHA256SUMS of every cited file. Exit 1 when a comparison fails its bounds.
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/compare_setup.h"
#include "app/cli/progress.h"
#include "core/metrics/compare/compare_output.h"
#include "core/metrics/compare/evidence_report.h"

namespace h3p::cli {


void add_report(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string runs, out, contract;
    bool post_hoc = false;
    int threads = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Markdown and JSON evidence for a runs directory (every seed and variant "
                "against the provider), with SHA256SUMS of every cited file");
  cmd->add_option("runs", opt->runs, "runs directory (RUNS/<contract>/<impl>/seed-<n>)")->required();
  cmd->add_option("--out", opt->out, "output directory (default: RUNS/report)");
  cmd->add_option("--contract", opt->contract, "contract whose bounds to judge by");
  cmd->add_flag("--post-hoc", opt->post_hoc, "accept a --contract other than the runs'");
  cmd->add_option("--threads", opt->threads, "worker threads (0: one per core)");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      const std::string yuv = "swscale";  // libswscale's conversion, built in (no FFmpeg needed)
      compare::ReportParams params;
      params.runs_root = opt->runs;
      params.out_dir = opt->out;
      params.compare = base_compare_params(global, opt->contract, opt->post_hoc, opt->threads, yuv);
      ProgressBar bar("report", parse_progress_mode(global.progress));
      params.progress = [&](double f, const std::string& what) { bar.update(f, what); };
      const compare::ReportResult r = compare::write_report(params);
      bar.finish();
      std::fputs(compare::terminal_table(r.comparisons).c_str(), stdout);
      for (const auto& s : r.skipped) std::printf("not compared: %s\n", s.c_str());
      std::printf("wrote %s, %s, %s\n", r.markdown.string().c_str(), r.json.string().c_str(),
                  r.sums.string().c_str());
      return r.passed() && !*r.passed() ? 1 : 0;
    };
  });
}

}  // namespace h3p::cli
