#pragma once
// Decoded outputs of a run, kept twice (ARCHITECTURE.md, "Files"):
//   decoded/video.safetensors  `video` (1, 3, F, H, W) fp16 or fp32 in [0, 1], before
//                              quantisation: the source of the pixel metrics; metadata fps
//   decoded/audio.safetensors  `audio` (1, 2, S) fp32; metadata sample_rate
//   decoded/frames.rgb         raw uint8 RGB, frame-major, F x H x W x 3, memory-mappable:
//                              the source of playback (q = floor(clamp(x, 0, 1) · 255 + 0.5))
//   decoded/frames.json        {"format": "rgb24", "width", "height", "frames", "fps",
//                               "frame_bytes", "source"}: written last, it marks the set complete
// The same frames.rgb + frames.json (+ audio.safetensors) form holds a video file decoded for
// `compare`, without video.safetensors. Every file is written atomically. Torch-free: writing
// from tensors is decoded_write.h.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/io/safetensors.h"
#include "core/runs/run_paths.h"

namespace h3p::runs {

// Element type of decoded/video.safetensors.
enum class FramePrecision { f16, f32 };

// decoded/ of a run.
std::filesystem::path decoded_dir(const RunPaths& paths);

// The content of frames.json.
struct FramesHeader {
  int width = 0, height = 0, frames = 0;
  double fps = 0;
  std::string source;  // "run" or the video file it was decoded from
  std::size_t frame_bytes() const { return static_cast<std::size_t>(width) * height * 3; }
};

// Creates `dir` and its parents; throws InputError naming it on failure.
void create_decoded_dir(const std::filesystem::path& dir);

// Writes frames.rgb (from interleaved RGB bytes, F x H x W x 3) and frames.json into `dir`.
void write_raw_frames(const std::filesystem::path& dir, const FramesHeader& header,
                      const std::uint8_t* rgb);

// Writes `audio` (channels x samples, planar fp32) as dir/audio.safetensors.
void write_decoded_audio(const std::filesystem::path& dir, const float* audio, int channels,
                         std::int64_t samples, int sample_rate);

// Decoded outputs opened for reading: frames.rgb memory-mapped, video.safetensors mapped when
// present, audio loaded. Move-only.
class DecodedClip {
 public:
  // Reads `dir` (a run's decoded/ or a decoded video file). Throws InputError naming the file
  // when frames.json is missing or invalid, frames.rgb has the wrong size, or video.safetensors
  // disagrees with frames.json.
  static DecodedClip open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const FramesHeader& header() const { return header_; }
  // Frame `index`'s bytes (H x W x 3), inside the mapping.
  const std::uint8_t* frame(int index) const;
  const std::uint8_t* rgb() const;
  // The pre-quantisation planes (3, F, H, W) inside the mapping, or null without
  // video.safetensors; `half` says fp16 (else fp32).
  const void* planes() const { return planes_; }
  bool planes_half() const { return planes_half_; }
  // Planar audio (channels x samples); empty without audio.safetensors.
  const std::vector<float>& audio() const { return audio_; }
  int audio_channels() const { return audio_channels_; }
  std::int64_t audio_samples() const { return audio_samples_; }
  int sample_rate() const { return sample_rate_; }

  // Drops the page-table entries of the whole pages inside [data, data + bytes), a range of
  // this clip's mapped frames or planes, so that they need no unmapping later; the range stays
  // readable (pages come back from the page cache).
  void drop_pages(const void* data, std::size_t bytes) const;

 private:
  struct Mapping;  // read-only mmap of frames.rgb (RAII)
  explicit DecodedClip(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
  FramesHeader header_;
  std::shared_ptr<const Mapping> frames_;
  std::optional<io::SafetensorsFile> video_;
  const void* planes_ = nullptr;
  bool planes_half_ = false;
  std::vector<float> audio_;
  int audio_channels_ = 0;
  std::int64_t audio_samples_ = 0;
  int sample_rate_ = 0;
};

// Reads frames.json of `dir`; throws InputError naming the file and field.
FramesHeader read_frames_header(const std::filesystem::path& dir);

}  // namespace h3p::runs
