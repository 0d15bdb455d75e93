#include "core/model/anti_alias.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/common/error.h"

namespace h3p::model {
namespace {

constexpr int64_t kRatio = 2;
constexpr int64_t kTaps = 12;
constexpr int64_t kUpPad = kTaps / kRatio - 1;                       // 5 input samples
constexpr int64_t kUpCrop = kUpPad * kRatio + (kTaps - kRatio) / 2;  // 15 output samples
constexpr int64_t kDownPadLeft = kTaps / 2 - 1;                      // 5
constexpr int64_t kSegment = 4096;  // downsampled outputs per parallel work item

void check(const at::Tensor& x, const AntiAliasedSnake& p) {
  if (x.dim() != 3 || p.up_filter.size(-1) != kTaps || p.down_filter.size(-1) != kTaps ||
      p.up_filter.size(0) != x.size(1) || p.down_filter.size(0) != x.size(1)) {
    throw InputError(
        "anti-aliased activation: expected (B, C, L) input and (C, 1, 12) filters, got " +
        c10::str(x.sizes()) + " and " + c10::str(p.up_filter.sizes()));
  }
}

}  // namespace

at::Tensor anti_aliased_snake_reference(const at::Tensor& x, const AntiAliasedSnake& p) {
  check(x, p);
  const int64_t channels = x.size(1);
  const int64_t crop_right = kUpPad * kRatio + (kTaps - kRatio + 1) / 2;
  at::Tensor h = at::replication_pad1d(x, {kUpPad, kUpPad});
  h = at::mul(at::conv_transpose1d(h, p.up_filter, at::Tensor(), at::IntArrayRef{kRatio},
                                   at::IntArrayRef{0}, at::IntArrayRef{0}, channels),
              kRatio);
  h = h.narrow(-1, kUpCrop, h.size(-1) - kUpCrop - crop_right);
  h = at::add(h, at::mul(p.recip_beta, at::pow(at::sin(at::mul(p.alpha, h)), 2)));
  h = at::replication_pad1d(h, {kDownPadLeft, kTaps / 2});
  return at::conv1d(h, p.down_filter, at::Tensor(), at::IntArrayRef{kRatio}, at::IntArrayRef{0},
                    at::IntArrayRef{1}, channels);
}

at::Tensor anti_aliased_snake_fused(const at::Tensor& x_in, const AntiAliasedSnake& p) {
  check(x_in, p);
  const at::Tensor x = x_in.contiguous();
  const int64_t B = x.size(0), C = x.size(1), L = x.size(2);
  at::Tensor out = at::empty_like(x);
  if (L == 0) return out;
  const at::Tensor up = p.up_filter.to(at::kCPU).contiguous();
  const at::Tensor down = p.down_filter.to(at::kCPU).contiguous();
  const at::Tensor alpha = p.alpha.to(at::kCPU).contiguous().view({-1});
  const at::Tensor recip = p.recip_beta.to(at::kCPU).contiguous().view({-1});
  const float* xs = x.data_ptr<float>();
  float* os = out.data_ptr<float>();
  const int64_t segments = (L + kSegment - 1) / kSegment;
  const int64_t up_len = kRatio * L;  // samples between the two resamplers

  at::parallel_for(0, B * C * segments, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> xp, u, v;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t row = item / segments, seg = item % segments, c = row % C;
      const float* xr = xs + row * L;
      const float* fu = up.data_ptr<float>() + c * kTaps;
      const float* fd = down.data_ptr<float>() + c * kTaps;
      const float a = alpha.data_ptr<float>()[c], rb = recip.data_ptr<float>()[c];
      const int64_t j0 = seg * kSegment, j1 = std::min(L, j0 + kSegment);
      // 1. Upsampled samples t in [2·q0, 2·q1) cover every index the outputs read
      //    (2j - 5 .. 2j + 6, replicate-clamped to [0, 2L)).
      const int64_t q0 = std::max<int64_t>(0, j0 - 3), q1 = std::min(L, j1 + 3);
      // Polyphase form of the transposed conv over the replicate-padded input:
      //   u[2q] = 2·Σ_i f[2i+1]·x[q+2-i],  u[2q+1] = 2·Σ_i f[2i]·x[q+3-i],  i = 0..5,
      // x read through a local copy padded by 3 before and 3 after (replicated edges).
      xp.resize(static_cast<std::size_t>(q1 - q0 + 6));
      for (int64_t m = q0 - 3; m < q1 + 3; ++m) {
        xp[static_cast<std::size_t>(m - q0 + 3)] = xr[std::min(std::max<int64_t>(m, 0), L - 1)];
      }
      const int64_t n_up = 2 * (q1 - q0);
      u.resize(static_cast<std::size_t>(n_up));
      v.resize(static_cast<std::size_t>(n_up));
      for (int64_t q = q0; q < q1; ++q) {
        const float* w = xp.data() + (q - q0 + 3);  // w[d] = x[q + d]
        float even = 0.f, odd = 0.f;
        for (int64_t i = 0; i < 6; ++i) {
          even += w[2 - i] * fu[2 * i + 1];
          odd += w[3 - i] * fu[2 * i];
        }
        u[static_cast<std::size_t>(2 * (q - q0))] = even * static_cast<float>(kRatio);
        u[static_cast<std::size_t>(2 * (q - q0) + 1)] = odd * static_cast<float>(kRatio);
      }
      // 2. SnakeBeta: u + 1/(β+1e-9)·sin²(αu); the sine through ATen's vectorised kernel.
      for (int64_t t = 0; t < n_up; ++t)
        v[static_cast<std::size_t>(t)] = a * u[static_cast<std::size_t>(t)];
      at::Tensor vt = at::from_blob(v.data(), {n_up}, at::TensorOptions().dtype(at::kFloat));
      at::sin_out(vt, vt);
      for (int64_t t = 0; t < n_up; ++t) {
        const float sn = v[static_cast<std::size_t>(t)];
        u[static_cast<std::size_t>(t)] += rb * (sn * sn);
      }
      // 3. Strided 12-tap filter over the replicate-padded result.
      const int64_t t0 = 2 * q0;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t first = kRatio * j - kDownPadLeft;
        float acc = 0.f;
        if (first >= 0 && first + kTaps <= up_len) {
          const float* sp = u.data() + (first - t0);
          for (int64_t k = 0; k < kTaps; ++k) acc += sp[k] * fd[k];
        } else {
          for (int64_t k = 0; k < kTaps; ++k) {
            const int64_t i = std::min(std::max<int64_t>(first + k, 0), up_len - 1);
            acc += u[static_cast<std::size_t>(i - t0)] * fd[k];
          }
        }
        os[row * L + j] = acc;
      }
    }
  });
  return out;
}

at::Tensor anti_aliased_snake(const at::Tensor& x, const AntiAliasedSnake& p) {
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat) return anti_aliased_snake_fused(x, p);
  return anti_aliased_snake_reference(x, p);
}

}  // namespace h3p::model
