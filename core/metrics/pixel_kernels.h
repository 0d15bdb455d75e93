#pragma once
// Hot loops of the pixel metrics, compiled for several x86-64 levels (AVX-512, AVX2, baseline)
// and chosen at load time. fp32 arithmetic in a fixed order, with fused multiply-adds
// (std::fma, rounded once) exactly where written below and no other contraction, so every
// level gives the same per-element values (the baseline's fmaf is correctly rounded like the
// FMA instructions); only the order of double-precision partial sums may differ between levels.
#include <cstddef>
#include <cstdint>

namespace h3p::metrics::kernels {

// out[i] = the IEEE half `in[i]` as float.
void half_to_float(const std::uint16_t* in, float* out, std::size_t n);

// out[i] = in[3 * i + channel] / 255 (one channel of interleaved RGB as fp32 in [0, 1]).
void rgb_channel_to_float(const std::uint8_t* rgb, int channel, float* out, std::size_t n);

// Error statistics of one plane pair: err[i] = a[i] - b[i]; returns Σ err² in double.
// When prev_err is non-null also adds Σ (err[i] - prev_err[i])² to *temporal_sse.
double error_sse(const float* a, const float* b, float* err, const float* prev_err,
                 double* temporal_sse, std::size_t n);

// out[x] = Σ_k w[k] · rows[k][x], k = 0..10, evaluated as s = w5·r5, then for k = 0..4
// s = fma(w_k, r_k + r_{10-k}, s) (the weights are symmetric).
void gaussian_vertical(const float* const rows[11], const float w[11], float* out, int n);

// out[x] = Σ_k w[k] · in[x + k], k = 0..10, symmetric as above; `in` holds n + 10 values.
void gaussian_horizontal(const float* in, const float w[11], float* out, int n);

// squares[i] = fma(a[i], a[i], b[i]·b[i]); cross[i] = a[i]·b[i].
void second_moments(const float* a, const float* b, float* squares, float* cross, std::size_t n);

// Σ_x SSIM(x) over one row from the Gaussian-weighted means μa, μb and moments E[a² + b²],
// E[ab], in double: ((2·μa·μb + c1)(2·(E[ab] - μa·μb) + c2)) /
// ((μa² + μb² + c1)((E[a² + b²] - (μa² + μb²)) + c2)), with μa² + μb² = fma(μa, μa, μb·μb) and
// the two 2·x + c as fma (exact doubling, so only one rounding is saved). Exactly 1 where a == b.
double ssim_row(const float* mu_a, const float* mu_b, const float* e_squares, const float* e_cross,
                float c1, float c2, float* scratch, int n);

// Σ (a[i] - b[i])² over bytes, exact.
std::uint64_t byte_sse(const std::uint8_t* a, const std::uint8_t* b, std::size_t n);

}  // namespace h3p::metrics::kernels
