#pragma once
// A video file decoded into memory on a thread of its own (runs::DecodingClip): compare's
// metric pass reads each frame as soon as it is decoded and hands its slot back once read, so
// that decoding both sides and measuring them overlap and no frame touches the disk.
#include <filesystem>
#include <memory>

#include "core/runs/decoding_clip.h"

namespace h3p::media {

// Counts the video packets of `video` (the frame count the clip announces), then starts
// decoding the first video stream to RGB24 (as decode_video_file does) and the first audio
// stream to planar stereo fp32 at `sample_rate` (the stream's own when 0). `threads`: FFmpeg's
// decoding threads; 0: half of this machine's cores, at least one (compare decodes two files
// side by side, so the two decoders together take the machine, and on two cores each decodes
// on one thread, without the frame threads' hand-over work). `keep_frames`: every frame stays
// readable until the clip is destroyed; else the frames go into runs::kDecodeSlots slots, reused
// as the reader releases frames (it must release each one it is done with, or the decode
// stalls). Throws FfmpegError naming the file when it cannot be read, InputError when it has no
// video stream or no video packets.
std::unique_ptr<runs::DecodingClip> start_video_decode(const std::filesystem::path& video,
                                                       int sample_rate = 0, int threads = 0,
                                                       bool keep_frames = true);

}  // namespace h3p::media
