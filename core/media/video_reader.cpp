#include "core/media/video_reader.h"

namespace h3p::media {
namespace fs = std::filesystem;
namespace {

Codec open_decoder(AVFormatContext* format, int stream, int threads, const std::string& where) {
  const AVCodecParameters* par = format->streams[stream]->codecpar;
  const AVCodec* codec = avcodec_find_decoder(par->codec_id);
  if (codec == nullptr) throw FfmpegError(where + ": no decoder for stream " + std::to_string(stream));
  Codec ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw FfmpegError(where + ": cannot allocate a decoder");
  check(where + ": stream parameters", avcodec_parameters_to_context(ctx.get(), par));
  ctx->thread_count = threads;
  check(where + ": open decoder " + codec->name, avcodec_open2(ctx.get(), codec, nullptr));
  return ctx;
}

// Sends one packet (null: flush) and hands every frame that comes out to `take`.
void decode_packet(AVCodecContext* dec, const AVPacket* packet, AVFrame* frame,
                   const std::string& where, const std::function<void(const AVFrame*)>& take) {
  check(where + ": decode", avcodec_send_packet(dec, packet));
  for (;;) {
    const int status = avcodec_receive_frame(dec, frame);
    if (status == AVERROR(EAGAIN) || status == AVERROR_EOF) return;
    check(where + ": decode", status);
    take(frame);
    av_frame_unref(frame);
  }
}

}  // namespace

void RgbConverter::convert(const AVFrame* f, std::uint8_t* dst) {
  if (width_ == 0) {
    width_ = f->width;
    height_ = f->height;
  } else if (f->width != width_ || f->height != height_) {
    throw InputError(where_ + ": frame size changes mid-stream (" + std::to_string(width_) + "x" +
                     std::to_string(height_) + " to " + std::to_string(f->width) + "x" +
                     std::to_string(f->height) + ")");
  }
  sws_.reset(sws_getCachedContext(sws_.release(), f->width, f->height,
                                  static_cast<AVPixelFormat>(f->format), width_, height_,
                                  AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr));
  if (!sws_) throw FfmpegError(where_ + ": cannot convert frames to rgb24");
  std::uint8_t* out[1] = {dst};
  const int stride[1] = {3 * width_};
  sws_scale(sws_.get(), f->data, f->linesize, 0, f->height, out, stride);
}

AudioSink::AudioSink(const AVCodecContext* dec, int rate, const std::string& where)
    : where_(where), rate_(rate > 0 ? rate : dec->sample_rate) {
  SwrContext* swr = nullptr;
  AVChannelLayout stereo = AV_CHANNEL_LAYOUT_STEREO;
  check(where + ": audio resampler",
        swr_alloc_set_opts2(&swr, &stereo, AV_SAMPLE_FMT_FLTP, rate_,
                            const_cast<AVChannelLayout*>(&dec->ch_layout), dec->sample_fmt,
                            dec->sample_rate, 0, nullptr));
  swr_.reset(swr);
  check(where + ": audio resampler", swr_init(swr_.get()));
}

void AudioSink::take(const AVFrame* f) {
  convert(const_cast<const std::uint8_t**>(f->extended_data), f->nb_samples);
}

void AudioSink::flush() { convert(nullptr, 0); }

void AudioSink::convert(const std::uint8_t** in, int count) {
  const int room = swr_get_out_samples(swr_.get(), count);
  if (room <= 0) return;
  const std::size_t at = channels[0].size();
  channels[0].resize(at + room);
  channels[1].resize(at + room);
  std::uint8_t* out[2] = {reinterpret_cast<std::uint8_t*>(channels[0].data() + at),
                          reinterpret_cast<std::uint8_t*>(channels[1].data() + at)};
  const int got = check(where_ + ": resample audio", swr_convert(swr_.get(), out, room, in, count));
  channels[0].resize(at + got);
  channels[1].resize(at + got);
}

VideoReader::VideoReader(const fs::path& video, int threads)
    : path_(video), where_(video.string()), threads_(threads) {
  open();
}

void VideoReader::open() {
  vdec_.reset();
  adec_.reset();
  format_.reset();
  AVFormatContext* raw = nullptr;
  check(where_ + ": open", avformat_open_input(&raw, path_.c_str(), nullptr, nullptr));
  format_.reset(raw);
  check(where_ + ": read stream info", avformat_find_stream_info(format_.get(), nullptr));
  video_stream_ = av_find_best_stream(format_.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (video_stream_ < 0) throw InputError(where_ + ": no video stream");
  audio_stream_ = av_find_best_stream(format_.get(), AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  vdec_ = open_decoder(format_.get(), video_stream_, threads_, where_);
  if (audio_stream_ >= 0) adec_ = open_decoder(format_.get(), audio_stream_, threads_, where_);
  AVStream* video = format_->streams[video_stream_];
  width_ = video->codecpar->width;
  height_ = video->codecpar->height;
  pixel_format_ = static_cast<AVPixelFormat>(video->codecpar->format);
  const AVRational rate = av_guess_frame_rate(format_.get(), video, nullptr);
  fps_ = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 24.0;
}

void VideoReader::rewind() {
  AVFormatContext* raw = nullptr;
  check(where_ + ": open", avformat_open_input(&raw, path_.c_str(), nullptr, nullptr));
  FormatInput again(raw);
  // The streams the header declares, as the probed context found them; a format whose streams
  // only show up while reading (no header) is opened and probed again.
  auto same = [&](int stream) {
    return stream < 0 || (stream < static_cast<int>(raw->nb_streams) &&
                          raw->streams[stream]->codecpar->codec_id ==
                              format_->streams[stream]->codecpar->codec_id);
  };
  if ((raw->ctx_flags & AVFMTCTX_NOHEADER) != 0 || !same(video_stream_) || !same(audio_stream_)) {
    open();
    return;
  }
  format_ = std::move(again);
}

int VideoReader::count_video_packets() {
  Packet packet = make_packet(where_);
  int count = 0;
  for (;;) {
    const int status = av_read_frame(format_.get(), packet.get());
    if (status == AVERROR_EOF) break;
    check(where_ + ": read", status);
    if (packet->stream_index == video_stream_ && (packet->flags & AV_PKT_FLAG_DISCARD) == 0) {
      ++count;
    }
    av_packet_unref(packet.get());
  }
  rewind();
  return count;
}

bool VideoReader::decode(const std::function<void(const AVFrame*)>& video,
                         const std::function<void(const AVFrame*)>& audio,
                         const std::atomic<bool>* stop) {
  Packet packet = make_packet(where_);
  Frame frame = make_frame(where_);
  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return false;
    const int status = av_read_frame(format_.get(), packet.get());
    if (status == AVERROR_EOF) break;
    check(where_ + ": read", status);
    if (packet->stream_index == video_stream_) {
      decode_packet(vdec_.get(), packet.get(), frame.get(), where_, video);
    } else if (adec_ && packet->stream_index == audio_stream_) {
      decode_packet(adec_.get(), packet.get(), frame.get(), where_, audio);
    }
    av_packet_unref(packet.get());
  }
  decode_packet(vdec_.get(), nullptr, frame.get(), where_, video);
  if (adec_) decode_packet(adec_.get(), nullptr, frame.get(), where_, audio);
  return true;
}

}  // namespace h3p::media
