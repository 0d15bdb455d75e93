#pragma once
// Owns the review's view state (mode, linked zoom and pan, wipe, flicker phase, gain) and the
// playback controller; applies the canvas's intents and pushes the new state out. The widgets
// stay dumb. UI thread only.
#include <QObject>
#include <QPointF>
#include <QTimer>

#include "ui/review/view_state.h"

namespace h3p::ui {

class PlaybackController;

class ReviewController : public QObject {
  Q_OBJECT

 public:
  explicit ReviewController(QObject* parent = nullptr);

  PlaybackController* playback() const { return m_playback; }
  const ViewState& state() const { return m_state; }
  // Sets the side names and resets zoom and pan (a new pair was opened).
  void setLabels(const QString& a, const QString& b);

  static constexpr double kMinZoom = 0.25;
  static constexpr double kMaxZoom = 64;

 public slots:
  void setMode(h3p::ui::ReviewMode mode);
  void zoomBy(double factor, QPointF anchor);
  void panBy(QPointF delta);
  void resetZoom();
  void setWipe(double fraction);
  void setGain(double gain);
  // The flicker mode's side toggles on a timer; this toggles it at once.
  void toggleFlicker();

 signals:
  void stateChanged(const h3p::ui::ViewState& state);

 private:
  void publish();

  PlaybackController* m_playback;
  ViewState m_state;
  QTimer m_flickerTimer;
};

}  // namespace h3p::ui
