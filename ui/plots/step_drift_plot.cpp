#include "ui/plots/step_drift_plot.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/plots/plot_palette.h"
#include "ui/plots/stacked_axes.h"

namespace h3p::ui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Positive finite values only; zero (bitwise equal) and non-finite become gaps on a log axis.
double logSafe(double value) { return std::isfinite(value) && value > 0 ? value : kNaN; }

void setupLogAxis(QCPAxis* axis, const QString& label) {
  axis->setScaleType(QCPAxis::stLogarithmic);
  QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
  axis->setTicker(ticker);
  axis->setNumberFormat(QStringLiteral("eb"));
  axis->setNumberPrecision(0);
  axis->setLabel(label);
}

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = 0;
  void add(double v) {
    if (std::isfinite(v) && v > 0) {
      low = std::min(low, v);
      high = std::max(high, v);
    }
  }
  // Whole decades around the values, at least two, so the log ticks fall on powers of ten.
  QCPRange padded() const {
    if (!std::isfinite(low) || high <= 0) return QCPRange(1e-6, 1);
    double lowDecade = std::floor(std::log10(low));
    double highDecade = std::ceil(std::log10(high));
    if (highDecade - lowDecade < 2) {
      lowDecade = highDecade - 2;
    }
    return QCPRange(std::pow(10.0, lowDecade), std::pow(10.0, highDecade));
  }
};

void addMarker(QCustomPlot* plot, QCPAxisRect* rect, double step, double value,
               const QColor& color) {
  auto* tracer = new QCPItemTracer(plot);
  tracer->setClipAxisRect(rect);
  tracer->position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  tracer->position->setCoords(step, value);
  tracer->setStyle(QCPItemTracer::tsCircle);
  tracer->setSize(11);
  QPen pen(color);
  pen.setWidthF(2);
  tracer->setPen(pen);
  tracer->setBrush(Qt::NoBrush);
}

}  // namespace

StepDriftPlot::StepDriftPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("stepDriftPlot"));
  m_plot->setObjectName(QStringLiteral("stepDriftCustomPlot"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  const StackedAxes axes = stackAxisRects(m_plot, 2);
  m_videoRect = axes.top;
  m_audioRect = axes.bottom;
  m_legend = axes.legend;
  setupLogAxis(m_videoRect->axis(QCPAxis::atLeft), tr("video rel L2 (free-running: solid)"));
  setupLogAxis(m_audioRect->axis(QCPAxis::atLeft), tr("audio rel L2"));
  m_audioRect->axis(QCPAxis::atBottom)->setLabel(tr("step"));
  setMinimumSize(320, 240);
}

int StepDriftPlot::curveCount() const {
  const QList<QCPGraph*> graphs = m_videoRect->graphs();
  return static_cast<int>(std::count_if(graphs.begin(), graphs.end(), [](const QCPGraph* g) {
    return g->objectName() != QLatin1String("variantBand");
  }));
}

void StepDriftPlot::setData(const QList<CompareResult>& results,
                            const std::optional<DriftSeries>& teacher, double threshold) {
  m_legend->clearItems();
  m_plot->clearGraphs();
  m_plot->clearItems();
  m_markers.clear();
  if (std::isnan(threshold)) {
    for (const CompareResult& result : results) {
      if (std::isfinite(result.stepThreshold)) {
        threshold = result.stepThreshold;
        break;
      }
    }
  }

  Range videoRange, audioRange;
  int lastStep = 0;

  // The provider variants' free-running drift as a band behind the candidates' curves.
  QList<QMap<double, double>> variantVideo, variantAudio;
  for (const CompareResult& result : results) {
    if (!result.isProviderVariant()) continue;
    QMap<double, double> video, audio;
    for (const StepDrift& step : result.steps) {
      video.insert(step.step, logSafe(step.videoRelL2));
      audio.insert(step.step, logSafe(step.audioRelL2));
      videoRange.add(step.videoRelL2);
      audioRange.add(step.audioRelL2);
      lastStep = std::max(lastStep, step.step);
    }
    variantVideo.append(video);
    variantAudio.append(audio);
  }
  if (!variantVideo.isEmpty()) {
    const QString name = tr("provider variants (%1): band").arg(variantVideo.size());
    QCPGraph* band = addBand(m_plot, m_videoRect, name, variantVideo);
    addBand(m_plot, m_audioRect, name, variantAudio);
    if (band != nullptr) m_legend->addItem(new QCPPlottableLegendItem(m_legend, band));
  }

  // Free-running drift per comparison (the candidates).
  int colorIndex = 0;
  for (const CompareResult& result : results) {
    if (result.isProviderVariant()) continue;
    QVector<double> x, video, audio;
    int first = -1;
    for (const StepDrift& step : result.steps) {
      x.append(step.step);
      video.append(logSafe(step.videoRelL2));
      audio.append(logSafe(step.audioRelL2));
      videoRange.add(step.videoRelL2);
      audioRange.add(step.audioRelL2);
      lastStep = std::max(lastStep, step.step);
      if (first < 0 && std::isfinite(threshold) &&
          (step.videoRelL2 > threshold || step.audioRelL2 > threshold)) {
        first = step.step;
      }
    }
    QPen pen(seriesColor(colorIndex++));
    pen.setWidthF(1.5);
    QString name =
        result.candidate.implSpec.isEmpty() ? result.candidate.path : result.candidate.implSpec;
    // Bitwise-equal steps have zero drift (no point on a log axis): say so in the legend.
    if (!result.steps.isEmpty() &&
        std::all_of(result.steps.begin(), result.steps.end(),
                    [](const StepDrift& d) { return d.videoRelL2 == 0 && d.audioRelL2 == 0; })) {
      name += tr(" (bitwise equal)");
    }
    addSeries(name, pen, x, video, audio, first);
  }

  // Teacher-forced one-step drift beside the free-running curve.
  if (teacher.has_value()) {
    QVector<double> x, video, audio;
    for (const DriftPoint& point : teacher->points) {
      x.append(point.step);
      video.append(logSafe(point.teacherVideo));
      audio.append(logSafe(point.teacherAudio));
      videoRange.add(point.teacherVideo);
      audioRange.add(point.teacherAudio);
      lastStep = std::max(lastStep, point.step);
    }
    QPen pen(QColor(0x30, 0x30, 0x30));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    const int first = std::isfinite(threshold) ? teacher->firstOver(threshold) : -1;
    addSeries(tr("teacher-forced, one step (dashed)"), pen, x, video, audio, first);
  }

  // Threshold line.
  if (std::isfinite(threshold) && threshold > 0) {
    QPen pen(QColor(0xd0, 0x30, 0x30));
    pen.setStyle(Qt::DashLine);
    for (QCPAxisRect* rect : {m_videoRect, m_audioRect}) {
      auto* line = new QCPItemStraightLine(m_plot);
      line->setClipAxisRect(rect);
      line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      line->point1->setCoords(0, threshold);
      line->point2->setCoords(1, threshold);
      line->setPen(pen);
    }
    videoRange.add(threshold);
    audioRange.add(threshold);
  }

  for (QCPAxisRect* rect : {m_videoRect, m_audioRect}) {
    rect->axis(QCPAxis::atBottom)->setRange(-0.5, lastStep + 0.5);
  }
  m_videoRect->axis(QCPAxis::atLeft)->setRange(videoRange.padded());
  m_audioRect->axis(QCPAxis::atLeft)->setRange(audioRange.padded());
  m_legend->setVisible(m_legend->itemCount() > 0);
  m_plot->replot();
}

void StepDriftPlot::addSeries(const QString& name, const QPen& pen, const QVector<double>& x,
                              const QVector<double>& video, const QVector<double>& audio,
                              int first) {
  QCPGraph* graph = addCurve(m_plot, m_videoRect, name, pen, x, video);
  addCurve(m_plot, m_audioRect, name, pen, x, audio);
  m_legend->addItem(new QCPPlottableLegendItem(m_legend, graph));
  m_markers.append(first);
  if (first >= 0) {
    const int i = static_cast<int>(x.indexOf(first));
    addMarker(m_plot, m_videoRect, first, video.at(i), pen.color());
    addMarker(m_plot, m_audioRect, first, audio.at(i), pen.color());
  }
}

bool StepDriftPlot::savePng(const QString& file, int width, int height) {
  return m_plot->savePng(file, width, height);
}

}  // namespace h3p::ui
