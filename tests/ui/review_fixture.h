#pragma once
// Decoded runs with known content for the review and playback tests.
#include <QRgb>
#include <QString>
#include <QTemporaryDir>

namespace h3p::ui::test {

// The pattern's geometry.
inline constexpr int kReviewWidth = 64, kReviewHeight = 48, kReviewFrames = 30, kReviewRate = 8000;
inline constexpr double kReviewFps = 24;

// Pixel (x, y) of frame `frame` of side A; side B equals it except in the block
// x, y in [8, 12), where red is 40 higher (mod 256).
QRgb reviewPixel(int side, int frame, int x, int y);

// Writes RUNS/c/<impl>/seed-1/decoded/ (frames.rgb, frames.json, audio.safetensors: side A a
// 440 Hz sine, side B the same plus 0.01 of a 3 kHz sine) for impl "candidate" (side A) and
// "provider" (side B), with `frames` frames of width x height. Returns the candidate run
// directory; the provider's is its sibling. Empty on failure.
QString writeReviewRuns(const QString& runsDir, int frames = kReviewFrames,
                        int width = kReviewWidth, int height = kReviewHeight);

// A temporary runs directory holding writeReviewRuns' default runs; removed with the object.
class ReviewRuns {
 public:
  ReviewRuns();

  // False when the directory or the runs could not be written.
  bool isValid() const { return m_dir.isValid() && !m_candidate.isEmpty(); }
  // The runs directory.
  QString path() const { return m_dir.path(); }
  // The candidate run (side A).
  QString candidate() const { return m_candidate; }
  // The provider run of the same seed (side B), reached from the candidate's directory.
  QString provider() const;

 private:
  QTemporaryDir m_dir;
  QString m_candidate;
};

}  // namespace h3p::ui::test
