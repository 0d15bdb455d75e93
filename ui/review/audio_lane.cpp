#include "ui/review/audio_lane.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>

#include "ui/review/audio_analysis.h"

namespace h3p::ui {

AudioLane::AudioLane(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("audioLane"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setFixedHeight(180);
}

void AudioLane::setTracks(std::vector<float> a, std::vector<float> b, int sampleRate,
                          const QImage& spectrogram, double durationSeconds) {
  m_a = std::move(a);
  m_b = std::move(b);
  m_rate = sampleRate;
  m_spectrogram = spectrogram;
  m_scaledSpectrogram = QImage();
  m_duration = durationSeconds;
  update();
}

void AudioLane::setPlayhead(double seconds) {
  m_playhead = seconds;
  update();
}

void AudioLane::setHeardSide(int side) {
  m_heard = side;
  update();
}

QRect AudioLane::bandRect(int band) const {
  // A quarter of the height per waveform, the half below for the spectrogram.
  const int h = height() / 4;
  return QRect(0, band * h, width(), band == 2 ? height() - 2 * h : h - 1);
}

void AudioLane::drawWaveform(QPainter& painter, const QRect& band, const std::vector<float>& mono,
                             bool heard, const QString& name) const {
  painter.fillRect(band, heard ? QColor(48, 40, 20) : QColor(30, 30, 34));
  const long long samples = static_cast<long long>(m_duration * m_rate);
  if (!mono.empty() && samples > 0) {
    const auto columns = envelope(mono, samples, band.width());
    painter.setPen(heard ? QColor(240, 170, 30) : QColor(120, 160, 220));
    const double mid = band.center().y();
    const double half = band.height() / 2.0;
    for (int x = 0; x < band.width(); ++x) {
      const double y0 = mid - std::clamp(columns[x].second, -1.f, 1.f) * half;
      const double y1 = mid - std::clamp(columns[x].first, -1.f, 1.f) * half;
      painter.drawLine(QPointF(band.left() + x, y0),
                       QPointF(band.left() + x, std::max(y1, y0 + 1)));
    }
  }
  painter.setPen(Qt::white);
  painter.drawText(band.adjusted(4, 2, 0, 0), Qt::AlignLeft | Qt::AlignTop,
                   heard ? QStringLiteral("\u266A ") + name : name);
}

void AudioLane::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(20, 20, 24));
  drawWaveform(painter, bandRect(0), m_a, m_heard == 0, tr("A"));
  drawWaveform(painter, bandRect(1), m_b, m_heard == 1, tr("B"));
  const QRect spec = bandRect(2);
  if (!m_spectrogram.isNull()) {
    // Smooth scaling keeps narrow lines visible when many bins fall on one row; cached per size.
    if (m_scaledSpectrogram.size() != spec.size()) {
      m_scaledSpectrogram =
          m_spectrogram.scaled(spec.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    }
    painter.drawImage(spec.topLeft(), m_scaledSpectrogram);
  } else {
    painter.fillRect(spec, Qt::black);
  }
  painter.setPen(Qt::white);
  painter.drawText(spec.adjusted(4, 2, 0, 0), Qt::AlignLeft | Qt::AlignTop,
                   tr("spectrogram of A - B"));
  if (m_duration > 0) {
    const double x = std::clamp(m_playhead / m_duration, 0.0, 1.0) * (width() - 1);
    painter.setPen(QPen(QColor(255, 80, 80), 2));
    painter.drawLine(QPointF(x, 0), QPointF(x, height()));
  }
}

void AudioLane::mousePressEvent(QMouseEvent* event) {
  if (m_duration <= 0 || width() <= 1) return;
  emit seekRequested(std::clamp(event->position().x() / (width() - 1), 0.0, 1.0) * m_duration);
}

}  // namespace h3p::ui
