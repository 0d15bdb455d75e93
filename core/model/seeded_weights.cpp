#include "core/model/seeded_weights.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/common/error.h"

namespace h3p::model {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;  // splitmix64's state increment
constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ULL;
constexpr uint64_t kMix2 = 0x94D049BB133111EBULL;
// Elements drawn per pass: bounds the int64 temporaries (a few times 64 MiB).
constexpr int64_t kChunk = int64_t{1} << 23;

uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * kMix1;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

uint64_t fnv1a64(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

// The bit pattern of `value` as the int64 that ATen stores (two's complement).
int64_t as_i64(uint64_t value) {
  int64_t out;
  static_assert(sizeof out == sizeof value);
  std::memcpy(&out, &value, sizeof out);
  return out;
}

// Logical right shift of int64 lanes (ATen's shift is arithmetic on signed types).
at::Tensor shift_right(const at::Tensor& z, int bits) {
  return at::bitwise_and(at::bitwise_right_shift(z, bits),
                         as_i64((~uint64_t{0}) >> bits));
}

// splitmix64's output function over int64 lanes; multiplication wraps modulo 2^64 as in C.
at::Tensor mix(at::Tensor z) {
  z = at::mul(at::bitwise_xor(z, shift_right(z, 30)), as_i64(kMix1));
  z = at::mul(at::bitwise_xor(z, shift_right(z, 27)), as_i64(kMix2));
  return at::bitwise_xor(z, shift_right(z, 31));
}

// A 24-bit field of `h` starting at bit `low`, as fp32 in [0, 1) (exact: 24 bits fit).
at::Tensor unit_field(const at::Tensor& h, int low) {
  const at::Tensor bits = at::bitwise_and(shift_right(h, low), int64_t{0xFFFFFF});
  return at::mul(bits.to(at::kFloat), 1.0 / 16777216.0);
}

// Elements [first, first + count) of the stream whose state starts at `key`.
at::Tensor draw_chunk(uint64_t key, int64_t first, int64_t count, const at::Device& device) {
  const auto i64 = at::TensorOptions().dtype(at::kLong).device(device);
  const at::Tensor index = at::arange(first, first + count, i64);
  // State of output n (n = 2i + j) is key + (n + 1)·γ; outputs 2i and 2i + 1 per element.
  auto output = [&](int64_t j) {
    const at::Tensor n = at::add(at::mul(index, 2), j + 1);
    return mix(at::add(at::mul(n, as_i64(kGolden)), as_i64(key)));
  };
  const at::Tensor h0 = output(0);
  const at::Tensor h1 = output(1);
  // Summed in a fixed order, each sum of 24-bit fractions rounded once: device-independent.
  at::Tensor sum = at::add(unit_field(h0, 40), unit_field(h0, 16));
  sum = at::add(sum, unit_field(h1, 40));
  sum = at::add(sum, unit_field(h1, 16));
  return at::mul(at::sub(sum, 2.0), std::sqrt(3.0));
}

}  // namespace

at::Tensor seeded_unit_normal(const std::vector<int64_t>& shape, uint64_t seed,
                              const std::string& stream, const at::Device& device) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const uint64_t key = splitmix64(seed + kGolden) ^ fnv1a64(stream);
  at::Tensor out = at::empty({numel}, at::TensorOptions().dtype(at::kFloat).device(device));
  for (int64_t first = 0; first < numel; first += kChunk) {
    const int64_t count = std::min(kChunk, numel - first);
    out.narrow(0, first, count).copy_(draw_chunk(key, first, count, device));
  }
  return out.view(shape);
}

}  // namespace h3p::model
