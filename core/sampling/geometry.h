#pragma once
// Frame-count and latent-shape arithmetic of a MiniMax-H3 request: the video VAE encodes
// chunks of 17 frames into 5 latent frames (so clips are 17n+5 frames, 5n+2 latent frames),
// compresses space by 16, and the audio VAE emits 40 latents per second per channel.
#include <string>
#include <vector>

namespace h3p::sampling {

inline constexpr int kFramesPerChunk = 17;       // pixel frames the video VAE encodes per chunk
inline constexpr int kLatentsPerChunk = 5;       // latent frames a chunk keeps
inline constexpr int kSpatialCompression = 16;   // pixels per latent along height and width
inline constexpr int kCanvasMultiple = 32;       // spatial compression x transformer patch
inline constexpr int kLatentChannels = 24;       // video latent channels
inline constexpr int kAudioLatentsPerSecond = 40;
inline constexpr int kAudioChannels = 2;         // stereo, packed channel-major
inline constexpr int kAudioLatentChannels = 32;  // width of one audio row
inline constexpr double kMinDurationSeconds = 5.0;
inline constexpr double kMaxDurationSeconds = 15.0;

// The next frame count >= num_frames of the form frames_per_chunk*n + latents_per_chunk.
// Throws InputError for num_frames < 1.
int align_num_frames(int num_frames, int frames_per_chunk = kFramesPerChunk,
                     int latents_per_chunk = kLatentsPerChunk);

// Latent frames for an aligned frame count: 5n+2 for 17n+5. Throws InputError when unaligned.
int video_latent_num_frames(int num_frames, int frames_per_chunk = kFramesPerChunk,
                            int latents_per_chunk = kLatentsPerChunk);

// Audio latents per channel covering num_frames at fps: round-half-even(frames/fps*40).
int audio_latent_num_frames(int num_frames, double fps = 24.0,
                            int latents_per_second = kAudioLatentsPerSecond);

// A resolved request geometry: pixel sizes as generated and the latent shapes derived from them.
struct Geometry {
  int frames = 0;             // aligned to 17n+5
  int height = 0;             // pixels, multiple of 32
  int width = 0;              // pixels, multiple of 32
  int fps = 0;                // frames per second
  int num_latent_frames = 0;  // 5n+2
  int latent_height = 0;      // height / 16
  int latent_width = 0;       // width / 16
  int num_audio_latents = 0;  // per channel
  std::vector<std::string> warnings;  // adjustments and out-of-window durations, human-readable

  // One line: "frames=124 height=768 width=1344 fps=24 latent=37x48x84 audio_latents=207".
  std::string describe() const;
};

// Validates and resolves a request: height and width positive multiples of 32, fps > 0,
// frames >= 1 snapped up to 17n+5 (recorded as a warning). The reference only generates
// 5-15 s clips; with enforce_duration a duration outside that window throws InputError,
// otherwise it is recorded as a warning (short demo clips). Throws InputError otherwise.
Geometry resolve_geometry(int frames, int height, int width, int fps,
                          bool enforce_duration = false);

}  // namespace h3p::sampling
