#include "ui/review/review_canvas.h"

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace h3p::ui {

namespace {
constexpr double kGap = 4;             // pixels between the side-by-side areas
constexpr double kWipeGrabPixels = 8;  // how near the split a press grabs it
const QColor kBackground(24, 24, 28);
}  // namespace

QString reviewModeName(ReviewMode mode) {
  switch (mode) {
    case ReviewMode::SideBySide:
      return QStringLiteral("side by side");
    case ReviewMode::Wipe:
      return QStringLiteral("wipe");
    case ReviewMode::Flicker:
      return QStringLiteral("flicker");
    case ReviewMode::Difference:
      return QStringLiteral("difference");
  }
  return {};
}

ReviewCanvas::ReviewCanvas(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("reviewCanvas"));
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(320, 180);
  setFocusPolicy(Qt::StrongFocus);
}

void ReviewCanvas::setFrames(int index, const QImage& a, const QImage& b,
                             const QImage& difference) {
  m_index = index;
  m_a = a;
  m_b = b;
  m_difference = difference;
  update();
}

void ReviewCanvas::setViewState(const ViewState& state) {
  m_state = state;
  update();
}

QSize ReviewCanvas::imageSize() const { return m_a.isNull() ? QSize(16, 9) : m_a.size(); }

QList<QRectF> ReviewCanvas::areas() const {
  const QRectF all = rect();
  if (m_state.mode != ReviewMode::SideBySide) return {all};
  const double half = (all.width() - kGap) / 2;
  return {QRectF(all.left(), all.top(), half, all.height()),
          QRectF(all.left() + half + kGap, all.top(), half, all.height())};
}

double ReviewCanvas::scaleIn(const QRectF& area) const {
  const QSize size = imageSize();
  const double fit = std::min(area.width() / size.width(), area.height() / size.height());
  return fit * m_state.zoom;
}

QRectF ReviewCanvas::imageRectIn(const QRectF& area) const {
  const QSize size = imageSize();
  const double scale = scaleIn(area);
  const QPointF center =
      m_state.center.x() < 0 ? QPointF(size.width() / 2.0, size.height() / 2.0) : m_state.center;
  const QPointF topLeft = area.center() - center * scale;
  return QRectF(topLeft, QSizeF(size.width() * scale, size.height() * scale));
}

QPointF ReviewCanvas::imagePointAt(const QPointF& p) const {
  for (const QRectF& area : areas()) {
    if (!area.contains(p)) continue;
    const QRectF image = imageRectIn(area);
    if (!image.contains(p)) return {-1, -1};
    const double scale = scaleIn(area);
    return (p - image.topLeft()) / scale;
  }
  return {-1, -1};
}

void ReviewCanvas::drawLabel(QPainter& painter, const QRectF& area, const QString& text, bool heard,
                             Qt::Alignment corner) const {
  const QString shown = heard ? QStringLiteral("\u266A ") + text : text;  // a note: heard side
  const QFontMetrics metrics(painter.font());
  const QSizeF size(metrics.horizontalAdvance(shown) + 12, metrics.height() + 6);
  const double x = corner & Qt::AlignRight ? area.right() - size.width() - 6 : area.left() + 6;
  const QRectF box(QPointF(x, area.top() + 6), size);
  painter.fillRect(box, heard ? QColor(230, 160, 20, 220) : QColor(0, 0, 0, 160));
  painter.setPen(heard ? Qt::black : Qt::white);
  painter.drawText(box, Qt::AlignCenter, shown);
}

void ReviewCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), kBackground);
  if (m_a.isNull()) {
    painter.setPen(Qt::lightGray);
    painter.drawText(rect(), Qt::AlignCenter, tr("Open two runs of one seed to review them"));
    return;
  }
  const QString nameA = QStringLiteral("A: ") + m_state.labelA;
  const QString nameB = QStringLiteral("B: ") + m_state.labelB;
  const QList<QRectF> list = areas();
  switch (m_state.mode) {
    case ReviewMode::SideBySide:
      for (int side = 0; side < 2; ++side) {
        painter.save();
        painter.setClipRect(list[side]);
        painter.drawImage(imageRectIn(list[side]), side == 0 ? m_a : m_b);
        painter.restore();
        drawLabel(painter, list[side], side == 0 ? nameA : nameB, m_state.heardSide == side,
                  Qt::AlignLeft);
      }
      break;
    case ReviewMode::Wipe: {
      const QRectF image = imageRectIn(list[0]);
      const double split = image.left() + image.width() * std::clamp(m_state.wipe, 0.0, 1.0);
      painter.save();
      painter.setClipRect(list[0].intersected(
          QRectF(QPointF(list[0].left(), list[0].top()), QPointF(split, list[0].bottom()))));
      painter.drawImage(image, m_a);
      painter.setClipRect(
          list[0].intersected(QRectF(QPointF(split, list[0].top()), list[0].bottomRight())));
      painter.drawImage(image, m_b);
      painter.restore();
      painter.setPen(QPen(QColor(255, 255, 255, 200), 2));
      painter.drawLine(QPointF(split, list[0].top()), QPointF(split, list[0].bottom()));
      painter.setBrush(Qt::white);
      painter.drawEllipse(QPointF(split, list[0].center().y()), 6, 6);
      drawLabel(painter, list[0], nameA, m_state.heardSide == 0, Qt::AlignLeft);
      drawLabel(painter, list[0], nameB, m_state.heardSide == 1, Qt::AlignRight);
      break;
    }
    case ReviewMode::Flicker: {
      const bool b = m_state.flickerShowsB;
      painter.save();
      painter.setClipRect(list[0]);
      painter.drawImage(imageRectIn(list[0]), b ? m_b : m_a);
      painter.restore();
      drawLabel(painter, list[0], b ? nameB : nameA, m_state.heardSide == (b ? 1 : 0),
                Qt::AlignLeft);
      break;
    }
    case ReviewMode::Difference: {
      painter.save();
      painter.setClipRect(list[0]);
      if (!m_difference.isNull()) painter.drawImage(imageRectIn(list[0]), m_difference);
      painter.restore();
      drawLabel(painter, list[0], tr("|A - B| x %1").arg(m_state.gain), false, Qt::AlignLeft);
      break;
    }
  }
  painter.end();
  emit painted(m_index);
}

void ReviewCanvas::wheelEvent(QWheelEvent* event) {
  const QPointF anchor = imagePointAt(event->position());
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return;
  const QSize size = imageSize();
  emit zoomRequested(std::pow(1.25, steps),
                     anchor.x() < 0 ? QPointF(size.width() / 2.0, size.height() / 2.0) : anchor);
  event->accept();
}

void ReviewCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  m_lastMouse = event->position();
  m_drag = Drag::Pan;
  if (m_state.mode == ReviewMode::Wipe) {
    const QRectF image = imageRectIn(areas().front());
    const double split = image.left() + image.width() * m_state.wipe;
    if (std::abs(event->position().x() - split) <= kWipeGrabPixels ||
        !(event->modifiers() & Qt::ShiftModifier)) {
      // In the wipe mode a plain drag moves the split; Shift+drag pans.
      m_drag = Drag::Wipe;
      emit wipeRequested(
          std::clamp((event->position().x() - image.left()) / image.width(), 0.0, 1.0));
    }
  }
}

void ReviewCanvas::mouseMoveEvent(QMouseEvent* event) {
  emit hovered(imagePointAt(event->position()));
  if (m_drag == Drag::Pan) {
    const double scale = scaleIn(areas().front());
    const QPointF delta = (event->position() - m_lastMouse) / scale;
    m_lastMouse = event->position();
    if (!delta.isNull()) emit panRequested(delta);
  } else if (m_drag == Drag::Wipe) {
    const QRectF image = imageRectIn(areas().front());
    emit wipeRequested(
        std::clamp((event->position().x() - image.left()) / image.width(), 0.0, 1.0));
  }
}

void ReviewCanvas::mouseReleaseEvent(QMouseEvent*) { m_drag = Drag::None; }

void ReviewCanvas::mouseDoubleClickEvent(QMouseEvent*) { emit zoomResetRequested(); }

void ReviewCanvas::leaveEvent(QEvent*) { emit hovered(QPointF(-1, -1)); }

}  // namespace h3p::ui
