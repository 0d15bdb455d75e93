#include "core/sampling/patchify.h"

#include <ATen/ATen.h>

#include <string>

#include "core/common/error.h"

namespace h3p::sampling {

namespace {

std::string shape_text(const at::Tensor& t) {
  std::string s = "(";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + ")";
}

void check_patch(PatchSize patch) {
  for (const int64_t p : patch) {
    if (p < 1) throw_input("patchify", "patch sizes must be positive");
  }
}

}  // namespace

at::Tensor patchify_video(const at::Tensor& latents, PatchSize patch) {
  check_patch(patch);
  if (latents.dim() != 5 || latents.size(0) != 1) {
    throw_input("patchify", "video latents must be (1, C, T, H, W), got " + shape_text(latents));
  }
  const auto [pt, ph, pw] = patch;
  const int64_t c = latents.size(1), t = latents.size(2), h = latents.size(3),
                w = latents.size(4);
  if (t % pt || h % ph || w % pw) {
    throw_input("patchify", "latents " + shape_text(latents) + " are not divisible by the patch");
  }
  return latents.reshape({1, c, t / pt, pt, h / ph, ph, w / pw, pw})
      .permute({0, 2, 4, 6, 1, 3, 5, 7})
      .reshape({-1, c * pt * ph * pw})
      .contiguous();
}

at::Tensor unpatchify_video(const at::Tensor& rows, int64_t channels, int64_t frames,
                            int64_t height, int64_t width, PatchSize patch) {
  check_patch(patch);
  const auto [pt, ph, pw] = patch;
  if (channels < 1 || frames < 1 || height < 1 || width < 1 || frames % pt || height % ph ||
      width % pw) {
    throw_input("unpatchify", "latent shape not divisible by the patch");
  }
  const int64_t nt = frames / pt, nh = height / ph, nw = width / pw;
  if (rows.dim() != 2 || rows.size(0) != nt * nh * nw || rows.size(1) != channels * pt * ph * pw) {
    throw_input("unpatchify", "rows " + shape_text(rows) + " do not match latents (1, " +
                                  std::to_string(channels) + ", " + std::to_string(frames) +
                                  ", " + std::to_string(height) + ", " + std::to_string(width) +
                                  ")");
  }
  return rows.reshape({1, nt, nh, nw, channels, pt, ph, pw})
      .permute({0, 4, 1, 5, 2, 6, 3, 7})
      .reshape({1, channels, frames, height, width})
      .contiguous();
}

at::Tensor audio_rows_to_latents(const at::Tensor& rows, int64_t channels) {
  if (channels < 1 || rows.dim() != 2 || rows.size(0) % channels != 0) {
    throw_input("audio rows", "rows must be (channels*N, width) with " + std::to_string(channels) +
                                  " channels, got " + shape_text(rows));
  }
  const int64_t n = rows.size(0) / channels;
  return rows.reshape({channels, n, rows.size(1)}).permute({0, 2, 1}).contiguous();
}

at::Tensor audio_latents_to_rows(const at::Tensor& latents) {
  if (latents.dim() != 3) {
    throw_input("audio latents", "must be (channels, width, N), got " + shape_text(latents));
  }
  return latents.permute({0, 2, 1}).reshape({-1, latents.size(1)}).contiguous();
}

}  // namespace h3p::sampling
