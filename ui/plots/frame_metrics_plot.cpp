#include "ui/plots/frame_metrics_plot.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/plots/plot_palette.h"
#include "ui/plots/stacked_axes.h"

namespace h3p::ui {

namespace {

QCPItemStraightLine* makeLine(QCustomPlot* plot, QCPAxisRect* rect, const QPen& pen) {
  auto* line = new QCPItemStraightLine(plot);
  line->setClipAxisRect(rect);
  line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  line->setPen(pen);
  line->setSelectable(false);
  return line;
}

void placeHorizontal(QCPItemStraightLine* line, double y) {
  line->point1->setCoords(0, y);
  line->point2->setCoords(1, y);
}

void placeVertical(QCPItemStraightLine* line, double x) {
  line->point1->setCoords(x, 0);
  line->point2->setCoords(x, 1);
}

}  // namespace

FrameMetricsPlot::FrameMetricsPlot(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("frameMetricsPlot"));
  m_plot->setObjectName(QStringLiteral("frameMetricsCustomPlot"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);

  // Two stacked axis rects sharing the frame axis.
  const StackedAxes axes = stackAxisRects(m_plot, 3);
  m_psnrRect = axes.top;
  m_ssimRect = axes.bottom;
  m_legend = axes.legend;
  m_psnrRect->axis(QCPAxis::atLeft)->setLabel(tr("PSNR dB"));
  m_ssimRect->axis(QCPAxis::atLeft)->setLabel(tr("SSIM"));
  m_ssimRect->axis(QCPAxis::atBottom)->setLabel(tr("frame"));
  connect(m_psnrRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
          m_ssimRect->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::setRange));

  QPen playheadPen(QColor(0x20, 0x20, 0x20));
  playheadPen.setWidthF(1.5);
  m_psnrPlayhead = makeLine(m_plot, m_psnrRect, playheadPen);
  m_ssimPlayhead = makeLine(m_plot, m_ssimRect, playheadPen);
  placeVertical(m_psnrPlayhead, 0);
  placeVertical(m_ssimPlayhead, 0);

  connect(m_plot, &QCustomPlot::mousePress, this, &FrameMetricsPlot::onMousePress);
  setMinimumSize(320, 240);
}

void FrameMetricsPlot::setResults(const QList<CompareResult>& results) {
  m_legend->clearItems();
  m_plot->clearGraphs();
  // Remove the previous bound lines (every item but the two playheads).
  for (int i = m_plot->itemCount() - 1; i >= 0; --i) {
    QCPAbstractItem* item = m_plot->item(i);
    if (item != m_psnrPlayhead && item != m_ssimPlayhead) {
      m_plot->removeItem(item);
    }
  }

  m_frameCount = 0;
  double psnrLow = std::numeric_limits<double>::infinity(), psnrHigh = -psnrLow;
  double ssimLow = psnrLow, ssimHigh = -psnrLow;
  int colorIndex = 0;
  QCPLegend* legend = m_legend;
  // Every frame shown widens the axes' ranges and the frame count.
  auto extend = [&](const FrameMetrics& frame) {
    if (std::isfinite(frame.psnrDb)) {
      psnrLow = std::min(psnrLow, frame.psnrDb);
      psnrHigh = std::max(psnrHigh, frame.psnrDb);
    }
    if (std::isfinite(frame.ssim)) {
      ssimLow = std::min(ssimLow, frame.ssim);
      ssimHigh = std::max(ssimHigh, frame.ssim);
    }
    m_frameCount = std::max(m_frameCount, frame.index + 1);
  };
  // The provider variants' spread first, as a band behind the curves.
  QList<QMap<double, double>> variantPsnr, variantSsim;
  for (const CompareResult& result : results) {
    if (!result.isProviderVariant()) continue;
    QMap<double, double> psnr, ssim;
    for (const FrameMetrics& frame : result.frames) {
      psnr.insert(frame.index, frame.psnrDb);
      ssim.insert(frame.index, frame.ssim);
      extend(frame);
    }
    variantPsnr.append(psnr);
    variantSsim.append(ssim);
  }
  if (!variantPsnr.isEmpty()) {
    const QString name = tr("provider variants (%1): band").arg(variantPsnr.size());
    QCPGraph* band = addBand(m_plot, m_psnrRect, name, variantPsnr);
    addBand(m_plot, m_ssimRect, name, variantSsim);
    if (band != nullptr) legend->addItem(new QCPPlottableLegendItem(legend, band));
  }
  for (const CompareResult& result : results) {
    if (result.isProviderVariant()) continue;
    QVector<double> x, psnr, ssim;
    for (const FrameMetrics& frame : result.frames) {
      x.append(frame.index);
      psnr.append(std::isfinite(frame.psnrDb) ? frame.psnrDb
                                              : std::numeric_limits<double>::quiet_NaN());
      ssim.append(frame.ssim);
      extend(frame);
    }
    QString name =
        result.candidate.implSpec.isEmpty() ? result.candidate.path : result.candidate.implSpec;
    // Identical frames have infinite PSNR (no point on the plot): say so in the legend.
    if (!result.frames.isEmpty() &&
        std::all_of(result.frames.begin(), result.frames.end(),
                    [](const FrameMetrics& f) { return std::isinf(f.psnrDb); })) {
      name += tr(" (identical frames)");
    }
    QPen pen(seriesColor(colorIndex++));
    pen.setWidthF(1.5);
    QCPGraph* psnrGraph = addCurve(m_plot, m_psnrRect, name, pen, x, psnr);
    QCPGraph* ssimGraph = addCurve(m_plot, m_ssimRect, name, pen, x, ssim);
    psnrGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 3));
    ssimGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 3));
    legend->addItem(new QCPPlottableLegendItem(legend, psnrGraph));
  }

  // Bound lines from the first comparison with bounds.
  QPen boundPen(QColor(0xd0, 0x30, 0x30));
  boundPen.setStyle(Qt::DashLine);
  boundPen.setWidthF(1.5);
  for (const CompareResult& result : results) {
    if (!result.bounds.present) {
      continue;
    }
    if (std::isfinite(result.bounds.psnrDbMin)) {
      QCPItemStraightLine* line = makeLine(m_plot, m_psnrRect, boundPen);
      placeHorizontal(line, result.bounds.psnrDbMin);
      psnrLow = std::min(psnrLow, result.bounds.psnrDbMin);
      psnrHigh = std::max(psnrHigh, result.bounds.psnrDbMin);
    }
    if (std::isfinite(result.bounds.ssimMin)) {
      QCPItemStraightLine* line = makeLine(m_plot, m_ssimRect, boundPen);
      placeHorizontal(line, result.bounds.ssimMin);
      ssimLow = std::min(ssimLow, result.bounds.ssimMin);
      ssimHigh = std::max(ssimHigh, result.bounds.ssimMin);
    }
    break;
  }

  // Ranges: every frame, every curve and the bound lines, with a margin.
  const double xHigh = std::max(1, m_frameCount - 1);
  m_psnrRect->axis(QCPAxis::atBottom)->setRange(-0.5, xHigh + 0.5);
  auto padded = [](double low, double high, double fallbackLow, double fallbackHigh) {
    if (!std::isfinite(low) || !std::isfinite(high)) return QCPRange(fallbackLow, fallbackHigh);
    const double pad = std::max((high - low) * 0.08, 1e-9);
    return QCPRange(low - pad, high + pad);
  };
  m_psnrRect->axis(QCPAxis::atLeft)->setRange(padded(psnrLow, psnrHigh, 0, 60));
  m_ssimRect->axis(QCPAxis::atLeft)->setRange(padded(ssimLow, std::min(ssimHigh, 1.0), 0, 1));

  legend->setVisible(legend->itemCount() > 0);
  setPlayhead(m_playhead);
}

void FrameMetricsPlot::setPlayhead(int frame) {
  m_playhead = std::clamp(frame, 0, std::max(0, m_frameCount - 1));
  placeVertical(m_psnrPlayhead, m_playhead);
  placeVertical(m_ssimPlayhead, m_playhead);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int FrameMetricsPlot::frameAtX(double x) const {
  if (m_frameCount <= 0) {
    return -1;
  }
  const double coord = m_psnrRect->axis(QCPAxis::atBottom)->pixelToCoord(x);
  return std::clamp(static_cast<int>(std::lround(coord)), 0, m_frameCount - 1);
}

void FrameMetricsPlot::onMousePress(QMouseEvent* event) {
  const QPointF pos = event->position();
  if (m_frameCount <= 0 || event->button() != Qt::LeftButton) {
    return;
  }
  if (!m_psnrRect->rect().contains(pos.toPoint()) && !m_ssimRect->rect().contains(pos.toPoint())) {
    return;
  }
  emit seekRequested(frameAtX(pos.x()));
}

bool FrameMetricsPlot::savePng(const QString& file, int width, int height) {
  return m_plot->savePng(file, width, height);
}

}  // namespace h3p::ui
