#pragma once

#include <QList>
#include <QVector>
#include <QWidget>
#include <limits>
#include <optional>

#include "ui/models/compare_result.h"
#include "ui/models/drift_series.h"

class QCustomPlot;
class QCPAxisRect;
class QCPLegend;
class QPen;

namespace h3p::ui {

// Per-step relative L2 of the velocity, video (top) and audio (bottom), on log scales: one
// free-running curve per comparison of the seed (the candidate and every provider variant, from
// compare's "steps"), the teacher-forced one-step curve beside it (dashed) when a drift file is
// given, the drift threshold as a dashed line, and a marker at each curve's first step over the
// threshold. Zero values (bitwise equal) are left as gaps and named so in the legend. Dumb
// widget.
class StepDriftPlot : public QWidget {
  Q_OBJECT

 public:
  explicit StepDriftPlot(QWidget* parent = nullptr);

  // Replaces the curves. threshold: relative L2 marking the first drifting step (NaN: take
  // the comparisons' step_threshold).
  void setData(const QList<CompareResult>& results, const std::optional<DriftSeries>& teacher,
               double threshold = std::numeric_limits<double>::quiet_NaN());

  // Number of graphs per axis rect (video), for tests.
  int curveCount() const;
  // The first-drift marker steps placed by the last setData (video or audio), -1 where none.
  QList<int> firstDriftMarkers() const { return m_markers; }

  QCustomPlot* plot() const { return m_plot; }

  // Writes the plot as PNG (0 = current size). False on failure.
  bool savePng(const QString& file, int width = 0, int height = 0);

 private:
  // Adds one series: its video and audio curves, one legend entry, and markers at step `first`
  // (-1: none, still recorded in firstDriftMarkers).
  void addSeries(const QString& name, const QPen& pen, const QVector<double>& x,
                 const QVector<double>& video, const QVector<double>& audio, int first);

  QCustomPlot* m_plot = nullptr;
  QCPLegend* m_legend = nullptr;  // below the plots, owned by the layout
  QCPAxisRect* m_videoRect = nullptr;
  QCPAxisRect* m_audioRect = nullptr;
  QList<int> m_markers;
};

}  // namespace h3p::ui
