// `h3parity preflight`: a contract at a small canvas for a few calls with every impl spec the
// qualification will run, decode included, on the real device; a table of what ran, how long,
// peak memory and the projected full run. Exit 1 when a spec fails. Each spec runs in a child
// process of this binary (`--in-process`), so a plugin or driver that crashes, or leaves the
// device in a bad state, is that spec's row and not the end of the preflight.
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// Removes `dir` and everything below it, without following links; errors are ignored (a
// leftover scratch directory is harmless). POSIX nftw rather than std::filesystem::remove_all:
// GPU nodes build against the LibTorch of a pip torch, whose ABI flags need not match the
// standard library's own build of the filesystem internals.
void remove_tree(const fs::path& dir) {
  ::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) {
        ::remove(path);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

// A fresh directory for the small runs (mkdtemp), removed with everything in it when it goes
// out of scope (unless kept).
class ScratchDir {
 public:
  ScratchDir(const fs::path& parent, bool keep) : keep_(keep) {
    std::string name = (parent / "h3parity-preflight-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw InputError(parent.string() + ": cannot create a scratch directory for preflight: " +
                       ::strerror(errno));
    }
    path_ = name;
  }
  ~ScratchDir() {
    if (!keep_) remove_tree(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool keep_;
};

// The last line of a text file (a child's stderr), or "".
std::string last_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// Runs `args` (argv[0] is this executable) with stderr to `log`; the wait status.
int run_child(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw InputError(std::string("preflight: cannot start a child process: ") + ::strerror(errno));
  if (pid == 0) {
    if (std::FILE* err = std::freopen(log.c_str(), "w", stderr); err == nullptr) ::_exit(127);
    if (std::freopen("/dev/null", "w", stdout) == nullptr) ::_exit(127);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// One spec in a child process: its row(s), or a row saying how the child ended.
runs::PreflightResult run_spec_isolated(const std::vector<std::string>& base_args,
                                        const std::string& spec, const fs::path& scratch,
                                        int index) {
  const fs::path json = scratch / ("spec-" + std::to_string(index) + ".json");
  const fs::path log = scratch / ("spec-" + std::to_string(index) + ".log");
  std::vector<std::string> args = base_args;
  args.insert(args.end(), {"--impl", spec, "--json", json.string()});
  const int status = run_child(args, log);
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1) &&
      fs::exists(json)) {
    std::ifstream in(json);
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      throw InputError(json.string() + ": " + e.what());
    }
    return runs::PreflightResult::from_json(j, json.string());
  }
  runs::PreflightResult r;
  runs::PreflightRow row;
  row.impl_spec = spec;
  if (WIFSIGNALED(status)) {
    row.error = std::string("the process crashed (signal ") + std::to_string(WTERMSIG(status)) +
                ", " + ::strsignal(WTERMSIG(status)) + ")";
  } else {
    row.error = "exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  if (const std::string last = last_line(log); !last.empty()) row.error += ": " + last;
  r.rows.push_back(row);
  return r;
}

}  // namespace

void add_preflight(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    runs::PreflightParams params;
    std::string contract, canvas = "128x128", json, markdown, work;
    bool keep = false, in_process = false;
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
  cmd->add_flag("--in-process", opt->in_process,
                "run every spec in this process (default: each in a child process of its own)");
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
      runs::PreflightResult r;
      if (opt->in_process) {
        r = runs::run_preflight(p, candidate_ops());
      } else {
        runs::check_preflight_params(p);  // bad input exits 2 before any child starts
        std::vector<std::string> base = {
            "h3parity-engine", "--progress", "none", "preflight", "--in-process",
            "--contract", opt->contract, "--device", p.device, "--canvas", opt->canvas,
            "--calls", std::to_string(p.calls), "--work", scratch.path().string()};
        if (opt->keep) base.push_back("--keep");
        r.params = p;
        r.contract_digest = contract::contract_digest(p.contract);
        for (std::size_t i = 0; i < p.impl_specs.size(); ++i) {
          bar.update(static_cast<double>(i) / p.impl_specs.size(), p.impl_specs[i]);
          r.merge(run_spec_isolated(base, p.impl_specs[i], scratch.path(), static_cast<int>(i)));
        }
      }
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
