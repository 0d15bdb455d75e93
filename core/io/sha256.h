#pragma once
// SHA-256 through OpenSSL EVP, streaming.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace h3p::io {

// Incremental SHA-256. Not thread-safe; one instance per stream.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::span<const std::byte> bytes);
  void update(std::string_view text);
  // Lower-case hex digest; the object cannot be updated afterwards.
  std::string hex_digest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

std::string sha256_hex(std::span<const std::byte> bytes);
std::string sha256_hex(std::string_view text);
// Streams the file in 1 MiB chunks; throws InputError naming the path when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace h3p::io
