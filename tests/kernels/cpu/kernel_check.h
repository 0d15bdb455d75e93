#pragma once
// Shared by the CPU kernel suites: fresh seeded inputs, guarded output buffers (bytes before
// and after the output that a kernel must not touch), and the comparison against the provider
// with a declared tolerance per dtype in which NaN or Inf always fails.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::test {

// A fresh seed per run, printed so that a failure can be replayed.
inline std::uint64_t fresh_seed(const char* suite) {
  const std::uint64_t seed = std::random_device{}();
  qInfo("%s: seed %llu", suite, static_cast<unsigned long long>(seed));
  return seed;
}

// Seeded normal draws in any dtype (drawn in fp32, then rounded).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}
  at::Tensor normal(at::IntArrayRef shape, at::ScalarType dtype, double stddev = 1.0) {
    return at::mul(at::randn(shape, gen_, at::TensorOptions().dtype(at::kFloat)), stddev)
        .to(dtype);
  }
  // Uniform fp32 draws in [0, 1).
  at::Tensor uniform(at::IntArrayRef shape) {
    return at::rand(shape, gen_, at::TensorOptions().dtype(at::kFloat));
  }
  at::Tensor uniform_int(at::IntArrayRef shape, int64_t high) {
    return at::randint(high, shape, gen_, at::TensorOptions().dtype(at::kLong));
  }

 private:
  at::Generator gen_;
};

// The kernel pointer type of a tensor dtype.
template <typename T>
T* kernel_ptr(const at::Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// An output buffer with kGuard elements of a fixed byte pattern on each side; the interior
// starts with the same pattern, so elements a kernel forgets to write show up as well.
class GuardedOutput {
 public:
  static constexpr int64_t kGuard = 64;
  static constexpr unsigned char kPattern = 0xA5;

  GuardedOutput(at::ScalarType dtype, std::vector<int64_t> shape) : shape_(std::move(shape)) {
    numel_ = 1;
    for (int64_t d : shape_) numel_ *= d;
    storage_ = at::empty({numel_ + 2 * kGuard}, at::TensorOptions().dtype(dtype));
    std::memset(storage_.data_ptr(), kPattern, storage_.nbytes());
  }
  template <typename T>
  T* data() {
    return static_cast<T*>(storage_.data_ptr()) + kGuard;
  }
  // The interior as a tensor of the output shape (a view of the buffer).
  at::Tensor tensor() const { return storage_.narrow(0, kGuard, numel_).view(shape_); }
  bool guards_intact() const {
    const auto* bytes = static_cast<const unsigned char*>(storage_.data_ptr());
    const int64_t guard_bytes = kGuard * static_cast<int64_t>(storage_.element_size());
    const int64_t total = static_cast<int64_t>(storage_.nbytes());
    for (int64_t i = 0; i < guard_bytes; ++i) {
      if (bytes[i] != kPattern || bytes[total - 1 - i] != kPattern) return false;
    }
    return true;
  }

 private:
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  at::Tensor storage_;
};

// |got - want| <= elem·(scale + rms(want)) for every element, scale being |want| or the
// magnitude of the terms that produced it (where they cancel), and ||got - want|| / ||want|| <=
// rel_l2 over outputs of at least kMinRelL2Elements elements (a statistic; a handful of elements
// is held by the elementwise bound alone).
struct Tolerance {
  double elem;
  double rel_l2;
};
// bf16: one rounding against the provider's chain of up to four (norm_modulate), each up to
// half a bf16 ulp (2^-8 relative): 4·2^-8, and relative L2 1e-2.
inline constexpr Tolerance kBf16Tolerance{4.0 / 256.0, 1e-2};
// fp32: within 1e-6 relative.
inline constexpr Tolerance kF32Tolerance{1e-6, 1e-6};

inline Tolerance tolerance_for(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? kBf16Tolerance : kF32Tolerance;
}

inline constexpr int64_t kMinRelL2Elements = 256;

// Empty when `got` matches `want` within tol and both are finite; otherwise what failed.
// `error_scale` (optional, want's shape) replaces |want| in the elementwise bound.
inline std::string check_close(const at::Tensor& got, const at::Tensor& want, Tolerance tol,
                               const std::string& what, const at::Tensor& error_scale = {}) {
  if (got.sizes() != want.sizes()) return what + ": shape " + c10::str(got.sizes()) + " vs " + c10::str(want.sizes());
  if (got.scalar_type() != want.scalar_type()) {
    return what + ": dtype " + c10::toString(got.scalar_type()) + " vs " +
           c10::toString(want.scalar_type());
  }
  const at::Tensor g = got.to(at::kDouble).contiguous().view({-1});
  const at::Tensor w = want.to(at::kDouble).contiguous().view({-1});
  const double* gp = g.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  const int64_t n = g.numel();
  const at::Tensor es = error_scale.defined()
                            ? error_scale.to(at::kDouble).contiguous().view({-1})
                            : at::abs(w);
  if (es.numel() != n) return what + ": error scale has the wrong size";
  const double* ep = es.data_ptr<double>();
  double sq_want = 0, sq_diff = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(gp[i])) return what + ": non-finite output at " + std::to_string(i);
    if (!std::isfinite(wp[i])) return what + ": non-finite reference at " + std::to_string(i);
    sq_want += wp[i] * wp[i];
    sq_diff += (gp[i] - wp[i]) * (gp[i] - wp[i]);
  }
  const double rms = n > 0 ? std::sqrt(sq_want / static_cast<double>(n)) : 0.0;
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double bound = tol.elem * (ep[i] + rms);
    const double err = std::fabs(gp[i] - wp[i]);
    const double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
    if (ratio > worst) {
      worst = ratio;
      worst_at = i;
    }
  }
  const double rel_l2 = sq_want > 0 ? std::sqrt(sq_diff / sq_want) : std::sqrt(sq_diff);
  if (worst > 1.0) {
    return what + ": element " + std::to_string(worst_at) + " got " + std::to_string(gp[worst_at]) +
           " want " + std::to_string(wp[worst_at]) + " (" + std::to_string(worst) +
           "x the tolerance)";
  }
  if (n >= kMinRelL2Elements && rel_l2 > tol.rel_l2) {
    return what + ": relative L2 " + std::to_string(rel_l2) + " above " + std::to_string(tol.rel_l2);
  }
  return {};
}

// While alive, every OpenMP parallel region runs on one thread (max active levels 0), with
// the same work split: the single-thread half of the 1-vs-N-threads check.
class SingleThreadScope {
 public:
  SingleThreadScope() : saved_(omp_get_max_active_levels()) { omp_set_max_active_levels(0); }
  ~SingleThreadScope() { omp_set_max_active_levels(saved_); }
  SingleThreadScope(const SingleThreadScope&) = delete;
  SingleThreadScope& operator=(const SingleThreadScope&) = delete;

  // Threads a parallel region gets now (1 inside the scope).
  static int region_threads() {
    int n = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      n = omp_get_num_threads();
    }
    return n;
  }

 private:
  int saved_;
};

// Same dtype, shape and bytes.
inline bool bit_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  // An empty tensor's data pointer may be null, which memcmp must never see.
  return ca.nbytes() == 0 || std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

}  // namespace h3p::kernels::test

#define H3P_CHECK_CLOSE(got, want, what)                                                   \
  do {                                                                                     \
    const at::Tensor h3p_want_ = (want);                                                   \
    const std::string h3p_msg_ = ::h3p::kernels::test::check_close(                        \
        (got), h3p_want_, ::h3p::kernels::test::tolerance_for(h3p_want_.scalar_type()), (what)); \
    QVERIFY2(h3p_msg_.empty(), h3p_msg_.c_str());                                          \
  } while (0)

// H3P_CHECK_CLOSE with an explicit tolerance and error scale (an undefined tensor: |want|).
#define H3P_CHECK_WITHIN(got, want, tol, scale, what)                                      \
  do {                                                                                     \
    const std::string h3p_msg_ =                                                           \
        ::h3p::kernels::test::check_close((got), (want), (tol), (what), (scale));          \
    QVERIFY2(h3p_msg_.empty(), h3p_msg_.c_str());                                          \
  } while (0)
