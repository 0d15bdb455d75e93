#include "ui/review/review_controller.h"

#include <algorithm>

#include "ui/playback/playback_controller.h"

namespace h3p::ui {

namespace {
constexpr int kFlickerMs = 250;  // each side shown this long in the flicker mode
}

ReviewController::ReviewController(QObject* parent)
    : QObject(parent), m_playback(new PlaybackController(this)) {
  m_flickerTimer.setInterval(kFlickerMs);
  connect(&m_flickerTimer, &QTimer::timeout, this, &ReviewController::toggleFlicker);
  connect(m_playback, &PlaybackController::heardSideChanged, this, [this](int side) {
    m_state.heardSide = side;
    publish();
  });
}

void ReviewController::publish() { emit stateChanged(m_state); }

void ReviewController::setLabels(const QString& a, const QString& b) {
  m_state.labelA = a;
  m_state.labelB = b;
  m_state.zoom = 1;
  m_state.center = QPointF(-1, -1);
  publish();
}

void ReviewController::setMode(ReviewMode mode) {
  m_state.mode = mode;
  m_state.flickerShowsB = false;
  if (mode == ReviewMode::Flicker) {
    m_flickerTimer.start();
  } else {
    m_flickerTimer.stop();
  }
  m_playback->setDifference(mode == ReviewMode::Difference, m_state.gain);
  publish();
}

void ReviewController::zoomBy(double factor, QPointF anchor) {
  const double zoom = std::clamp(m_state.zoom * factor, kMinZoom, kMaxZoom);
  const double applied = zoom / m_state.zoom;
  if (applied == 1) return;
  QPointF center = m_state.center;
  if (center.x() < 0) {
    const PlaybackController& p = *m_playback;
    const QImage& image = p.current().a;
    center = QPointF(image.width() / 2.0, image.height() / 2.0);
  }
  // Keep `anchor` under the same widget point: its offset from the centre shrinks by `applied`.
  m_state.center = anchor - (anchor - center) / applied;
  m_state.zoom = zoom;
  publish();
}

void ReviewController::panBy(QPointF delta) {
  if (m_state.center.x() < 0) {
    const QImage& image = m_playback->current().a;
    m_state.center = QPointF(image.width() / 2.0, image.height() / 2.0);
  }
  m_state.center -= delta;
  publish();
}

void ReviewController::resetZoom() {
  m_state.zoom = 1;
  m_state.center = QPointF(-1, -1);
  publish();
}

void ReviewController::setWipe(double fraction) {
  m_state.wipe = std::clamp(fraction, 0.0, 1.0);
  publish();
}

void ReviewController::setGain(double gain) {
  m_state.gain = std::clamp(gain, 1.0, 256.0);
  m_playback->setDifference(m_state.mode == ReviewMode::Difference, m_state.gain);
  publish();
}

void ReviewController::toggleFlicker() {
  m_state.flickerShowsB = !m_state.flickerShowsB;
  publish();
}

}  // namespace h3p::ui
