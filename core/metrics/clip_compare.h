#pragma once
// Pixel and audio comparison of two decoded clips (a candidate against the provider):
// per frame PSNR and Gaussian SSIM (ssim_gaussian.h) on fp32 frames before quantisation when
// both sides have them (else on the 8-bit frames / 255), the FFmpeg-compatible 8-bit figures
// (ffmpeg_compat.h), the temporal RMSE of frame-to-frame differences, and the audio relative
// L2 (audio_metrics.h). Frames are spread over worker threads; results do not depend on the
// thread count. Reads only through the non-owning views below.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/audio_metrics.h"
#include "core/metrics/ffmpeg_compat.h"

namespace h3p::metrics {

// Element type of the pre-quantisation planes.
enum class PlaneType { f16, f32 };

// One decoded clip, not owned. `rgb` is required; `planes` is optional.
struct ClipView {
  int width = 0, height = 0, frames = 0;
  double fps = 0;
  const std::uint8_t* rgb = nullptr;  // frames x height x width x 3, interleaved RGB
  // The frames as a video file stores them, when that is 8-bit yuv420p (per frame Y, U, V
  // tightly packed, yuv420p_frame_bytes), or null: the FFmpeg-compatible figures are then
  // measured on these instead of on a conversion of `rgb`, as ffmpeg measures such a file.
  const std::uint8_t* yuv420 = nullptr;
  const void* planes = nullptr;       // (3, frames, height, width) in [0, 1], or null
  PlaneType plane_type = PlaneType::f32;
  const float* audio = nullptr;       // planar (audio_channels, audio_samples), or null
  int audio_channels = 0;
  std::int64_t audio_samples = 0;
  std::int64_t audio_stride = 0;      // floats between channels; 0: audio_samples
  int sample_rate = 0;
  // > 0: `rgb` and `yuv420` hold this many frame slots, frame f in slot f % frame_slots (a clip
  // decoded into a ring of slots: each frame is readable from wait_for(f) until frame_done(f));
  // 0: every frame in its own place.
  int frame_slots = 0;
  // Told of each range of `rgb` / `planes` once no frame still to be compared reads it (a
  // memory-mapped clip drops its pages there, so that unmapping them is spread over the
  // workers instead of following them); may be empty. The range stays readable.
  std::function<void(const void* data, std::size_t bytes)> done_with;
  // Told of each frame once no frame still to be compared reads it (its slot may then take a
  // later frame); may be empty.
  std::function<void(int frame)> frame_done;
  // Blocks until frame `frame` of `rgb` is readable (a clip still being decoded, frame after
  // frame); may throw. Empty: every frame is. A waited-for clip is read frame by frame only.
  std::function<void(int frame)> wait_for;

  // Where frame f is in `rgb` and `yuv420`: its slot, or f itself.
  std::size_t slot_of(int f) const {
    return static_cast<std::size_t>(frame_slots > 0 ? f % frame_slots : f);
  }
  // Frame f's interleaved RGB, and its stored yuv420p (null without `yuv420`).
  const std::uint8_t* rgb_frame(int f) const {
    return rgb + static_cast<std::size_t>(width) * height * 3 * slot_of(f);
  }
  const std::uint8_t* yuv420_frame(int f) const {
    return yuv420 == nullptr ? nullptr : yuv420 + yuv420p_frame_bytes(width, height) * slot_of(f);
  }
};

struct ClipParams {
  int threads = 0;                  // worker threads; 0: one per core
  YuvConverterFactory yuv;          // RGB -> yuv420p for the FFmpeg figures; empty: built-in
  double audio_window_seconds = 0;  // window of the audio curve; 0: one video frame
};

struct FrameRow {
  int index = 0;
  double mse = 0;              // fp32 MSE over the three channels
  double psnr_db = 0;          // 10·log10(1 / mse), +inf when identical
  double ssim = 0;             // Gaussian SSIM, mean of the three channels
  double psnr_db_ffmpeg = 0;   // the frame's psnr of FFmpeg's psnr filter (yuv420p)
  double ssim_ffmpeg = 0;      // the frame's "All" of FFmpeg's ssim filter (yuv420p)
  double mse_ffmpeg = 0;       // the frame's pixel-weighted yuv420p MSE (0..255²)
  std::optional<double> temporal_rmse;  // RMSE of (a_f - a_{f-1}) - (b_f - b_{f-1}); from frame 1
};

struct ClipComparison {
  std::vector<FrameRow> frames;
  std::string pixel_source;    // "fp16 frames before quantisation", "8-bit frames", ...
  std::string yuv_conversion;  // YuvConverter::name() of the FFmpeg figures
  double psnr_db = 0;          // 10·log10(1 / mean frame MSE): MSE-pooled over the clip
  double psnr_db_min = 0;      // worst frame
  double ssim = 0;             // mean over frames
  double ssim_min = 0;         // worst frame
  double temporal_rmse = 0;    // over every frame pair and channel; 0 for one frame
  double psnr_db_ffmpeg = 0;   // FFmpeg's "average:"
  double ssim_ffmpeg = 0;      // FFmpeg's "All:"
  std::optional<AudioComparison> audio;  // when both clips carry audio
};

// Compares `candidate` against the reference `provider`. Throws InputError naming the
// differing field (width, height, frames, audio channels or samples) when the shapes differ.
ClipComparison compare_clips(const ClipView& candidate, const ClipView& provider,
                             const ClipParams& params);

// The audio part of compare_clips alone: nullopt unless both clips carry audio. Throws
// InputError naming the differing field (channels, samples, sample rate).
std::optional<AudioComparison> compare_clip_audio(const ClipView& candidate,
                                                  const ClipView& provider,
                                                  const ClipParams& params);

}  // namespace h3p::metrics
