#pragma once
// Private to h3p_media: the first video stream and the first audio stream of a file FFmpeg
// reads, demuxed and decoded packet by packet; frames handed out as RGB24 (libswscale, bicubic)
// and audio as planar stereo fp32. Shared by decode_video_file (video_decode.h) and the
// streaming decode of compare (video_stream.h).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/media/ffmpeg_check.h"

namespace h3p::media {

// Converts decoded frames of one stream to RGB24 of the first frame's size.
class RgbConverter {
 public:
  explicit RgbConverter(std::string where) : where_(std::move(where)) {}
  // Writes `f` as H x W x 3 bytes at `dst`. Throws InputError when the size changes mid-stream.
  void convert(const AVFrame* f, std::uint8_t* dst);
  // The size every frame must have (set by the first frame when not given).
  void expect(int width, int height) { width_ = width, height_ = height; }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  std::string where_;
  int width_ = 0, height_ = 0;
  Sws sws_;
};

// Resamples decoded audio to planar stereo fp32.
class AudioSink {
 public:
  AudioSink(const AVCodecContext* dec, int rate, const std::string& where);
  void take(const AVFrame* f);
  void flush();
  int rate() const { return rate_; }
  std::vector<float> channels[2];

 private:
  void convert(const std::uint8_t** in, int count);
  std::string where_;
  int rate_ = 0;
  Swr swr_;
};

class VideoReader {
 public:
  // Opens `video` and the decoders of its streams (FFmpeg's own threads: `threads`, 0 = auto).
  // Throws FfmpegError naming the file, InputError when it has no video stream.
  VideoReader(const std::filesystem::path& video, int threads = 0);
  const std::string& where() const { return where_; }
  // The video stream's geometry, frame rate (24 when it has none) and pixel format as stored,
  // as found when the file was first opened.
  int width() const { return width_; }
  int height() const { return height_; }
  double fps() const { return fps_; }
  AVPixelFormat pixel_format() const { return pixel_format_; }
  bool has_audio() const { return static_cast<bool>(adec_); }
  const AVCodecContext* audio_decoder() const { return adec_.get(); }
  // Reads every packet without decoding and returns the video packets that will give frames
  // (those not marked for discarding); the reader then starts again from the beginning (the
  // file opened again, its streams not probed again: probing decodes frames).
  int count_video_packets();
  // Decodes to the end: every video frame to `video`, every audio frame to `audio` (if the
  // file has an audio stream), then flushes both decoders. Returns early, with false, once
  // `stop` is set; true at the end of the file.
  bool decode(const std::function<void(const AVFrame*)>& video,
              const std::function<void(const AVFrame*)>& audio,
              const std::atomic<bool>* stop = nullptr);

 private:
  void open();
  void rewind();
  std::filesystem::path path_;
  std::string where_;
  int threads_ = 0;
  FormatInput format_;
  int video_stream_ = -1, audio_stream_ = -1;
  Codec vdec_, adec_;
  int width_ = 0, height_ = 0;
  double fps_ = 24.0;
  AVPixelFormat pixel_format_ = AV_PIX_FMT_NONE;
};

}  // namespace h3p::media
