#include "app/cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/common/error.h"

namespace h3p::cli {

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "json") return ProgressMode::json;
  if (text == "none") return ProgressMode::none;
  throw InputError("--progress: must be auto, json or none, got '" + text + "'");
}

ProgressBar::ProgressBar(std::string label, ProgressMode mode)
    : label_(std::move(label)), mode_(mode), start_(std::chrono::steady_clock::now()) {
  tty_ = mode_ == ProgressMode::automatic && isatty(STDERR_FILENO) == 1;
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(double fraction, const std::string& detail) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (mode_ == ProgressMode::json) {
    nlohmann::json line = {{"progress", label_}, {"fraction", fraction}, {"detail", detail},
                           {"elapsed_s", elapsed}};
    std::fprintf(stderr, "%s\n", line.dump().c_str());
    std::fflush(stderr);
    return;
  }
  // A bar only for work longer than a second, redrawn at most 10 times a second.
  if (!tty_ || elapsed < 1.0) return;
  if (fraction < 1.0 && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth + 0.5);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%s [%s] %3d%% %s %.1fs ", label_.c_str(), bar.c_str(),
               static_cast<int>(fraction * 100 + 0.5), detail.c_str(), elapsed);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (tty_ && last_draw_ != std::chrono::steady_clock::time_point{}) std::fprintf(stderr, "\n");
}

}  // namespace h3p::cli
