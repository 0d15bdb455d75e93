#include "core/media/video_decode.h"

#include <vector>

#include "core/media/ffmpeg_check.h"
#include "core/runs/decoded.h"

namespace h3p::media {
namespace fs = std::filesystem;
namespace {

Codec open_decoder(AVFormatContext* format, int stream, const std::string& where) {
  const AVCodecParameters* par = format->streams[stream]->codecpar;
  const AVCodec* codec = avcodec_find_decoder(par->codec_id);
  if (codec == nullptr) throw FfmpegError(where + ": no decoder for stream " + std::to_string(stream));
  Codec ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw FfmpegError(where + ": cannot allocate a decoder");
  check(where + ": stream parameters", avcodec_parameters_to_context(ctx.get(), par));
  ctx->thread_count = 0;
  check(where + ": open decoder " + codec->name, avcodec_open2(ctx.get(), codec, nullptr));
  return ctx;
}

// Collects decoded video frames as RGB24.
class VideoSink {
 public:
  explicit VideoSink(const std::string& where) : where_(where) {}
  void take(const AVFrame* f) {
    if (width_ == 0) {
      width_ = f->width;
      height_ = f->height;
    } else if (f->width != width_ || f->height != height_) {
      throw InputError(where_ + ": frame size changes mid-stream");
    }
    sws_.reset(sws_getCachedContext(sws_.release(), f->width, f->height,
                                    static_cast<AVPixelFormat>(f->format), width_, height_,
                                    AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr));
    if (!sws_) throw FfmpegError(where_ + ": cannot convert frames to rgb24");
    const std::size_t bytes = static_cast<std::size_t>(width_) * height_ * 3;
    const std::size_t at = rgb_.size();
    rgb_.resize(at + bytes);
    std::uint8_t* dst[1] = {rgb_.data() + at};
    const int stride[1] = {3 * width_};
    sws_scale(sws_.get(), f->data, f->linesize, 0, f->height, dst, stride);
    ++frames_;
  }
  int width_ = 0, height_ = 0, frames_ = 0;
  std::vector<std::uint8_t> rgb_;

 private:
  std::string where_;
  Sws sws_;
};

// Collects decoded audio as planar stereo float.
class AudioSink {
 public:
  AudioSink(const AVCodecContext* dec, int rate, const std::string& where)
      : where_(where), rate_(rate > 0 ? rate : dec->sample_rate) {
    SwrContext* swr = nullptr;
    AVChannelLayout stereo = AV_CHANNEL_LAYOUT_STEREO;
    check(where + ": audio resampler",
          swr_alloc_set_opts2(&swr, &stereo, AV_SAMPLE_FMT_FLTP, rate_,
                              const_cast<AVChannelLayout*>(&dec->ch_layout),
                              dec->sample_fmt, dec->sample_rate, 0, nullptr));
    swr_.reset(swr);
    check(where + ": audio resampler", swr_init(swr_.get()));
  }
  void take(const AVFrame* f) { convert(const_cast<const std::uint8_t**>(f->extended_data), f->nb_samples); }
  void flush() { convert(nullptr, 0); }
  int rate() const { return rate_; }
  std::vector<float> channels_[2];

 private:
  void convert(const std::uint8_t** in, int count) {
    const int room = swr_get_out_samples(swr_.get(), count);
    if (room <= 0) return;
    const std::size_t at = channels_[0].size();
    channels_[0].resize(at + room);
    channels_[1].resize(at + room);
    std::uint8_t* out[2] = {reinterpret_cast<std::uint8_t*>(channels_[0].data() + at),
                            reinterpret_cast<std::uint8_t*>(channels_[1].data() + at)};
    const int got = check(where_ + ": resample audio", swr_convert(swr_.get(), out, room, in, count));
    channels_[0].resize(at + got);
    channels_[1].resize(at + got);
  }
  std::string where_;
  int rate_ = 0;
  Swr swr_;
};

// Sends one packet (null: flush) and hands every frame that comes out to `take`.
template <class Take>
void decode_packet(AVCodecContext* dec, const AVPacket* packet, AVFrame* frame,
                   const std::string& where, Take&& take) {
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

void decode_video_file(const fs::path& video, const fs::path& out_dir, int sample_rate) {
  const std::string where = video.string();
  AVFormatContext* raw = nullptr;
  check(where + ": open", avformat_open_input(&raw, video.c_str(), nullptr, nullptr));
  FormatInput format(raw);
  check(where + ": read stream info", avformat_find_stream_info(format.get(), nullptr));
  const int vs = av_find_best_stream(format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (vs < 0) throw InputError(where + ": no video stream");
  const int as = av_find_best_stream(format.get(), AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  Codec vdec = open_decoder(format.get(), vs, where);
  Codec adec = as >= 0 ? open_decoder(format.get(), as, where) : Codec();

  VideoSink vsink(where);
  std::optional<AudioSink> asink;
  if (adec) asink.emplace(adec.get(), sample_rate, where);
  Packet packet = make_packet(where);
  Frame frame = make_frame(where);
  auto take_video = [&](const AVFrame* f) { vsink.take(f); };
  auto take_audio = [&](const AVFrame* f) { asink->take(f); };
  for (;;) {
    const int status = av_read_frame(format.get(), packet.get());
    if (status == AVERROR_EOF) break;
    check(where + ": read", status);
    if (packet->stream_index == vs) decode_packet(vdec.get(), packet.get(), frame.get(), where, take_video);
    if (adec && packet->stream_index == as) {
      decode_packet(adec.get(), packet.get(), frame.get(), where, take_audio);
    }
    av_packet_unref(packet.get());
  }
  decode_packet(vdec.get(), nullptr, frame.get(), where, take_video);
  if (adec) {
    decode_packet(adec.get(), nullptr, frame.get(), where, take_audio);
    asink->flush();
  }
  if (vsink.frames_ == 0) throw InputError(where + ": no video frames");

  runs::FramesHeader header;
  header.width = vsink.width_;
  header.height = vsink.height_;
  header.frames = vsink.frames_;
  const AVRational rate = av_guess_frame_rate(format.get(), format->streams[vs], nullptr);
  header.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 24.0;
  header.source = fs::absolute(video).string();
  std::error_code ignored;
  fs::remove(out_dir / "frames.json", ignored);
  if (asink && !asink->channels_[0].empty()) {
    const std::size_t n = asink->channels_[0].size();
    std::vector<float> planar(2 * n);
    std::copy(asink->channels_[0].begin(), asink->channels_[0].end(), planar.begin());
    std::copy(asink->channels_[1].begin(), asink->channels_[1].end(), planar.begin() + n);
    runs::write_decoded_audio(out_dir, planar.data(), 2, static_cast<std::int64_t>(n), asink->rate());
  }
  runs::write_raw_frames(out_dir, header, vsink.rgb_.data());
}

}  // namespace h3p::media
