#pragma once
// A translucent panel over the review listing its keyboard shortcuts; hides on a click.
#include <QList>
#include <QPair>
#include <QWidget>

namespace h3p::ui {

class HelpOverlay : public QWidget {
  Q_OBJECT

 public:
  explicit HelpOverlay(QWidget* parent = nullptr);
  // (keys, what they do) rows, in order.
  void setShortcuts(const QList<QPair<QString, QString>>& rows);
  const QList<QPair<QString, QString>>& shortcuts() const { return m_rows; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  QList<QPair<QString, QString>> m_rows;
};

}  // namespace h3p::ui
