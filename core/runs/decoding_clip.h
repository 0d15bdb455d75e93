#pragma once
// A clip being decoded into memory on a thread of its own, frame after frame, so that a reader
// (compare's metric pass) starts on the first frames while the later ones are still being
// decoded, and frees what it has read. h3p_media makes them from video files
// (core/media/video_stream.h); core only reads them through this interface.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/metrics/ffmpeg_compat.h"
#include "core/runs/decoded.h"

namespace h3p::runs {

// Planar audio decoded with the clip (channels x samples, fp32).
struct ClipAudio {
  std::vector<float> planar;
  int channels = 0;
  std::int64_t samples = 0;
  int sample_rate = 0;
};

// Bytes of one yuv420p frame of the clip's geometry.
inline std::size_t yuv420_frame_bytes(const FramesHeader& h) {
  return metrics::yuv420p_frame_bytes(h.width, h.height);
}

// A decode runs at most this many frames ahead of its reader: of the first frame not released
// or of the furthest frame waited for, whichever is later (all frames once finish() is
// called). The frames are still in the cache when they are read, and few pages are in use.
constexpr int kDecodeLookAhead = 3;

// Frame slots of a clip whose reader releases each frame once read: the look-ahead and room for
// the frames the reader's workers still hold (each run also reads the previous frame). Frame f
// is decoded into slot f % kDecodeSlots once frame f - kDecodeSlots is released, so the same
// memory is written again and again (still cached, no page to fault in and zero).
constexpr int kDecodeSlots = kDecodeLookAhead + 5;

class DecodingClip {
 public:
  // Stops the decode if it still runs, waits for its thread and frees the frames.
  virtual ~DecodingClip() = default;
  // The geometry, known before decoding: `frames` counts the file's video packets.
  virtual const FramesHeader& header() const = 0;
  // Frame slots in rgb() and yuv420(): frame f is held in slot f % frame_slots(); header().frames
  // when the clip keeps every frame, else at most kDecodeSlots.
  virtual int frame_slots() const = 0;
  // frame_slots() x H x W x 3 interleaved RGB; frame f is readable in its slot (rgb_frame) once
  // wait_for(f) has returned, until it is released.
  virtual const std::uint8_t* rgb() const = 0;
  // The frames as the file stores them when that is 8-bit yuv420p (H.264 as usually encoded),
  // else null: per slot Y (W x H), then U and V (ceil(W/2) x ceil(H/2)), tightly packed
  // (yuv420_frame_bytes), readable with the RGB frame. The FFmpeg-compatible figures are
  // measured on these, as ffmpeg measures such a file, instead of on a conversion of rgb().
  virtual const std::uint8_t* yuv420() const = 0;
  // Frame f's RGB and yuv420p (null when the file is not yuv420p) in their slots.
  const std::uint8_t* rgb_frame(int f) const {
    return rgb() + header().frame_bytes() * static_cast<std::size_t>(f % frame_slots());
  }
  const std::uint8_t* yuv420_frame(int f) const {
    const std::uint8_t* base = yuv420();
    const auto slot = static_cast<std::size_t>(f % frame_slots());
    return base == nullptr ? nullptr : base + yuv420_frame_bytes(header()) * slot;
  }
  // Blocks until frame `frame` is decoded. Throws the decode's error (naming the file) when
  // the decode failed or ended before that frame.
  virtual void wait_for(int frame) const = 0;
  // Frames decoded so far (readable without waiting).
  virtual int decoded_frames() const = 0;
  // Frame `frame` is not read again: its slot may take a later frame. A clip that does not keep
  // every frame stalls once the oldest frame not released is kDecodeSlots behind the next one.
  virtual void release(int frame) const = 0;
  // Waits for the decode to end and returns its audio (no channels without an audio stream).
  // Throws the decode's error, or InputError when fewer or more frames were decoded than the
  // file has video packets.
  virtual const ClipAudio& finish() = 0;
};

}  // namespace h3p::runs
