#include "core/sampling/geometry.h"

#include <cmath>
#include <sstream>

#include "core/common/error.h"

namespace h3p::sampling {

int align_num_frames(int num_frames, int frames_per_chunk, int latents_per_chunk) {
  if (num_frames < 1) {
    throw_input("geometry", "frames must be positive, got " + std::to_string(num_frames));
  }
  if (frames_per_chunk < 1 || latents_per_chunk < 0 || latents_per_chunk >= frames_per_chunk) {
    throw_input("geometry", "invalid chunking " + std::to_string(frames_per_chunk) + "n+" +
                                std::to_string(latents_per_chunk));
  }
  while (num_frames % frames_per_chunk != latents_per_chunk) ++num_frames;
  return num_frames;
}

int video_latent_num_frames(int num_frames, int frames_per_chunk, int latents_per_chunk) {
  if (num_frames < 1 || num_frames % frames_per_chunk != latents_per_chunk) {
    throw_input("geometry", "frames must be of the form " + std::to_string(frames_per_chunk) +
                                "n+" + std::to_string(latents_per_chunk) + ", got " +
                                std::to_string(num_frames));
  }
  return (num_frames - latents_per_chunk) / frames_per_chunk * latents_per_chunk + 2;
}

int audio_latent_num_frames(int num_frames, double fps, int latents_per_second) {
  if (!(fps > 0.0)) throw_input("geometry", "fps must be positive");
  // Python's round() on a float: nearest, ties to even (the default rounding mode).
  const double latents = static_cast<double>(num_frames) / fps * latents_per_second;
  return static_cast<int>(std::nearbyint(latents));
}

std::string Geometry::describe() const {
  std::ostringstream out;
  out << "frames=" << frames << " height=" << height << " width=" << width << " fps=" << fps
      << " latent=" << num_latent_frames << "x" << latent_height << "x" << latent_width
      << " audio_latents=" << num_audio_latents;
  return out.str();
}

Geometry resolve_geometry(int frames, int height, int width, int fps, bool enforce_duration) {
  if (height <= 0 || width <= 0 || height % kCanvasMultiple != 0 ||
      width % kCanvasMultiple != 0) {
    throw_input("geometry", "height and width must be positive multiples of " +
                                std::to_string(kCanvasMultiple) + ", got " +
                                std::to_string(height) + "x" + std::to_string(width));
  }
  if (fps <= 0) throw_input("geometry", "fps must be positive, got " + std::to_string(fps));

  Geometry g;
  g.frames = align_num_frames(frames);
  g.height = height;
  g.width = width;
  g.fps = fps;
  if (g.frames != frames) {
    g.warnings.push_back("frames must be of the form 17n+5 for the video VAE; rounded " +
                         std::to_string(frames) + " up to " + std::to_string(g.frames));
  }
  const double duration = static_cast<double>(g.frames) / fps;
  if (!(duration >= kMinDurationSeconds && duration <= kMaxDurationSeconds)) {
    std::ostringstream what;
    what << "the reference generates 5 to 15 seconds; " << g.frames << " frames at " << fps
         << " fps last " << duration << " s";
    if (enforce_duration) throw_input("geometry", what.str());
    g.warnings.push_back(what.str());
  }
  g.num_latent_frames = video_latent_num_frames(g.frames);
  g.latent_height = height / kSpatialCompression;
  g.latent_width = width / kSpatialCompression;
  g.num_audio_latents = audio_latent_num_frames(g.frames, static_cast<double>(fps));
  return g;
}

}  // namespace h3p::sampling
