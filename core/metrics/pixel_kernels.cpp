#include "core/metrics/pixel_kernels.h"

#include <cmath>
#include <cstring>

// Every kernel is cloned for these levels; the loader picks the best one the CPU has.
#define H3P_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

namespace h3p::metrics::kernels {
namespace {

// Sums `n` values in double with 8 independent partial sums (vectorisable without
// reassociating a single accumulator), then adds the partial sums in a fixed order.
H3P_CLONES double sum_to_double(const float* __restrict v, std::size_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<double>(v[i + j]);
  }
  double tail = 0;
  for (; i < n; ++i) tail += static_cast<double>(v[i]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

}  // namespace

H3P_CLONES void half_to_float(const std::uint16_t* __restrict in, float* __restrict out,
                              std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    _Float16 h;
    std::memcpy(&h, in + i, sizeof h);
    out[i] = static_cast<float>(h);
  }
}

H3P_CLONES void rgb_channel_to_float(const std::uint8_t* __restrict rgb, int channel,
                                     float* __restrict out, std::size_t n) {
  const std::uint8_t* src = rgb + channel;
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(src[3 * i]) / 255.0f;
}

H3P_CLONES double error_sse(const float* __restrict a, const float* __restrict b,
                            float* __restrict err, const float* __restrict prev_err,
                            double* temporal_sse, std::size_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double tacc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) {
      const float e = a[i + j] - b[i + j];
      err[i + j] = e;
      acc[j] += static_cast<double>(e * e);
    }
  }
  double tail = 0;
  for (; i < n; ++i) {
    const float e = a[i] - b[i];
    err[i] = e;
    tail += static_cast<double>(e * e);
  }
  if (prev_err != nullptr) {
    double ttail = 0;
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) {
      for (int j = 0; j < 8; ++j) {
        const float d = err[k + j] - prev_err[k + j];
        tacc[j] += static_cast<double>(d * d);
      }
    }
    for (; k < n; ++k) {
      const float d = err[k] - prev_err[k];
      ttail += static_cast<double>(d * d);
    }
    *temporal_sse += ((tacc[0] + tacc[1]) + (tacc[2] + tacc[3])) +
                     ((tacc[4] + tacc[5]) + (tacc[6] + tacc[7])) + ttail;
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

H3P_CLONES void gaussian_vertical(const float* const rows[11], const float w[11],
                                  float* __restrict out, int n) {
  const float* __restrict r0 = rows[0];
  const float* __restrict r1 = rows[1];
  const float* __restrict r2 = rows[2];
  const float* __restrict r3 = rows[3];
  const float* __restrict r4 = rows[4];
  const float* __restrict r5 = rows[5];
  const float* __restrict r6 = rows[6];
  const float* __restrict r7 = rows[7];
  const float* __restrict r8 = rows[8];
  const float* __restrict r9 = rows[9];
  const float* __restrict r10 = rows[10];
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
  for (int x = 0; x < n; ++x) {
    float s = w5 * r5[x];
    s = std::fma(w0, r0[x] + r10[x], s);
    s = std::fma(w1, r1[x] + r9[x], s);
    s = std::fma(w2, r2[x] + r8[x], s);
    s = std::fma(w3, r3[x] + r7[x], s);
    out[x] = std::fma(w4, r4[x] + r6[x], s);
  }
}

H3P_CLONES void gaussian_horizontal(const float* __restrict in, const float w[11],
                                    float* __restrict out, int n) {
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
  for (int x = 0; x < n; ++x) {
    const float* p = in + x;
    float s = w5 * p[5];
    s = std::fma(w0, p[0] + p[10], s);
    s = std::fma(w1, p[1] + p[9], s);
    s = std::fma(w2, p[2] + p[8], s);
    s = std::fma(w3, p[3] + p[7], s);
    out[x] = std::fma(w4, p[4] + p[6], s);
  }
}

H3P_CLONES void second_moments(const float* __restrict a, const float* __restrict b,
                               float* __restrict squares, float* __restrict cross, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    squares[i] = std::fma(a[i], a[i], b[i] * b[i]);
    cross[i] = a[i] * b[i];
  }
}

H3P_CLONES double ssim_row(const float* __restrict mu_a, const float* __restrict mu_b,
                           const float* __restrict e_squares, const float* __restrict e_cross,
                           float c1, float c2, float* __restrict scratch, int n) {
  for (int x = 0; x < n; ++x) {
    const float ma = mu_a[x], mb = mu_b[x];
    const float mab = ma * mb, msq = std::fma(ma, ma, mb * mb);
    const float num = std::fma(2.0f, mab, c1) * std::fma(2.0f, e_cross[x] - mab, c2);
    const float den = (msq + c1) * ((e_squares[x] - msq) + c2);
    scratch[x] = num / den;
  }
  return sum_to_double(scratch, static_cast<std::size_t>(n));
}

H3P_CLONES std::uint64_t byte_sse(const std::uint8_t* __restrict a, const std::uint8_t* __restrict b,
                                  std::size_t n) {
  std::uint64_t total = 0;
  std::size_t i = 0;
  // Blocks small enough that a 32-bit lane cannot overflow (65025 · 4096 < 2³²).
  while (i < n) {
    const std::size_t end = i + 4096 < n ? i + 4096 : n;
    std::uint32_t acc = 0;
    for (; i < end; ++i) {
      const int d = static_cast<int>(a[i]) - static_cast<int>(b[i]);
      acc += static_cast<std::uint32_t>(d * d);
    }
    total += acc;
  }
  return total;
}

}  // namespace h3p::metrics::kernels
