#include "ui/playback/frame_source.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/common/error.h"
#include "core/runs/decoded.h"
#if H3P_UI_WITH_MEDIA
#include "core/media/video_decode.h"
#endif

namespace h3p::ui {

namespace fs = std::filesystem;

struct FrameSource::Impl {
  std::unique_ptr<QTemporaryDir> tempDir;  // a decoded video file; removed with the source
  std::optional<runs::DecodedClip> clip;
};

namespace {

std::string local(const QString& s) { return s.toLocal8Bit().toStdString(); }

// The decoded directory of `path` when it is a run or a decoded directory; empty otherwise.
QString decodedDirOf(const QString& path) {
  const QDir dir(path);
  if (dir.exists(QStringLiteral("frames.json"))) return dir.absolutePath();
  if (dir.exists(QStringLiteral("decoded/frames.json")))
    return dir.absoluteFilePath(QStringLiteral("decoded"));
  return {};
}

QString runLabel(const QString& runDir) {
  const QFileInfo seed(runDir);
  QString impl = QFileInfo(seed.absolutePath()).fileName();
  impl.replace(QLatin1Char('@'), QLatin1Char(':')).replace(QLatin1Char('+'), QLatin1Char(','));
  return impl + QStringLiteral(" · ") + seed.fileName();
}

std::vector<float> toStereo(const runs::DecodedClip& clip) {
  std::vector<float> out;
  const int channels = clip.audio_channels();
  const std::int64_t samples = clip.audio_samples();
  if (channels <= 0 || samples <= 0) return out;
  const float* planes = clip.audio().data();
  out.resize(static_cast<std::size_t>(samples) * 2);
  const float* left = planes;
  const float* right = channels > 1 ? planes + samples : planes;
  for (std::int64_t i = 0; i < samples; ++i) {
    out[2 * i] = left[i];
    out[2 * i + 1] = right[i];
  }
  return out;
}

}  // namespace

std::vector<float> resampleStereo(const std::vector<float>& in, int from, int to) {
  if (from == to || in.empty()) return in;
  const std::int64_t frames = static_cast<std::int64_t>(in.size() / 2);
  const std::int64_t outFrames = frames * to / from;
  std::vector<float> out(static_cast<std::size_t>(outFrames) * 2);
  const double ratio = static_cast<double>(from) / to;
  for (std::int64_t i = 0; i < outFrames; ++i) {
    const double x = i * ratio;
    const std::int64_t j = std::min<std::int64_t>(static_cast<std::int64_t>(x), frames - 1);
    const std::int64_t k = std::min<std::int64_t>(j + 1, frames - 1);
    const float t = static_cast<float>(x - j);
    for (int c = 0; c < 2; ++c) out[2 * i + c] = in[2 * j + c] * (1 - t) + in[2 * k + c] * t;
  }
  return out;
}

std::shared_ptr<const FrameSource> FrameSource::open(const QString& path, int sampleRate) {
  std::shared_ptr<FrameSource> source(new FrameSource);
  source->m_impl = std::make_unique<Impl>();
  source->m_path = path;
  const QFileInfo info(path);
  if (!info.exists()) throw InputError(local(path) + ": does not exist");

  QString decoded;
  if (info.isDir()) {
    decoded = decodedDirOf(path);
    if (decoded.isEmpty()) {
      throw InputError(local(path) + ": no decoded/frames.json (generate decodes a run; " +
                       "a directory of frames.json + frames.rgb works too)");
    }
    const bool isRun = !QDir(path).exists(QStringLiteral("frames.json"));
    source->m_label = isRun ? runLabel(info.absoluteFilePath()) : info.fileName();
  } else {
#if H3P_UI_WITH_MEDIA
    source->m_impl->tempDir =
        std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/h3p-review-XXXXXX"));
    if (!source->m_impl->tempDir->isValid()) {
      throw InputError(local(path) + ": cannot create a temporary directory to decode into");
    }
    decoded = source->m_impl->tempDir->path();
    media::decode_video_file(fs::path(local(path)), fs::path(local(decoded)), sampleRate);
    source->m_label = info.fileName();
#else
    throw InputError(local(path) + ": video files need a build with media (FFmpeg) support");
#endif
  }

  try {
    source->m_impl->clip.emplace(runs::DecodedClip::open(fs::path(local(decoded))));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(local(path) + ": " + e.what());
  }
  const runs::DecodedClip& clip = *source->m_impl->clip;
  if (clip.header().frames <= 0 || clip.header().width <= 0 || clip.header().height <= 0) {
    throw InputError(local(decoded) + "/frames.json: holds no frames");
  }
  if (!(clip.header().fps > 0))
    throw InputError(local(decoded) + "/frames.json: field 'fps': must be > 0");
  source->m_stereo = toStereo(clip);
  source->m_sampleRate = source->m_stereo.empty() ? 0 : clip.sample_rate();
  return source;
}

FrameSource::~FrameSource() = default;

int FrameSource::width() const { return m_impl->clip->header().width; }
int FrameSource::height() const { return m_impl->clip->header().height; }
int FrameSource::frameCount() const { return m_impl->clip->header().frames; }
double FrameSource::fps() const { return m_impl->clip->header().fps; }

QImage FrameSource::frame(int index) const {
  const runs::DecodedClip& clip = *m_impl->clip;
  const uchar* bytes = clip.frame(index);  // throws InputError out of range
  const int w = width();
  return QImage(bytes, w, height(), w * 3, QImage::Format_RGB888);
}

void FrameSource::touch(int index) const {
  const runs::DecodedClip& clip = *m_impl->clip;
  const auto* bytes = reinterpret_cast<const volatile std::uint8_t*>(clip.frame(index));
  const std::size_t size = clip.header().frame_bytes();
  std::uint8_t sink = 0;
  for (std::size_t i = 0; i < size; i += 4096) sink ^= bytes[i];
  sink ^= bytes[size - 1];
  static_cast<void>(sink);
}

}  // namespace h3p::ui
