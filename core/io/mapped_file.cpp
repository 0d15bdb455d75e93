#include "core/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/common/error.h"
#include "core/io/unique_fd.h"

namespace h3p::io {

MappedFile::MappedFile(const std::filesystem::path& path) {
  // O_NONBLOCK: a FIFO must be refused below, not block the open.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) throw_input(path.string(), std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw_input(path.string(), std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw_input(path.string(), "not a regular file");
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;  // mmap refuses length 0; an empty span is the whole file
  void* addr = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) {
    size_ = 0;
    throw_input(path.string(), std::string("cannot map: ") + std::strerror(errno));
  }
  data_ = static_cast<const std::byte*>(addr);
  // The descriptor closes here; the mapping stays valid until munmap.
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace h3p::io
