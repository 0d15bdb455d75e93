#include "app/cli/stop_signals.h"

#include <csignal>
#include <initializer_list>

namespace h3p::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void request_stop(int) { g_stop.store(true); }

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaction(sig, &action, nullptr);
  return g_stop;
}

}  // namespace h3p::cli
