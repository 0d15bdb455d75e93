#pragma once
// Export of decoded outputs (core/runs/decoded.h) to files others can play: a lossless MKV
// (FFV1 video in 8-bit RGB (bgr0) + FLAC audio, 24-bit) and a shareable MP4 (H.264 yuv420p CRF 18 +
// AAC 192 kb/s, moov atom first), both at the clip's fps and the audio's sample rate.
#include <filesystem>
#include <functional>
#include <string>

namespace h3p::media {

struct ExportParams {
  std::filesystem::path decoded_dir;  // frames.json + frames.rgb (+ audio.safetensors)
  std::filesystem::path mkv;          // empty: not written
  std::filesystem::path mp4;          // empty: not written
  int crf = 18;                       // H.264 quality
  std::string preset = "medium";      // x264 preset
  bool quiet = true;                  // FFmpeg logs errors only (process-wide setting)
  std::function<void(double, const std::string&)> progress;
  // One "key: value" per line.
  std::string describe() const;
};

// Writes the requested files (each to a temporary name, then renamed). Throws InputError /
// FfmpegError naming the file on failure.
void export_clip(const ExportParams& params);

}  // namespace h3p::media
