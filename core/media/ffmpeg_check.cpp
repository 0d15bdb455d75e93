#include "core/media/ffmpeg_check.h"

namespace h3p::media {

int check(const std::string& context, int status) {
  if (status >= 0) return status;
  char text[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(status, text, sizeof text);
  throw FfmpegError(context + ": " + text);
}

void FormatOutputDeleter::operator()(AVFormatContext* c) const {
  if (c == nullptr) return;
  if (c->pb != nullptr && !(c->oformat->flags & AVFMT_NOFILE)) avio_closep(&c->pb);
  avformat_free_context(c);
}

Frame make_frame(const std::string& context) {
  Frame f(av_frame_alloc());
  if (!f) throw FfmpegError(context + ": cannot allocate a frame");
  return f;
}

Packet make_packet(const std::string& context) {
  Packet p(av_packet_alloc());
  if (!p) throw FfmpegError(context + ": cannot allocate a packet");
  return p;
}

}  // namespace h3p::media
