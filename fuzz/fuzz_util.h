#pragma once
// Shared pieces of the fuzz targets: a scratch directory for parsers that read files, file
// writing, splitting one input into parts, and the one rule every target enforces (a parser
// may refuse an input only with h3p::InputError; anything else escapes and is a finding).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace h3p::fuzz {

// A directory private to this process, created on first use and removed at a normal exit:
// under $H3P_FUZZ_SCRATCH when set (run.sh sets it and removes it, which also covers a process
// killed at a crash or a timeout), else on /dev/shm when writable.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    // A tmpfs keeps the per-input file writes cheap (several times more executions a second).
    std::error_code ec;
    std::filesystem::path base = "/dev/shm";
    if (const char* given = std::getenv("H3P_FUZZ_SCRATCH"); given != nullptr && *given != 0)
      base = given;
    else if (::access(base.c_str(), W_OK) != 0)
      base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "h3p-fuzz.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

// Replaces `path` with exactly `bytes` (no atomic rename: the scratch dir is private).
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// Splits `data` at every occurrence of `separator` (at most `max_parts` parts; the last part
// keeps the rest). Lets one flat input describe several files.
inline std::vector<std::string_view> split_parts(std::string_view data, std::string_view separator,
                                                 std::size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const std::size_t at = data.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + separator.size());
  }
  parts.push_back(data);
  return parts;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace h3p::fuzz
