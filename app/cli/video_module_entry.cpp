// h3parity-video.so: the entry point the h3parity front opens (video_module.h). Version 2:
// h3p_start_video_decode_v2(path, sample_rate, keep_frames, error) starts
// media::start_video_decode (every frame kept when keep_frames is non-zero, else a ring of frame
// slots) and returns the clip (owned by the caller, deleted through its virtual destructor), or
// null with the reason in *error.
#include <string>

#include "core/common/error.h"
#include "core/media/video_stream.h"

extern "C" __attribute__((visibility("default"))) h3p::runs::DecodingClip*
h3p_start_video_decode_v2(const char* path, int sample_rate, int keep_frames, std::string* error) {
  try {
    return h3p::media::start_video_decode(path, sample_rate, 0, keep_frames != 0).release();
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = std::string(path) + ": unknown error while opening the video";
  }
  return nullptr;
}
