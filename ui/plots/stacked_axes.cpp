#include "ui/plots/stacked_axes.h"

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

}  // namespace h3p::ui
