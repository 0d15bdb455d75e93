#pragma once
// Crash-safe file replacement: write to a temporary name in the same directory, fsync,
// rename over the target, fsync the directory. A reader sees the old file or the new one,
// never a torn one; a crash leaves at most a stray `.tmp-*` file, which readers ignore.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace h3p::io {

// Sequential writer handed to atomic_write's callback. Throws InputError naming the final
// path on a failed write (ENOSPC included).
class FileSink {
 public:
  virtual ~FileSink() = default;
  virtual void write(std::span<const std::byte> bytes) = 0;
  void write(std::string_view text);
};

// Produces `path` through `produce`; on any exception the temporary file is removed, the
// target is left untouched, and the exception propagates. Returns the SHA-256 (hex) of the
// bytes written.
std::string atomic_write(const std::filesystem::path& path,
                         const std::function<void(FileSink&)>& produce);

// Convenience: atomically writes `text`. Returns its SHA-256 (hex).
std::string atomic_write_text(const std::filesystem::path& path, std::string_view text);

// Removes the temporary files atomic_write leaves in `dir` (not recursive) when its process
// dies mid-write (`.<name>.tmp-<pid>-<n>`). Call only while no writer can be active in `dir`
// (e.g. holding the run lock). Returns how many were removed.
int remove_stale_temporaries(const std::filesystem::path& dir);

// Removes a directory tree (or a file) without following symbolic links; a missing path is
// fine. Written with nftw(3) rather than std::filesystem::remove_all, which resolves to a
// broken copy inside some pip-installed LibTorch builds. Returns false when anything remained.
bool remove_tree(const std::filesystem::path& path) noexcept;

// Reads a whole file; throws InputError naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace h3p::io
