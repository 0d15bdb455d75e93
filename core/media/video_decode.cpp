#include "core/media/video_decode.h"

#include <vector>

#include "core/media/video_reader.h"
#include "core/runs/decoded.h"

namespace h3p::media {
namespace fs = std::filesystem;

void decode_video_file(const fs::path& video, const fs::path& out_dir, int sample_rate) {
  VideoReader reader(video);
  const std::string& where = reader.where();
  RgbConverter rgb_of(where);
  std::vector<std::uint8_t> rgb;
  int frames = 0;
  std::optional<AudioSink> asink;
  if (reader.has_audio()) asink.emplace(reader.audio_decoder(), sample_rate, where);
  reader.decode(
      [&](const AVFrame* f) {
        const std::size_t bytes = static_cast<std::size_t>(f->width) * f->height * 3;
        const std::size_t at = rgb.size();
        rgb.resize(at + bytes);
        rgb_of.convert(f, rgb.data() + at);
        ++frames;
      },
      [&](const AVFrame* f) { asink->take(f); });
  if (asink) asink->flush();
  if (frames == 0) throw InputError(where + ": no video frames");

  runs::FramesHeader header;
  header.width = rgb_of.width();
  header.height = rgb_of.height();
  header.frames = frames;
  header.fps = reader.fps();
  header.source = fs::absolute(video).string();
  std::error_code ignored;
  fs::remove(out_dir / "frames.json", ignored);
  if (asink && !asink->channels[0].empty()) {
    const std::size_t n = asink->channels[0].size();
    std::vector<float> planar(2 * n);
    std::copy(asink->channels[0].begin(), asink->channels[0].end(), planar.begin());
    std::copy(asink->channels[1].begin(), asink->channels[1].end(), planar.begin() + n);
    runs::write_decoded_audio(out_dir, planar.data(), 2, static_cast<std::int64_t>(n), asink->rate());
  }
  runs::write_raw_frames(out_dir, header, rgb.data());
}

}  // namespace h3p::media
