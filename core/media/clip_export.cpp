#include "core/media/clip_export.h"

extern "C" {
#include <libavutil/opt.h>
}

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/media/ffmpeg_check.h"
#include "core/runs/decoded.h"

namespace h3p::media {
namespace fs = std::filesystem;
namespace {

// The codecs of one container.
struct Recipe {
  const char* video_codec;
  AVPixelFormat pix_fmt;
  const char* audio_codec;
  AVSampleFormat sample_fmt;
  int bits_per_raw_sample;  // audio; 0: default
  int64_t audio_bit_rate;   // 0: lossless
};

// One output file: a video and an optional audio stream, encoded and muxed interleaved.
class Writer {
 public:
  Writer(const fs::path& file, const Recipe& recipe, const runs::DecodedClip& clip,
         const ExportParams& params)
      : file_(file), where_(file.string()), clip_(clip) {
    AVFormatContext* raw = nullptr;
    check(where_ + ": output format",
          avformat_alloc_output_context2(&raw, nullptr, nullptr, file.c_str()));
    format_.reset(raw);
    const runs::FramesHeader& h = clip.header();
    fps_ = av_d2q(h.fps, 100000);

    // Video encoder.
    const AVCodec* vc = avcodec_find_encoder_by_name(recipe.video_codec);
    if (vc == nullptr) throw FfmpegError(where_ + ": no encoder " + recipe.video_codec);
    vstream_ = avformat_new_stream(format_.get(), nullptr);
    venc_.reset(avcodec_alloc_context3(vc));
    venc_->width = h.width;
    venc_->height = h.height;
    venc_->pix_fmt = recipe.pix_fmt;
    venc_->time_base = av_inv_q(fps_);
    venc_->framerate = fps_;
    venc_->thread_count = 0;
    if (format_->oformat->flags & AVFMT_GLOBALHEADER) venc_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary* vopts = nullptr;
    if (std::string(recipe.video_codec) == "libx264") {
      av_dict_set(&vopts, "crf", std::to_string(params.crf).c_str(), 0);
      av_dict_set(&vopts, "preset", params.preset.c_str(), 0);
      venc_->colorspace = AVCOL_SPC_BT470BG;
      venc_->color_range = AVCOL_RANGE_MPEG;
    } else {
      av_dict_set(&vopts, "level", "3", 0);
      av_dict_set(&vopts, "slicecrc", "1", 0);
    }
    const int vstatus = avcodec_open2(venc_.get(), vc, &vopts);
    av_dict_free(&vopts);
    check(where_ + ": open encoder " + recipe.video_codec, vstatus);
    check(where_ + ": video stream", avcodec_parameters_from_context(vstream_->codecpar, venc_.get()));
    vstream_->time_base = venc_->time_base;
    sws_.reset(sws_getContext(h.width, h.height, AV_PIX_FMT_RGB24, h.width, h.height,
                              recipe.pix_fmt, SWS_BICUBIC, nullptr, nullptr, nullptr));
    if (!sws_) throw FfmpegError(where_ + ": cannot convert rgb24 for the encoder");

    // Audio encoder.
    if (!clip.audio().empty()) {
      const AVCodec* ac = avcodec_find_encoder_by_name(recipe.audio_codec);
      if (ac == nullptr) throw FfmpegError(where_ + ": no encoder " + recipe.audio_codec);
      astream_ = avformat_new_stream(format_.get(), nullptr);
      aenc_.reset(avcodec_alloc_context3(ac));
      aenc_->sample_fmt = recipe.sample_fmt;
      aenc_->sample_rate = clip.sample_rate();
      AVChannelLayout layout;
      av_channel_layout_default(&layout, clip.audio_channels());
      check(where_ + ": channel layout", av_channel_layout_copy(&aenc_->ch_layout, &layout));
      aenc_->time_base = AVRational{1, clip.sample_rate()};
      if (recipe.bits_per_raw_sample > 0) aenc_->bits_per_raw_sample = recipe.bits_per_raw_sample;
      if (recipe.audio_bit_rate > 0) aenc_->bit_rate = recipe.audio_bit_rate;
      if (format_->oformat->flags & AVFMT_GLOBALHEADER) aenc_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
      check(where_ + ": open encoder " + recipe.audio_codec, avcodec_open2(aenc_.get(), ac, nullptr));
      check(where_ + ": audio stream", avcodec_parameters_from_context(astream_->codecpar, aenc_.get()));
      astream_->time_base = aenc_->time_base;
      SwrContext* swr = nullptr;
      check(where_ + ": audio converter",
            swr_alloc_set_opts2(&swr, &aenc_->ch_layout, recipe.sample_fmt, clip.sample_rate(),
                                &aenc_->ch_layout, AV_SAMPLE_FMT_FLTP, clip.sample_rate(), 0,
                                nullptr));
      swr_.reset(swr);
      check(where_ + ": audio converter", swr_init(swr_.get()));
    }

    // Open the temporary file and write the header.
    temp_ = file;
    temp_ += ".tmp";
    check(where_ + ": open", avio_open(&format_->pb, temp_.c_str(), AVIO_FLAG_WRITE));
    // The MP4 muxer re-opens its own URL to move the index first: that is the temporary file.
    av_freep(&format_->url);
    format_->url = av_strdup(temp_.c_str());
    AVDictionary* mopts = nullptr;
    if (std::string(format_->oformat->name).find("mp4") != std::string::npos) {
      av_dict_set(&mopts, "movflags", "+faststart", 0);
    }
    const int hstatus = avformat_write_header(format_.get(), &mopts);
    av_dict_free(&mopts);
    check(where_ + ": write header", hstatus);
    packet_ = make_packet(where_);
  }

  ~Writer() {
    if (!finished_) {
      format_.reset();
      std::error_code ignored;
      fs::remove(temp_, ignored);
    }
  }

  // Encodes every frame, with the audio up to each frame's end interleaved.
  void run(const std::function<void(double)>& progress) {
    const runs::FramesHeader& h = clip_.header();
    Frame frame = make_frame(where_);
    frame->format = venc_->pix_fmt;
    frame->width = h.width;
    frame->height = h.height;
    check(where_ + ": frame buffer", av_frame_get_buffer(frame.get(), 0));
    padded_.resize(h.frame_bytes() + 256);
    for (int f = 0; f < h.frames; ++f) {
      if (aenc_) {
        const double end_seconds = (f + 1) / av_q2d(fps_);
        feed_audio(static_cast<std::int64_t>(std::llround(end_seconds * clip_.sample_rate())));
      }
      check(where_ + ": frame writable", av_frame_make_writable(frame.get()));
      // libswscale's SIMD reads past the end of a line: a padded copy keeps the last frame of
      // the mapping safe.
      std::memcpy(padded_.data(), clip_.frame(f), h.frame_bytes());
      const std::uint8_t* src[1] = {padded_.data()};
      const int stride[1] = {3 * h.width};
      sws_scale(sws_.get(), src, stride, 0, h.height, frame->data, frame->linesize);
      frame->pts = f;
      encode(venc_.get(), vstream_, frame.get());
      if (progress) progress(static_cast<double>(f + 1) / h.frames);
    }
    encode(venc_.get(), vstream_, nullptr);
    if (aenc_) {
      feed_audio(clip_.audio_samples());
      encode(aenc_.get(), astream_, nullptr);
    }
    check(where_ + ": write trailer", av_write_trailer(format_.get()));
    check(where_ + ": close", avio_closep(&format_->pb));
    std::error_code error;
    fs::rename(temp_, file_, error);
    if (error) throw InputError(where_ + ": cannot rename: " + error.message());
    finished_ = true;
  }

 private:
  // Encodes audio samples [audio_pos_, until) in encoder-sized frames (the last may be short).
  void feed_audio(std::int64_t until) {
    until = std::min(until, clip_.audio_samples());
    const int chunk = aenc_->frame_size > 0 ? aenc_->frame_size : 1024;
    while (audio_pos_ < until) {
      const bool last = until == clip_.audio_samples();
      const std::int64_t left = until - audio_pos_;
      if (left < chunk && !last) return;
      const int n = static_cast<int>(std::min<std::int64_t>(chunk, left));
      Frame frame = make_frame(where_);
      frame->format = aenc_->sample_fmt;
      frame->nb_samples = n;
      frame->sample_rate = aenc_->sample_rate;
      check(where_ + ": audio layout", av_channel_layout_copy(&frame->ch_layout, &aenc_->ch_layout));
      check(where_ + ": audio buffer", av_frame_get_buffer(frame.get(), 0));
      std::vector<const std::uint8_t*> in(clip_.audio_channels());
      for (int c = 0; c < clip_.audio_channels(); ++c) {
        in[c] = reinterpret_cast<const std::uint8_t*>(clip_.audio().data() +
                                                     c * clip_.audio_samples() + audio_pos_);
      }
      check(where_ + ": convert audio",
            swr_convert(swr_.get(), frame->extended_data, n, in.data(), n));
      frame->pts = audio_pos_;
      encode(aenc_.get(), astream_, frame.get());
      audio_pos_ += n;
    }
  }

  void encode(AVCodecContext* enc, AVStream* stream, const AVFrame* frame) {
    check(where_ + ": encode", avcodec_send_frame(enc, frame));
    for (;;) {
      const int status = avcodec_receive_packet(enc, packet_.get());
      if (status == AVERROR(EAGAIN) || status == AVERROR_EOF) return;
      check(where_ + ": encode", status);
      // One frame per packet: without a duration MP4's edit list drops the last frame.
      if (enc == venc_.get() && packet_->duration <= 0) packet_->duration = 1;
      av_packet_rescale_ts(packet_.get(), enc->time_base, stream->time_base);
      packet_->stream_index = stream->index;
      check(where_ + ": write", av_interleaved_write_frame(format_.get(), packet_.get()));
    }
  }

  fs::path file_, temp_;
  std::string where_;
  const runs::DecodedClip& clip_;
  AVRational fps_{24, 1};
  FormatOutput format_;
  Codec venc_, aenc_;
  AVStream* vstream_ = nullptr;
  AVStream* astream_ = nullptr;
  Sws sws_;
  Swr swr_;
  Packet packet_;
  std::vector<std::uint8_t> padded_;
  std::int64_t audio_pos_ = 0;
  bool finished_ = false;
};

}  // namespace

std::string ExportParams::describe() const {
  std::ostringstream out;
  out << "decoded: " << decoded_dir.string() << "\nmkv: " << mkv.string() << "\nmp4: "
      << mp4.string() << "\ncrf: " << crf << "\npreset: " << preset << "\n";
  return out.str();
}

void export_clip(const ExportParams& params) {
  const runs::DecodedClip clip = runs::DecodedClip::open(params.decoded_dir);
  if (params.quiet) av_log_set_level(AV_LOG_ERROR);
  struct Job {
    fs::path file;
    Recipe recipe;
  };
  std::vector<Job> jobs;
  if (!params.mkv.empty()) {
    jobs.push_back({params.mkv, {"ffv1", AV_PIX_FMT_0RGB32, "flac", AV_SAMPLE_FMT_S32, 24, 0}});
  }
  if (!params.mp4.empty()) {
    jobs.push_back({params.mp4, {"libx264", AV_PIX_FMT_YUV420P, "aac", AV_SAMPLE_FMT_FLTP, 0, 192000}});
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].file.parent_path().empty()) fs::create_directories(jobs[i].file.parent_path());
    Writer writer(jobs[i].file, jobs[i].recipe, clip, params);
    writer.run([&](double f) {
      if (params.progress) {
        params.progress((i + f) / jobs.size(), jobs[i].file.filename().string());
      }
    });
  }
}

}  // namespace h3p::media
