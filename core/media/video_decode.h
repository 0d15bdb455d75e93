#pragma once
// Any video FFmpeg reads, decoded once into the raw-frame form of a run's decoded outputs
// (core/runs/decoded.h): frames.rgb + frames.json, and audio.safetensors (stereo fp32).
#include <filesystem>

namespace h3p::media {

// Decodes the first video stream of `video` to RGB24 (libswscale, bicubic, the stream's colour
// matrix) and the first audio stream, if any, to planar stereo fp32 at `sample_rate` (the
// stream's own rate when 0), into `out_dir`. Throws FfmpegError naming the file on a read or
// decode failure, InputError when it has no video stream.
void decode_video_file(const std::filesystem::path& video, const std::filesystem::path& out_dir,
                       int sample_rate = 0);

}  // namespace h3p::media
