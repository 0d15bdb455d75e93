#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QVector>

class QCustomPlot;
class QCPAxisRect;
class QCPLegend;
class QCPGraph;
class QPen;

namespace h3p::ui {

// Two axis rects of one plot, one above the other, and the legend under them; all owned by the
// plot's layout.
struct StackedAxes {
  QCPAxisRect* top = nullptr;
  QCPAxisRect* bottom = nullptr;
  QCPLegend* legend = nullptr;  // hidden, borderless, `legendColumns` entries a row
};

// Replaces `plot`'s layout with two stacked axis rects whose left and right margins line up and
// a legend row below them; plottables are no longer added to a legend on their own (the caller
// adds one entry per run).
StackedAxes stackAxisRects(QCustomPlot* plot, int legendColumns);

// Adds a curve of y over x on `rect`'s bottom and left axes, named `name` (not in a legend);
// the graph is owned by `plot`.
QCPGraph* addCurve(QCustomPlot* plot, QCPAxisRect* rect, const QString& name, const QPen& pen,
                   const QVector<double>& x, const QVector<double>& y);

// The band between the lowest and the highest finite value at each x over `curves` (the provider
// variants' spread), filled in grey on `rect` behind curves added later: two graphs named
// `name` with object name "variantBand". Returns the upper one (for a legend entry), or null
// when no x has a value.
QCPGraph* addBand(QCustomPlot* plot, QCPAxisRect* rect, const QString& name,
                  const QList<QMap<double, double>>& curves);

}  // namespace h3p::ui
