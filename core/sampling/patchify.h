#pragma once
// Pure permutations between latent tensors and transformer rows. Video: (1, C, T, H, W) ->
// (T/pt * H/ph * W/pw, C*pt*ph*pw) rows, frame-major then row-major, column
// c*(pt*ph*pw) + it*(ph*pw) + ih*pw + iw (c*4 + ph*2 + pw for the (1,2,2) patch). Audio: the
// (channels*N, 32) channel-major rows and the (channels, 32, N) latents the audio VAE decodes
// as a batch of channels.
#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>

namespace h3p::sampling {

using PatchSize = std::array<int64_t, 3>;  // (t, h, w)
inline constexpr PatchSize kPatchSize = {1, 2, 2};

// Packs (1, C, T, H, W) latents into contiguous rows. Throws InputError for another rank, a
// batch other than 1, or sizes the patch does not divide.
at::Tensor patchify_video(const at::Tensor& latents, PatchSize patch = kPatchSize);

// The exact inverse: rows (T/pt*H/ph*W/pw, C*pt*ph*pw) back to contiguous (1, C, T, H, W).
// Throws InputError when the row shape does not match.
at::Tensor unpatchify_video(const at::Tensor& rows, int64_t channels, int64_t frames,
                            int64_t height, int64_t width, PatchSize patch = kPatchSize);

// Channel-major audio rows (channels*N, 32) -> contiguous latents (channels, 32, N).
at::Tensor audio_rows_to_latents(const at::Tensor& rows, int64_t channels = 2);

// Latents (channels, 32, N) -> contiguous channel-major rows (channels*N, 32).
at::Tensor audio_latents_to_rows(const at::Tensor& latents);

}  // namespace h3p::sampling
