#include "core/io/atomic_file.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/io/unique_fd.h"

namespace h3p::io {

namespace {

constexpr std::size_t kBufferBytes = 1u << 20;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false with errno on failure.
bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return true;
}

// Buffered sink over the temporary file; hashes every byte it is given.
class FdSink final : public FileSink {
 public:
  FdSink(int fd, std::string final_path) : fd_(fd), final_path_(std::move(final_path)) {
    buffer_.reserve(kBufferBytes);
  }
  using FileSink::write;

  void write(std::span<const std::byte> bytes) override {
    sha_.update(bytes);
    if (buffer_.size() + bytes.size() <= kBufferBytes) {
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
      return;
    }
    flush();
    if (bytes.size() >= kBufferBytes) {
      put(bytes);
    } else {
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    }
  }

  void flush() {
    put(buffer_);
    buffer_.clear();
  }

  std::string digest() { return sha_.hex_digest(); }

 private:
  void put(std::span<const std::byte> bytes) {
    if (!write_all(fd_, bytes)) throw_input(final_path_, errno_text("write failed"));
  }

  int fd_;
  std::string final_path_;
  std::vector<std::byte> buffer_;
  Sha256 sha_;
};

// Removes the temporary file unless dismissed (the rename consumed it).
class TempFileGuard {
 public:
  explicit TempFileGuard(std::filesystem::path path) : path_(std::move(path)) {}
  ~TempFileGuard() {
    if (armed_) ::unlink(path_.c_str());
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  void dismiss() { armed_ = false; }

 private:
  std::filesystem::path path_;
  bool armed_ = true;
};

std::filesystem::path temp_path_for(const std::filesystem::path& dir, const std::string& name) {
  static std::atomic<std::uint64_t> counter{0};
  return dir / ("." + name + ".tmp-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter.fetch_add(1)));
}

void fsync_dir(const std::filesystem::path& dir, const std::string& final_path) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) throw_input(final_path, errno_text("cannot open directory for fsync"));
  if (::fsync(fd.get()) != 0) throw_input(final_path, errno_text("fsync of directory failed"));
}

}  // namespace

void FileSink::write(std::string_view text) {
  write(std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::string atomic_write(const std::filesystem::path& path,
                         const std::function<void(FileSink&)>& produce) {
  const std::string where = path.string();
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") throw_input(where, "not a file path");
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";

  const std::filesystem::path temp = temp_path_for(dir, name);
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (!fd.valid()) throw_input(where, errno_text("cannot create temporary file"));
  TempFileGuard guard(temp);

  // Step 1: produce and flush the bytes.
  FdSink sink(fd.get(), where);
  produce(sink);
  sink.flush();
  // Step 2: make them durable, then publish them under the final name.
  if (::fsync(fd.get()) != 0) throw_input(where, errno_text("fsync failed"));
  if (fd.close_checked() != 0) throw_input(where, errno_text("close failed"));
  if (::rename(temp.c_str(), path.c_str()) != 0) throw_input(where, errno_text("rename failed"));
  guard.dismiss();
  // Step 3: make the rename durable.
  fsync_dir(dir, where);
  return sink.digest();
}

std::string atomic_write_text(const std::filesystem::path& path, std::string_view text) {
  return atomic_write(path, [&](FileSink& sink) { sink.write(text); });
}

std::string read_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw_input(where, errno_text("cannot open"));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_input(where, errno_text("cannot stat"));
  if (S_ISDIR(st.st_mode)) throw_input(where, "is a directory");
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_input(where, errno_text("read failed"));
    }
    if (n == 0) break;
    out.append(chunk, static_cast<std::size_t>(n));
  }
  return out;
}

int remove_stale_temporaries(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t tmp = name.rfind(".tmp-");
    if (name.size() < 2 || name[0] != '.' || tmp == std::string::npos || tmp == 0) continue;
    // The suffix must be <pid>-<counter>: digits, one dash, digits.
    const std::string suffix = name.substr(tmp + 5);
    const std::size_t dash = suffix.find('-');
    auto digits = [](const std::string& t) {
      return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (dash == std::string::npos || !digits(suffix.substr(0, dash)) ||
        !digits(suffix.substr(dash + 1)) || !it->is_regular_file(ec)) {
      continue;
    }
    if (fs::remove(it->path(), ec)) ++removed;
  }
  return removed;
}

bool remove_tree(const std::filesystem::path& path) noexcept {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  auto remove_one = [](const char* p, const struct stat*, int, struct FTW*) -> int {
    return ::remove(p) == 0 ? 0 : -1;
  };
  return ::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace h3p::io
