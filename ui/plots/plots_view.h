#pragma once

#include <QList>
#include <QWidget>
#include <optional>

#include "ui/models/compare_result.h"
#include "ui/models/drift_series.h"

class QLabel;
class QPushButton;

namespace h3p::ui {

class FrameMetricsPlot;
class StepDriftPlot;

// The plots tab for one seed: per-frame PSNR/SSIM with bounds and playhead (left) and per-step
// drift on log scales (right), a title naming the seed, and an Export PNG button. Forwards the
// frame plot's clicks as seekRequested. Dumb widget: the window feeds it data.
class PlotsView : public QWidget {
  Q_OBJECT

 public:
  explicit PlotsView(QWidget* parent = nullptr);

  // Shows the comparisons of one seed and its teacher-forced drift (when known).
  void setSeedData(const QString& title, const QList<CompareResult>& results,
                   const std::optional<DriftSeries>& teacher);
  // Shows `text` in place of a title (no data).
  void clear(const QString& text);

  FrameMetricsPlot* framePlot() const { return m_framePlot; }
  StepDriftPlot* driftPlot() const { return m_driftPlot; }

  // Writes both plots side by side as one PNG. False on failure.
  bool exportPng(const QString& file);

 public slots:
  // Moves the frame plot's playhead (connect the review's frameChanged here).
  void setPlayhead(int frame);

 signals:
  // The user clicked a frame in the frame plot.
  void seekRequested(int frame);

 private slots:
  void chooseExportFile();

 private:
  QLabel* m_title = nullptr;
  QPushButton* m_exportButton = nullptr;
  FrameMetricsPlot* m_framePlot = nullptr;
  StepDriftPlot* m_driftPlot = nullptr;
};

}  // namespace h3p::ui
