#pragma once
// The review's audio lane: the waveforms of A and B (the heard one highlighted) over a
// spectrogram of their difference, with the playhead. Dumb: setters in, seekRequested out.
#include <QImage>
#include <QWidget>
#include <vector>

namespace h3p::ui {

class AudioLane : public QWidget {
  Q_OBJECT

 public:
  explicit AudioLane(QWidget* parent = nullptr);

  // Mono tracks at sampleRate Hz, the difference spectrogram, and the clip length in seconds
  // (the lane's time axis).
  void setTracks(std::vector<float> a, std::vector<float> b, int sampleRate,
                 const QImage& spectrogram, double durationSeconds);
  void setPlayhead(double seconds);
  void setHeardSide(int side);
  // The rows the lane draws (widget coordinates): waveform A, waveform B, spectrogram.
  QRect bandRect(int band) const;

 signals:
  // The user clicked at clip time `seconds`.
  void seekRequested(double seconds);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void drawWaveform(QPainter& painter, const QRect& band, const std::vector<float>& mono,
                    bool heard, const QString& name) const;

  std::vector<float> m_a, m_b;
  int m_rate = 0;
  QImage m_spectrogram;
  mutable QImage m_scaledSpectrogram;  // m_spectrogram at the band's size
  double m_duration = 0;
  double m_playhead = 0;
  int m_heard = 0;
};

}  // namespace h3p::ui
