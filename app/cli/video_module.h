#pragma once
// The streaming decode of video files for the h3parity front, which links no FFmpeg: the module
// h3parity-video.so beside the executable (app/cli/video_module_entry.cpp, h3p_media's decoder)
// is opened the first time a compare meets a video file. The engine links h3p_media instead.
#include "core/metrics/compare/run_compare.h"

namespace h3p::cli {

// The module's decoder, or an empty function when the module is not beside this executable or
// cannot be loaded (the caller then hands the command to the engine).
compare::VideoDecoder video_decoder_from_module();

}  // namespace h3p::cli
