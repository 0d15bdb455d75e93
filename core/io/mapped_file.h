#pragma once
// Private to core/io: a read-only memory mapping of a whole regular file.
#include <cstddef>
#include <filesystem>
#include <span>

namespace h3p::io {

// Maps `path` read-only for the object's lifetime; move-only. An empty file maps to an empty
// span. Throws InputError naming the path when it cannot be opened, is not a regular file, or
// cannot be mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  void unmap() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace h3p::io
