#pragma once
// The 8-bit figures of FFmpeg's psnr and ssim filters on yuv420p, reimplemented so that a
// comparison can be cross-checked with
//   ffmpeg -lavfi "[a]format=yuv420p[x];[b]format=yuv420p[y];[x][y]psnr"   (and likewise ssim).
// PSNR: per plane the mean squared error; a frame's MSE is the planes' MSEs weighted by their
// pixel counts; a frame's PSNR is 10·log10(255² / MSE); the clip's figure ("average:") is
// 10·log10(255² / mean of the frames' MSEs). SSIM: the x264 form, 8x8 windows at stride 4 built
// from 4x4 block sums, integer moments, c1 = round(0.01²·255²·64), c2 = round(0.03²·255²·64·63);
// a frame's SSIM is the planes' mean SSIMs weighted by pixel counts; the clip's figure
// ("All:") is the mean over frames. The RGB -> yuv420p conversion is pluggable: FFmpeg's
// figures come from libswscale's conversion (yuv_swscale_exact.h reimplements it byte for
// byte; h3p_media supplies the library itself); the built-in one is BT.601 limited range with
// 2x2-averaged chroma and may differ from it by a rounding step.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/metrics/plane_pass.h"

namespace h3p::metrics {

// Bytes of one tightly packed yuv420p frame: Y, then U and V of ceil(width/2) x ceil(height/2).
inline std::size_t yuv420p_frame_bytes(int width, int height) {
  const std::size_t cw = static_cast<std::size_t>(width + 1) / 2;
  const std::size_t ch = static_cast<std::size_t>(height + 1) / 2;
  return static_cast<std::size_t>(width) * static_cast<std::size_t>(height) + 2 * cw * ch;
}

// Width (or height) of plane p (Y, U, V) of a 4:2:0 frame `size` wide (or high).
inline int yuv420_plane_extent(int size, int p) { return p == 0 ? size : (size + 1) / 2; }

// One 8-bit 4:2:0 frame; chroma planes are ceil(width/2) x ceil(height/2).
struct Yuv420Frame {
  int width = 0, height = 0;
  std::vector<std::uint8_t> planes[3];  // Y, U, V, each tightly packed
  int plane_width(int p) const { return yuv420_plane_extent(width, p); }
  int plane_height(int p) const { return yuv420_plane_extent(height, p); }
  // Sizes the planes for width x height.
  void resize(int w, int h);
};

// A yuv420p frame held elsewhere (a Yuv420Frame, or a decoder's stored planes), not owned.
struct Yuv420View {
  int width = 0, height = 0;
  const std::uint8_t* planes[3] = {nullptr, nullptr, nullptr};  // tightly packed, as above
  int plane_width(int p) const { return yuv420_plane_extent(width, p); }
  int plane_height(int p) const { return yuv420_plane_extent(height, p); }
  // The view of a tightly packed frame at `frame` (yuv420p_frame_bytes of it).
  static Yuv420View packed(const std::uint8_t* frame, int width, int height);
  static Yuv420View of(const Yuv420Frame& f);
};

// Converts interleaved RGB24 frames of one size to yuv420p. One object per thread.
class YuvConverter {
 public:
  virtual ~YuvConverter() = default;
  // `rgb` holds width·height·3 bytes, and `readable` bytes (>= that) may be read from it on
  // (a frame inside a larger buffer needs no padded copy); `out` is resized as needed.
  virtual void convert(const std::uint8_t* rgb, std::size_t readable, int width, int height,
                       Yuv420Frame& out) = 0;
  // What produced the planes ("libswscale bicubic", "built-in BT.601"); goes into reports.
  virtual std::string name() const = 0;
};

// Makes one converter per worker thread.
using YuvConverterFactory = std::function<std::unique_ptr<YuvConverter>()>;

// The built-in converter (no FFmpeg needed).
std::unique_ptr<YuvConverter> make_builtin_yuv_converter();

// Per-plane figures of one frame pair.
struct FfmpegFrameStats {
  std::uint64_t sse[3] = {0, 0, 0};  // Σ squared differences per plane
  double ssim[3] = {0, 0, 0};        // mean x264-style SSIM per plane
  double mse = 0;                    // planes' MSEs weighted by pixel count
  double ssim_all = 0;               // planes' SSIMs weighted by pixel count
};

// Scratch space of the SSIM rows; one per thread.
struct FfmpegScratch {
  std::vector<int> sums;
  std::vector<float> windows;
};

// Compares two frames of the same size. Throws InputError when the sizes differ.
FfmpegFrameStats ffmpeg_frame_stats(const Yuv420View& a, const Yuv420View& b,
                                    FfmpegScratch& scratch);
FfmpegFrameStats ffmpeg_frame_stats(const Yuv420Frame& a, const Yuv420Frame& b,
                                    FfmpegScratch& scratch);

// Mean x264-style SSIM of one plane (1 when it has no whole 8x8 window) on path `isa`
// (lowered to what the CPU runs); every path gives the same bits.
double x264_ssim_plane(const std::uint8_t* a, const std::uint8_t* b, int width, int height,
                       FfmpegScratch& scratch, PassIsa isa = default_pass_isa());

// 10·log10(peak² / mse); +inf when mse is 0.
double psnr_from_mse(double mse, double peak);

}  // namespace h3p::metrics
