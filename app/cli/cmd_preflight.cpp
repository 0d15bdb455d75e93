// `h3parity preflight`: a contract at a small canvas for a few calls with every impl spec the
// qualification will run, decode included, on the real device; a table of what ran, how long,
// peak memory and the projected full run. Exit 1 when a spec fails.
#include <cstdio>
#include <filesystem>
#include <random>

#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/plugin_options.h"
#include "app/cli/progress.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/runs/preflight.h"

namespace h3p::cli {
namespace {

namespace fs = std::filesystem;

// A fresh directory for the small runs, removed with everything in it when it goes out of scope
// (unless kept).
class ScratchDir {
 public:
  ScratchDir(const fs::path& parent, bool keep) : keep_(keep) {
    std::random_device random;
    path_ = parent / ("h3parity-preflight-" + std::to_string(random()));
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!keep_) fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool keep_;
};

}  // namespace

void add_preflight(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    runs::PreflightParams params;
    std::string contract, canvas = "128x128", json, markdown, work;
    bool keep = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "preflight",
      "before a long qualification: the contract's model and conditioning at a small canvas for "
      "a few calls with every impl spec, decode included, on the real device; what ran, how "
      "long, peak memory, the projected full run; exit 1 when a spec fails");
  add_check_plugin_flag(cmd);
  cmd->add_option("--contract", opt->contract, "contract JSON")->required();
  cmd->add_option("--impl", opt->params.impl_specs, "impl spec to exercise (repeatable)")
      ->required();
  cmd->add_option("--device", opt->params.device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--canvas", opt->canvas, "WIDTHxHEIGHT of the small canvas (multiples of 32)")
      ->capture_default_str();
  cmd->add_option("--calls", opt->params.calls, "transformer calls per spec")->capture_default_str();
  cmd->add_option("--work", opt->work,
                  "where the small runs are written (default: the system's temporary directory)");
  cmd->add_flag("--keep", opt->keep, "keep the small runs");
  cmd->add_option("--json", opt->json, "write the table as JSON (the evidence's first row)");
  cmd->add_option("--markdown", opt->markdown, "write the table as Markdown");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::PreflightParams p = opt->params;
      p.contract = contract::load_contract(opt->contract);
      int width = 0, height = 0;
      char tail = 0;
      if (std::sscanf(opt->canvas.c_str(), "%dx%d%c", &width, &height, &tail) != 2) {
        throw InputError("--canvas '" + opt->canvas + "': expected WIDTHxHEIGHT, e.g. 128x128");
      }
      p.width = width;
      p.height = height;
      const ScratchDir scratch(opt->work.empty() ? fs::temp_directory_path() : fs::path(opt->work),
                               opt->keep);
      p.work_dir = scratch.path();
      p.fused_candidate = fused_candidate_call();
      ProgressBar bar("preflight", parse_progress_mode(global.progress));
      p.progress = [&](double f, const std::string& what) { bar.update(f, what); };
      const runs::PreflightResult r = runs::run_preflight(p, candidate_ops());
      bar.finish();
      const std::string markdown = r.to_markdown();
      std::fputs(markdown.c_str(), stdout);
      if (opt->keep) std::printf("small runs kept in %s\n", scratch.path().string().c_str());
      if (!opt->json.empty()) io::atomic_write_text(opt->json, r.to_json().dump(2) + "\n");
      if (!opt->markdown.empty()) io::atomic_write_text(opt->markdown, markdown);
      return r.passed() ? 0 : 1;
    };
  });
}

}  // namespace h3p::cli
