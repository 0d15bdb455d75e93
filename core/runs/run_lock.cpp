#include "core/runs/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "core/common/error.h"

namespace h3p::runs {

namespace {

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// "pid N\nhost H\n" -> "pid N on host H"; tolerant of an empty or partial record (a holder
// may be between taking the lock and writing it).
std::string describe_holder(int fd) {
  std::string text;
  char buffer[512];
  ssize_t n = 0;
  off_t offset = 0;
  while ((n = ::pread(fd, buffer, sizeof buffer, offset)) > 0 && text.size() < 4096) {
    text.append(buffer, static_cast<std::size_t>(n));
    offset += n;
  }
  auto field = [&](const std::string& key) -> std::string {
    const std::string tag = key + " ";
    std::size_t at = text.find(tag);
    if (at == std::string::npos) return "?";
    at += tag.size();
    std::size_t end = text.find('\n', at);
    std::string value = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    return value.empty() ? "?" : value;
  };
  return "pid " + field("pid") + " on host " + field("host");
}

}  // namespace

RunLock RunLock::acquire(const std::filesystem::path& run_dir) {
  std::error_code error;
  std::filesystem::create_directories(run_dir, error);
  if (error) throw_input(run_dir.string(), "cannot create run directory: " + error.message());

  std::filesystem::path path = run_dir / ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw_input(path.string(), std::string("cannot open lock file: ") + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = err == EWOULDBLOCK ? describe_holder(fd) : std::string();
    ::close(fd);
    if (err == EWOULDBLOCK) throw_input(run_dir.string(), "locked by " + holder);
    throw_input(path.string(), std::string("cannot lock: ") + std::strerror(err));
  }
  RunLock lock(std::move(path), fd);
  // Record the holder; a failure here does not weaken the lock, only the message.
  const std::string record = "pid " + std::to_string(::getpid()) + "\nhost " + host_name() + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t written = ::pwrite(fd, record.data(), record.size(), 0);
  }
  return lock;
}

RunLock::~RunLock() { release(); }

RunLock::RunLock(RunLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void RunLock::release() noexcept {
  if (fd_ < 0) return;
  [[maybe_unused]] int truncated = ::ftruncate(fd_, 0);
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace h3p::runs
