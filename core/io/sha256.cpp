#include "core/io/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/common/error.h"
#include "core/io/unique_fd.h"

namespace h3p::io {

namespace {

struct EvpCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

void check_evp(int status, const char* what) {
  if (status != 1) throw Error(std::string("sha256: ") + what + " failed");
}

}  // namespace

struct Sha256::Ctx {
  std::unique_ptr<EVP_MD_CTX, EvpCtxFree> evp;
  bool finished = false;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->evp.reset(EVP_MD_CTX_new());
  if (!ctx_->evp) throw Error("sha256: EVP_MD_CTX_new failed");
  check_evp(EVP_DigestInit_ex(ctx_->evp.get(), EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::byte> bytes) {
  if (!ctx_ || ctx_->finished) throw std::logic_error("sha256: update after hex_digest or move");
  if (bytes.empty()) return;
  check_evp(EVP_DigestUpdate(ctx_->evp.get(), bytes.data(), bytes.size()), "EVP_DigestUpdate");
}

void Sha256::update(std::string_view text) {
  update(std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::string Sha256::hex_digest() {
  if (!ctx_ || ctx_->finished) throw std::logic_error("sha256: digest taken twice or after move");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  check_evp(EVP_DigestFinal_ex(ctx_->evp.get(), digest, &length), "EVP_DigestFinal_ex");
  ctx_->finished = true;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0x0f];
  }
  return out;
}

std::string sha256_hex(std::span<const std::byte> bytes) {
  Sha256 sha;
  sha.update(bytes);
  return sha.hex_digest();
}

std::string sha256_hex(std::string_view text) {
  Sha256 sha;
  sha.update(text);
  return sha.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw_input(where, std::string("cannot open: ") + std::strerror(errno));
  Sha256 sha;
  std::vector<std::byte> chunk(1u << 20);
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_input(where, std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0) break;
    sha.update(std::span<const std::byte>(chunk.data(), static_cast<std::size_t>(n)));
  }
  return sha.hex_digest();
}

}  // namespace h3p::io
