#pragma once
// A clip being decoded into memory on a thread of its own, frame after frame, so that a reader
// (compare's metric pass) starts on the first frames while the later ones are still being
// decoded, and frees what it has read. h3p_media makes them from video files
// (core/media/video_stream.h); core only reads them through this interface.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/runs/decoded.h"

namespace h3p::runs {

// Planar audio decoded with the clip (channels x samples, fp32).
struct ClipAudio {
  std::vector<float> planar;
  int channels = 0;
  std::int64_t samples = 0;
  int sample_rate = 0;
};

class DecodingClip {
 public:
  // Stops the decode if it still runs, waits for its thread and frees the frames.
  virtual ~DecodingClip() = default;
  // The geometry, known before decoding: `frames` counts the file's video packets.
  virtual const FramesHeader& header() const = 0;
  // F x H x W x 3 interleaved RGB; frame f is readable once wait_for(f) has returned.
  virtual const std::uint8_t* rgb() const = 0;
  // Blocks until frame `frame` is decoded. Throws the decode's error (naming the file) when
  // the decode failed or ended before that frame.
  virtual void wait_for(int frame) const = 0;
  // Frees the whole pages inside [data, data + bytes) of rgb(): nothing there is read again.
  virtual void release(const void* data, std::size_t bytes) const = 0;
  // Waits for the decode to end and returns its audio (no channels without an audio stream).
  // Throws the decode's error, or InputError when fewer or more frames were decoded than the
  // file has video packets.
  virtual const ClipAudio& finish() = 0;
};

}  // namespace h3p::runs
