// h3parity: the command users run. `compare` of decoded clips runs here, in a process that
// loads neither LibTorch (whose start-up alone costs ~0.3 s of a 1 s compare) nor FFmpeg;
// every other command, compare of runs (their per-step series replay the sampler) and of video
// files (decoded by FFmpeg) is handed to h3parity-engine next to this binary by exec: same
// process, arguments and signals.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "app/cli/commands.h"
#include "app/cli/run_command.h"

namespace {

// The command word of argv (after the global options), or empty when there is none.
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--progress") {
      ++i;
    } else if (arg.rfind("--progress=", 0) == 0) {
      continue;
    } else {
      return arg.rfind('-', 0) == 0 ? std::string_view() : arg;
    }
  }
  return {};
}

// Replaces this process with h3parity-engine on the same arguments; returns only on failure
// (exit code 2 with the reason).
[[noreturn]] void exec_engine(char** argv) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path engine =
      (error ? std::filesystem::path(argv[0]) : self).parent_path() / "h3parity-engine";
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(engine.c_str(), argv);
  std::fprintf(stderr, "error: %s: cannot run the h3parity engine: %s\n", engine.c_str(),
               std::strerror(errno));
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace h3p;
  if (command_word(argc, argv) != "compare") exec_engine(argv);
  CLI::App app{"h3parity compare"};
  app.name("h3parity");
  cli::GlobalOptions global;
  global.hand_over = [argv] { exec_engine(argv); };
  cli::add_global_options(app, global);
  cli::Action action;
  cli::add_compare(app, action, global);
  return cli::parse_and_run(app, action, argc, argv);
}
