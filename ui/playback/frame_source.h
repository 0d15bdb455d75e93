#pragma once
// One side of a review: the decoded frames of a run (decoded/frames.rgb, memory-mapped, never
// copied) with its audio, or a video file decoded once into a private temporary directory of the
// same form. Immutable after open(); safe to read from any thread.
#include <QImage>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

namespace h3p::ui {

class FrameSource {
 public:
  // Opens `path`: a run directory (reads its decoded/), a decoded directory (frames.json +
  // frames.rgb), or a video file FFmpeg reads (decoded with audio resampled to `sampleRate`, its
  // own rate when 0). Throws h3p::InputError naming the path and what is wrong.
  static std::shared_ptr<const FrameSource> open(const QString& path, int sampleRate = 0);
  ~FrameSource();
  FrameSource(const FrameSource&) = delete;
  FrameSource& operator=(const FrameSource&) = delete;

  // What was opened, as given.
  QString path() const { return m_path; }
  // A short name for the UI: "<impl spec> · seed-<n>" for a run, the file name otherwise.
  QString label() const { return m_label; }
  int width() const;
  int height() const;
  int frameCount() const;
  // Frames per second recorded with the frames (> 0).
  double fps() const;

  // Frame `index` (0 <= index < frameCount()) as an RGB888 image over the mapped bytes: no copy,
  // valid while this source lives. Throws h3p::InputError for an index out of range.
  QImage frame(int index) const;
  // Touches every page of frame `index` so that painting it does not fault (prefetch threads).
  void touch(int index) const;

  // Audio as interleaved stereo float (mono is duplicated, channels past two are dropped);
  // empty without audio.
  const std::vector<float>& stereo() const { return m_stereo; }
  // Sample rate of stereo() in Hz; 0 without audio.
  int sampleRate() const { return m_sampleRate; }

 private:
  struct Impl;
  FrameSource() = default;
  std::unique_ptr<Impl> m_impl;
  QString m_path;
  QString m_label;
  std::vector<float> m_stereo;
  int m_sampleRate = 0;
};

// Linear resampling of interleaved stereo `in` from rate `from` to rate `to` (both > 0).
std::vector<float> resampleStereo(const std::vector<float>& in, int from, int to);

}  // namespace h3p::ui
