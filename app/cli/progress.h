#pragma once
// Terminal progress for long commands: a bar on a terminal (stderr), nothing otherwise, or
// one JSON line per update with --progress=json (read by the studio's jobs panel).
#include <chrono>
#include <string>

namespace h3p::cli {

enum class ProgressMode { automatic, json, none };

// Parses "auto", "json" or "none".
ProgressMode parse_progress_mode(const std::string& text);

class ProgressBar {
 public:
  ProgressBar(std::string label, ProgressMode mode);
  ~ProgressBar();
  // fraction in [0, 1]; `detail` is shown after the bar ("step 12/49").
  void update(double fraction, const std::string& detail = {});
  // Ends the bar's line.
  void finish();

 private:
  std::string label_;
  ProgressMode mode_;
  bool tty_ = false;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace h3p::cli
