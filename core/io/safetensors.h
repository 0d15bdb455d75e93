#pragma once
// Reader and writer of the safetensors format (8-byte little-endian header length, JSON
// header, raw little-endian tensor bytes). Written by hand: no C++ library of it is packaged,
// and the reader must enforce every rule of the format so that a corrupt or hostile file is
// refused with an error naming the file and the field rather than read out of bounds.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/io/dtype.h"

namespace h3p::io {

// Largest header a reader accepts (bytes of JSON); larger files are refused as corrupt.
inline constexpr std::uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;

// One tensor as the header describes it; offsets are relative to the start of the data section.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // first byte, inclusive
  std::uint64_t end = 0;    // one past the last byte
  std::uint64_t numel() const;
  std::uint64_t nbytes() const { return end - begin; }
};

// A read-only, memory-mapped safetensors file, validated on open. Cheap to copy (shares the
// mapping); the mapping lives as long as any copy or any span taken from it is needed.
// Validation: header length bound and inside the file, header a JSON object, every entry with
// a known dtype, a shape of non-negative dims, data_offsets [begin, end] with
// end - begin == numel * dtype size, offsets contiguous from 0 in file order with no gap or
// overlap and ending exactly at the end of the file, no duplicate names, `__metadata__` a map
// of strings. Any violation throws InputError naming the path and the tensor or field.
class SafetensorsFile {
 public:
  // Maps and validates the file at `path`.
  static SafetensorsFile open(const std::filesystem::path& path);
  // Validates an image held in memory, exactly as open() validates a file; the object owns
  // `image`. `name` stands for the path in messages and in path().
  static SafetensorsFile parse(std::vector<std::byte> image, const std::filesystem::path& name);

  const std::filesystem::path& path() const;
  // Tensors sorted by their begin offset (file order).
  const std::vector<TensorInfo>& tensors() const;
  // nullptr when no tensor has this name.
  const TensorInfo* find(std::string_view name) const;
  // Throws InputError "<path>: no tensor '<name>'" when absent.
  const TensorInfo& at(std::string_view name) const;
  // The tensor's bytes inside the mapping.
  std::span<const std::byte> bytes(const TensorInfo& info) const;
  // The `__metadata__` map (empty when absent).
  const std::map<std::string, std::string>& metadata() const;

 private:
  struct Impl;
  explicit SafetensorsFile(std::shared_ptr<const Impl> impl);
  static SafetensorsFile validated(std::shared_ptr<Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// One tensor to write: the caller keeps `bytes` alive until the write returns.
struct TensorRecord {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> bytes;
};

// Serialises tensors in the given order (names must be unique, bytes must equal numel × size)
// to a complete safetensors image in memory. The header is padded with spaces to a multiple
// of 8 bytes, so tensor data starts 8-byte aligned. Deterministic: same input, same bytes.
std::vector<std::byte> encode_safetensors(const std::vector<TensorRecord>& tensors,
                                          const std::map<std::string, std::string>& metadata = {});

// Writes tensors atomically (temp file, fsync, rename, fsync of the directory), streaming the
// data so a multi-GB checkpoint is not held twice. Same byte layout as encode_safetensors.
// Returns the SHA-256 (hex) of the written file. Throws InputError naming the path on any
// I/O failure (a full disk included) and leaves no partial file under `path`.
std::string write_safetensors(const std::filesystem::path& path,
                              const std::vector<TensorRecord>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace h3p::io
