#pragma once
// Advisory lock of one run directory, so two processes never generate into the same run.
// flock(2) on RUN/.lock, non-blocking. The kernel drops the lock when its holder exits or is
// killed, so the lock file of a dead process is stale by construction and is simply taken
// over; the file only carries the holder's pid and host for the refusal message. Each
// acquisition opens its own file description, so a second acquisition inside one process is
// refused too. (flock is local to a host on some network file systems: run one job per run.)
#include <filesystem>

namespace h3p::runs {

// Holds the lock for its lifetime (RAII); move-only.
class RunLock {
 public:
  // Creates `run_dir` if needed and takes RUN/.lock. Throws InputError
  // "<run_dir>: locked by pid N on host H" when another holder has it, or naming the lock
  // file when it cannot be opened.
  static RunLock acquire(const std::filesystem::path& run_dir);

  ~RunLock();
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  // The lock file held.
  const std::filesystem::path& path() const { return path_; }
  // Releases early (idempotent): clears the holder record, then unlocks and closes.
  void release() noexcept;

 private:
  RunLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace h3p::runs
