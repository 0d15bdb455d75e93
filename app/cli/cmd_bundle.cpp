// `h3parity bundle RUNS --out DIR`: one self-contained, redacted, checksummed directory of
// evidence for a runs directory (core/evidence/bundle.h), ready to publish as it is. Finds
// h3parity-figures and the build's tests.json from its own location. Exit 1 when a comparison
// fails its bounds, 2 on bad input.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/compare_setup.h"
#include "app/cli/progress.h"
#include "core/evidence/bundle.h"

namespace h3p::cli {
namespace {

namespace fs = std::filesystem;

// The directory of the running executable (h3parity-engine, beside h3parity).
fs::path own_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

// tests.json at the root of the build tree holding this binary (the directory with
// CMakeCache.txt above it), where scripts/test.sh writes it; empty when there is none.
fs::path build_tree_tests(const fs::path& from, std::string& note) {
  for (fs::path dir = from; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "CMakeCache.txt")) {
      if (fs::exists(dir / "tests.json")) {
        note = "the build tree's tests.json";
        return dir / "tests.json";
      }
      note = "no tests.json in the build tree of this h3parity (scripts/test.sh writes it)";
      return {};
    }
    if (dir == dir.parent_path()) break;
  }
  note = "this h3parity is not inside a build tree and no --tests file was given";
  return {};
}

}  // namespace

void add_bundle(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string runs, out, tests, contract;
    std::vector<std::string> preflight;
    int width = 1200, height = 800, threads = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "bundle", "a self-contained, redacted evidence directory to publish: the report with one "
                "table per gate, figures, test results, provenance, SHA256SUMS");
  cmd->add_option("runs", opt->runs, "runs directory (RUNS/<contract>/<impl>/seed-<n>)")->required();
  cmd->add_option("--out", opt->out, "the bundle directory (new, or empty; not inside RUNS)")->required();
  cmd->add_option("--tests", opt->tests, "tests.json of the build (default: the build tree's)");
  cmd->add_option("--preflight", opt->preflight,
                  "preflight --json file (repeatable; RUNS/<contract>/preflight*.json are found too)");
  cmd->add_option("--contract", opt->contract, "contract whose bounds to judge by");
  cmd->add_option("--width", opt->width, "figure width in pixels")->capture_default_str();
  cmd->add_option("--height", opt->height, "figure height in pixels")->capture_default_str();
  cmd->add_option("--threads", opt->threads, "worker threads (0: one per core)");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      evidence::BundleParams p;
      p.runs_root = opt->runs;
      p.out_dir = opt->out;
      for (const std::string& f : opt->preflight) p.preflight_files.emplace_back(f);
      p.figure_width = opt->width;
      p.figure_height = opt->height;
      p.compare = base_compare_params(global, opt->contract, false, opt->threads, "swscale");
      const fs::path here = own_directory();
      if (!opt->tests.empty()) {
        p.tests_file = opt->tests;
        p.tests_note = "given with --tests";
      } else {
        p.tests_file = build_tree_tests(here, p.tests_note);
      }
      const fs::path tool = here / "h3parity-figures";
      if (!here.empty() && ::access(tool.c_str(), X_OK) == 0) {
        p.figures_tool = tool;
      } else {
        p.figures_note = "h3parity-figures is not beside this h3parity (a build without Qt)";
      }
      ProgressBar bar("bundle", parse_progress_mode(global.progress));
      p.progress = [&](double f, const std::string& what) { bar.update(f, what); };
      const evidence::BundleResult r = evidence::write_bundle(p);
      bar.finish();
      std::printf("wrote %s: %zu runs, %zu comparisons, %zu figures%s, %zu files in SHA256SUMS\n",
                  r.dir.string().c_str(), r.runs, r.comparisons, r.figures,
                  r.figures_rendered ? "" : (" (" + r.figures_note + ")").c_str(), r.files);
      return r.passed && !*r.passed ? 1 : 0;
    };
  });
}

}  // namespace h3p::cli
