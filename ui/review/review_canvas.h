#pragma once
// The image area of the review: paints A and B (or their difference) as ViewState says, with
// linked zoom and pan. Dumb: setters in, intent signals out (image coordinates); it keeps no
// playback state. Raster QPainter over the sources' mapped frames (ENVIRONMENT.md: the only
// path that holds 24 fps for two full-size streams without a GPU).
#include <QImage>
#include <QPointF>
#include <QWidget>

#include "ui/review/view_state.h"

namespace h3p::ui {

class ReviewCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit ReviewCanvas(QWidget* parent = nullptr);

  // The frame to paint: both sides (same size) and, for the difference mode, their difference.
  void setFrames(int index, const QImage& a, const QImage& b, const QImage& difference);
  void setViewState(const ViewState& state);
  const ViewState& viewState() const { return m_state; }
  // Index of the frame last set (-1 for none).
  int frameIndex() const { return m_index; }

  // The widget rectangles the image areas take: two in side by side, one otherwise.
  QList<QRectF> areas() const;
  // Where the whole image is drawn inside `area` under the current zoom and pan.
  QRectF imageRectIn(const QRectF& area) const;
  // The image point under widget point `p`, or (-1, -1) outside every area.
  QPointF imagePointAt(const QPointF& p) const;

 signals:
  // Zoom by `factor` keeping image point `anchor` still.
  void zoomRequested(double factor, QPointF anchor);
  // Move the view by `delta` image pixels (the content follows the mouse).
  void panRequested(QPointF delta);
  void zoomResetRequested();
  // Move the wipe split to `fraction` of the image width.
  void wipeRequested(double fraction);
  // The pointer is over image point `point` ((-1, -1) when it left the image).
  void hovered(QPointF point);
  // Frame `index` has been painted.
  void painted(int index);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  enum class Drag { None, Pan, Wipe };
  QSize imageSize() const;
  double scaleIn(const QRectF& area) const;
  void drawLabel(QPainter& painter, const QRectF& area, const QString& text, bool heard,
                 Qt::Alignment corner) const;

  ViewState m_state;
  QImage m_a, m_b, m_difference;
  int m_index = -1;
  Drag m_drag = Drag::None;
  QPointF m_lastMouse;
};

}  // namespace h3p::ui
