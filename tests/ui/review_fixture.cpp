#include "review_fixture.h"

#include <QDir>
#include <QFileInfo>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/runs/decoded.h"

namespace h3p::ui::test {

QRgb reviewPixel(int side, int frame, int x, int y) {
  int r = (x * 7 + frame) & 255;
  if (side == 1 && x >= 8 && x < 12 && y >= 8 && y < 12) r = (r + 40) & 255;
  return qRgb(r, (y * 5) & 255, 100);
}

QString writeReviewRuns(const QString& runsDir, int frames, int width, int height) {
  QString candidate;
  try {
    for (int side = 0; side < 2; ++side) {
      const QString run = runsDir + (side == 0 ? "/c/candidate/seed-1" : "/c/provider/seed-1");
      if (side == 0) candidate = run;
      const QString decoded = run + "/decoded";
      if (!QDir().mkpath(decoded)) return {};
      std::vector<std::uint8_t> rgb(static_cast<std::size_t>(frames) * width * height * 3);
      std::size_t k = 0;
      for (int f = 0; f < frames; ++f) {
        for (int y = 0; y < height; ++y) {
          for (int x = 0; x < width; ++x) {
            const QRgb c = reviewPixel(side, f, x, y);
            rgb[k++] = static_cast<std::uint8_t>(qRed(c));
            rgb[k++] = static_cast<std::uint8_t>(qGreen(c));
            rgb[k++] = static_cast<std::uint8_t>(qBlue(c));
          }
        }
      }
      runs::FramesHeader header;
      header.width = width;
      header.height = height;
      header.frames = frames;
      header.fps = kReviewFps;
      header.source = "run";
      runs::write_raw_frames(decoded.toStdString(), header, rgb.data());
      const std::int64_t samples = static_cast<std::int64_t>(frames / kReviewFps * kReviewRate);
      std::vector<float> audio(2 * samples);
      for (std::int64_t i = 0; i < samples; ++i) {
        const double t = static_cast<double>(i) / kReviewRate;
        float v = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * 440 * t));
        if (side == 1) v += static_cast<float>(0.01 * std::sin(2 * std::numbers::pi * 3000 * t));
        audio[i] = v;
        audio[samples + i] = v;
      }
      runs::write_decoded_audio(decoded.toStdString(), audio.data(), 2, samples, kReviewRate);
    }
  } catch (const std::exception&) {
    return {};
  }
  return candidate;
}

ReviewRuns::ReviewRuns() {
  if (m_dir.isValid()) {
    m_candidate = writeReviewRuns(m_dir.path());
  }
}

QString ReviewRuns::provider() const {
  return QFileInfo(m_candidate).absolutePath() + "/../provider/seed-1";
}

}  // namespace h3p::ui::test
