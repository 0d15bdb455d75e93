#pragma once
// Decode files: latents in (`latents` (1, 24, T, h, w) and/or `audio_latents` (2, 32, N),
// normalised as the sampler leaves them), media out (`video` (1, 3, F, H, W) fp32 in [0, 1],
// `audio` (1, 2, S) fp32 at the audio VAE's sampling rate), both safetensors.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/model/decoder.h"

namespace h3p::model {

struct DecodeFileParams {
  std::filesystem::path model;    // model directory with vae/ and/or audio_vae/
  std::filesystem::path latents;  // input safetensors
  std::filesystem::path out;      // output safetensors (written atomically)
  std::string device = "cpu";     // cpu | cuda[:N]
  DecodeOptions options;
  // Hears, before the decoders load, what is decoded and on a CPU how long it should take
  // (decode_estimate.h describe_decode); may be empty.
  std::function<void(const std::string&)> before_decode;

  // One "key: value" per line, for manifests and logs.
  std::string describe() const;
};

struct DecodeFileResult {
  at::Tensor video, audio;                      // undefined when the input had no such latents
  at::Tensor saved_video, saved_audio;          // `video` / `audio` found in the input, if any
  double video_seconds = 0, audio_seconds = 0;  // wall time of each decode
  int64_t sample_rate = 0;                      // of `audio`
  std::string sha256;                           // of the written file
};

// Reads the latents, loads only the decoders they need, decodes, writes `out` with metadata
// (device, torch, sample_rate, options). Throws InputError naming the file and the tensor.
DecodeFileResult decode_file(const DecodeFileParams& params);

}  // namespace h3p::model
