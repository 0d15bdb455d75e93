#pragma once
// The RGB24 -> yuv420p conversion FFmpeg's `format=yuv420p` filter performs (libswscale,
// bicubic, BT.601 limited range), for the FFmpeg-compatible metrics.
#include <memory>

#include "core/metrics/ffmpeg_compat.h"

namespace h3p::media {

// A converter through libswscale; one per thread (see metrics::YuvConverterFactory).
std::unique_ptr<metrics::YuvConverter> make_swscale_yuv_converter();

}  // namespace h3p::media
