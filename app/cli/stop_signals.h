#pragma once
// SIGTERM, SIGUSR1 and SIGINT request a stop at the next safe point (between steps); the
// generation loop reads the flag and ends with exit code 3 once the in-flight step is written.
#include <atomic>

namespace h3p::cli {

// Installs the handlers (idempotent) and returns the flag they set.
const std::atomic<bool>& install_stop_signals();

}  // namespace h3p::cli
