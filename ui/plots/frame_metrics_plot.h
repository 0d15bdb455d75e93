#pragma once

#include <QList>
#include <QWidget>

#include "ui/models/compare_result.h"

class QCustomPlot;
class QCPAxisRect;
class QCPLegend;
class QCPItemStraightLine;
class QMouseEvent;

namespace h3p::ui {

// Per-frame PSNR (top) and SSIM (bottom) of one or more comparisons of a seed, with the
// bounds as dashed red lines and a playhead. A click inside either plot asks to seek to the
// nearest frame (seekRequested); the plot itself does not move the playhead. Dumb widget.
class FrameMetricsPlot : public QWidget {
  Q_OBJECT

 public:
  explicit FrameMetricsPlot(QWidget* parent = nullptr);

  // Replaces the curves: one PSNR and one SSIM curve per comparison (legend: candidate spec);
  // bounds from the first comparison that has them. Infinite PSNR is left as a gap.
  void setResults(const QList<CompareResult>& results);

  // Moves the playhead to `frame` (clamped to the frames shown).
  void setPlayhead(int frame);
  int playhead() const { return m_playhead; }

  // Number of frames on the x axis (the longest curve), 0 when empty.
  int frameCount() const { return m_frameCount; }

  // The frame a widget-local x position inside the plot maps to (clamped), -1 when empty.
  int frameAtX(double x) const;

  // The plot, for export and tests.
  QCustomPlot* plot() const { return m_plot; }

  // Writes the plot as PNG (width x height pixels; 0 = current size). False on failure.
  bool savePng(const QString& file, int width = 0, int height = 0);

 signals:
  // The user clicked at `frame`.
  void seekRequested(int frame);

 private:
  void onMousePress(QMouseEvent* event);

  QCustomPlot* m_plot = nullptr;
  QCPLegend* m_legend = nullptr;  // below the plots, owned by the layout
  QCPAxisRect* m_psnrRect = nullptr;
  QCPAxisRect* m_ssimRect = nullptr;
  QCPItemStraightLine* m_psnrPlayhead = nullptr;
  QCPItemStraightLine* m_ssimPlayhead = nullptr;
  int m_playhead = 0;
  int m_frameCount = 0;
};

}  // namespace h3p::ui
