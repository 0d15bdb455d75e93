// Portable attention step: always compiled, taken when the CPU has neither AVX2 nor AVX-512 or
// when H3P_KERNELS_ISA=scalar forces it; tested explicitly by test_attention. exp is std::exp.
#include <cmath>
#include <limits>

#include "kernels/cpu/attention_micro.h"

namespace h3p::kernels::cpu::attention_detail {

void tile_step_scalar(const float* qt, const float* kt, const float* vt, std::int64_t d,
                      std::int64_t dp, int valid_keys, float scale, float* m, float* l,
                      float* o) {
  float p[kQueryTile][kKeyTile];
  // Step 1: scaled scores.
  for (int r = 0; r < kQueryTile; ++r) {
    for (int j = 0; j < valid_keys; ++j) {
      float acc = 0.0f;
      for (std::int64_t c = 0; c < d; ++c) acc += qt[c * kQueryTile + r] * kt[c * kKeyTile + j];
      p[r][j] = acc * scale;
    }
  }
  // Step 2: running max, weights, rescale factor, running sum.
  float corr[kQueryTile];
  for (int r = 0; r < kQueryTile; ++r) {
    float mx = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < valid_keys; ++j) mx = std::fmax(mx, p[r][j]);
    const float m_new = std::fmax(m[r], mx);
    corr[r] = std::exp(m[r] - m_new);
    float sum = 0.0f;
    for (int j = 0; j < valid_keys; ++j) {
      p[r][j] = std::exp(p[r][j] - m_new);
      sum += p[r][j];
    }
    l[r] = l[r] * corr[r] + sum;
    m[r] = m_new;
  }
  // Step 3: o = o·corr + p·v.
  for (int r = 0; r < kQueryTile; ++r) {
    float* orow = o + r * dp;
    for (std::int64_t c = 0; c < dp; ++c) {
      float acc = orow[c] * corr[r];
      for (int j = 0; j < valid_keys; ++j) acc += p[r][j] * vt[j * dp + c];
      orow[c] = acc;
    }
  }
}

}  // namespace h3p::kernels::cpu::attention_detail
