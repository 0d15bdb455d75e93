#include "ui/review/help_overlay.h"

#include <QPainter>

namespace h3p::ui {

HelpOverlay::HelpOverlay(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("helpOverlay"));
  setAttribute(Qt::WA_TransparentForMouseEvents, false);
  hide();
}

void HelpOverlay::setShortcuts(const QList<QPair<QString, QString>>& rows) {
  m_rows = rows;
  update();
}

void HelpOverlay::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(0, 0, 0, 170));
  const QFontMetrics metrics(font());
  const int line = metrics.height() + 6;
  int keysWidth = 0, textWidth = 0;
  for (const auto& [keys, what] : m_rows) {
    keysWidth = std::max(keysWidth, metrics.horizontalAdvance(keys));
    textWidth = std::max(textWidth, metrics.horizontalAdvance(what));
  }
  const QSize panel(keysWidth + textWidth + 60, line * (static_cast<int>(m_rows.size()) + 2) + 16);
  const QRect box(QPoint((width() - panel.width()) / 2, (height() - panel.height()) / 2), panel);
  painter.fillRect(box, QColor(40, 40, 46, 240));
  painter.setPen(Qt::white);
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  painter.drawText(box.left() + 20, box.top() + 8 + metrics.ascent(), tr("Keyboard shortcuts"));
  int y = box.top() + 8 + line + line / 2;
  for (const auto& [keys, what] : m_rows) {
    painter.setFont(bold);
    painter.setPen(QColor(240, 190, 60));
    painter.drawText(box.left() + 20, y + metrics.ascent(), keys);
    painter.setFont(font());
    painter.setPen(Qt::white);
    painter.drawText(box.left() + 40 + keysWidth, y + metrics.ascent(), what);
    y += line;
  }
  painter.setPen(Qt::lightGray);
  painter.drawText(box.left() + 20, y + metrics.ascent(), tr("Click or press ? to close"));
}

void HelpOverlay::mousePressEvent(QMouseEvent*) { hide(); }

}  // namespace h3p::ui
