#pragma once
// Shared by the sampling test suites: bitwise tensor comparison and a seeded random source.
#include <ATen/ATen.h>

#include <QtTest>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

namespace h3p::sampling::test {

// A fresh seed for ATen and std generators, printed so a failure can be replayed.
inline std::uint64_t fresh_seed(const char* suite) {
  const std::uint64_t seed = std::random_device{}();
  qInfo("%s: seed %llu", suite, static_cast<unsigned long long>(seed));
  return seed;
}

// True when both tensors have the same dtype, shape and bytes (NaN payloads included).
inline bool bit_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// "dtype (shape)" for failure messages.
inline std::string describe(const at::Tensor& t) {
  std::string s = std::string(c10::toString(t.scalar_type())) + " (";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + ")";
}

inline std::uint32_t float_bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

inline std::uint64_t double_bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

}  // namespace h3p::sampling::test

// Verifies equal bits; each argument is evaluated once (a draw inside it happens once).
#define H3P_VERIFY_BITS(a, b)                                                          \
  do {                                                                                 \
    const at::Tensor h3p_lhs_ = (a);                                                   \
    const at::Tensor h3p_rhs_ = (b);                                                   \
    QVERIFY2(::h3p::sampling::test::bit_equal(h3p_lhs_, h3p_rhs_),                     \
             (::h3p::sampling::test::describe(h3p_lhs_) + " vs " +                     \
              ::h3p::sampling::test::describe(h3p_rhs_))                               \
                 .c_str());                                                            \
  } while (0)
