#include "ui/plots/stacked_axes.h"

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>

namespace h3p::ui {

StackedAxes stackAxisRects(QCustomPlot* plot, int legendColumns) {
  StackedAxes axes;
  plot->plotLayout()->clear();
  axes.top = new QCPAxisRect(plot);
  axes.bottom = new QCPAxisRect(plot);
  plot->plotLayout()->addElement(0, 0, axes.top);
  plot->plotLayout()->addElement(1, 0, axes.bottom);
  plot->setAutoAddPlottableToLegend(false);
  axes.legend = new QCPLegend;
  plot->plotLayout()->addElement(2, 0, axes.legend);
  plot->plotLayout()->setRowStretchFactor(2, 0.001);
  axes.legend->setLayer(QStringLiteral("legend"));
  axes.legend->setFillOrder(QCPLegend::foColumnsFirst);
  axes.legend->setWrap(legendColumns);
  axes.legend->setBorderPen(Qt::NoPen);
  axes.legend->setVisible(false);
  auto* group = new QCPMarginGroup(plot);
  axes.top->setMarginGroup(QCP::msLeft | QCP::msRight, group);
  axes.bottom->setMarginGroup(QCP::msLeft | QCP::msRight, group);
  return axes;
}

QCPGraph* addCurve(QCustomPlot* plot, QCPAxisRect* rect, const QString& name, const QPen& pen,
                   const QVector<double>& x, const QVector<double>& y) {
  QCPGraph* graph = plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  graph->setName(name);
  graph->setPen(pen);
  graph->setData(x, y, true);
  return graph;
}

QCPGraph* addBand(QCustomPlot* plot, QCPAxisRect* rect, const QString& name,
                  const QList<QMap<double, double>>& curves) {
  QMap<double, std::pair<double, double>> span;  // x -> (low, high)
  for (const QMap<double, double>& curve : curves) {
    for (auto it = curve.begin(); it != curve.end(); ++it) {
      if (!std::isfinite(it.value())) continue;
      auto found = span.find(it.key());
      if (found == span.end()) {
        span.insert(it.key(), {it.value(), it.value()});
      } else {
        found->first = std::min(found->first, it.value());
        found->second = std::max(found->second, it.value());
      }
    }
  }
  if (span.isEmpty()) return nullptr;
  QVector<double> x, low, high;
  for (auto it = span.begin(); it != span.end(); ++it) {
    x.append(it.key());
    low.append(it->first);
    high.append(it->second);
  }
  QPen edge(QColor(0x80, 0x80, 0x80));
  edge.setStyle(Qt::DotLine);
  QCPGraph* lower = addCurve(plot, rect, name, edge, x, low);
  QCPGraph* upper = addCurve(plot, rect, name, edge, x, high);
  lower->setObjectName(QStringLiteral("variantBand"));
  upper->setObjectName(QStringLiteral("variantBand"));
  upper->setBrush(QColor(0x80, 0x80, 0x80, 60));
  upper->setChannelFillGraph(lower);
  return upper;
}

}  // namespace h3p::ui
