#pragma once
// FFmpeg status codes as exceptions, and owning handles for FFmpeg's C objects. Private to
// h3p_media (includes FFmpeg headers).
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

#include "core/common/error.h"

namespace h3p::media {

// An FFmpeg call failed; the message names the file or stream and the call. Exit code 2.
class FfmpegError : public InputError {
 public:
  using InputError::InputError;
};

// Throws FfmpegError("<context>: <av_strerror(status)>") when status < 0; returns status.
int check(const std::string& context, int status);

struct FormatInputDeleter {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct FormatOutputDeleter {
  void operator()(AVFormatContext* c) const;  // closes the file, frees the context
};
struct CodecDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsDeleter {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct SwrDeleter {
  void operator()(SwrContext* s) const { swr_free(&s); }
};

using FormatInput = std::unique_ptr<AVFormatContext, FormatInputDeleter>;
using FormatOutput = std::unique_ptr<AVFormatContext, FormatOutputDeleter>;
using Codec = std::unique_ptr<AVCodecContext, CodecDeleter>;
using Frame = std::unique_ptr<AVFrame, FrameDeleter>;
using Packet = std::unique_ptr<AVPacket, PacketDeleter>;
using Sws = std::unique_ptr<SwsContext, SwsDeleter>;
using Swr = std::unique_ptr<SwrContext, SwrDeleter>;

// Allocations that throw FfmpegError naming `context` when FFmpeg returns null.
Frame make_frame(const std::string& context);
Packet make_packet(const std::string& context);

}  // namespace h3p::media
