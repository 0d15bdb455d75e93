#include "ui/plots/plots_view.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/plots/frame_metrics_plot.h"
#include "ui/plots/step_drift_plot.h"

namespace h3p::ui {

PlotsView::PlotsView(QWidget* parent)
    : QWidget(parent),
      m_title(new QLabel(this)),
      m_exportButton(new QPushButton(tr("Export PNG…"), this)),
      m_framePlot(new FrameMetricsPlot(this)),
      m_driftPlot(new StepDriftPlot(this)) {
  setObjectName(QStringLiteral("plotsView"));
  m_title->setObjectName(QStringLiteral("plotsTitle"));
  m_exportButton->setObjectName(QStringLiteral("plotsExportButton"));
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* header = new QHBoxLayout;
  header->addWidget(m_title, 1);
  header->addWidget(m_exportButton);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->setObjectName(QStringLiteral("plotsSplitter"));
  splitter->addWidget(m_framePlot);
  splitter->addWidget(m_driftPlot);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(header);
  layout->addWidget(splitter, 1);

  connect(m_framePlot, &FrameMetricsPlot::seekRequested, this, &PlotsView::seekRequested);
  connect(m_exportButton, &QPushButton::clicked, this, &PlotsView::chooseExportFile);
  clear(tr("Select a seed to plot its comparisons"));
}

void PlotsView::setSeedData(const QString& title, const QList<CompareResult>& results,
                            const std::optional<DriftSeries>& teacher) {
  m_title->setText(title);
  m_framePlot->setResults(results);
  m_driftPlot->setData(results, teacher);
  m_exportButton->setEnabled(true);
}

void PlotsView::clear(const QString& text) {
  m_title->setText(text);
  m_framePlot->setResults({});
  m_driftPlot->setData({}, std::nullopt);
  m_exportButton->setEnabled(false);
}

void PlotsView::setPlayhead(int frame) { m_framePlot->setPlayhead(frame); }

bool PlotsView::exportPng(const QString& file) {
  const QPixmap frames = m_framePlot->grab();
  const QPixmap steps = m_driftPlot->grab();
  QPixmap both(frames.width() + steps.width(), std::max(frames.height(), steps.height()));
  both.fill(Qt::white);
  {
    QPainter painter(&both);
    painter.drawPixmap(0, 0, frames);
    painter.drawPixmap(frames.width(), 0, steps);
  }
  return both.save(file, "PNG");
}

void PlotsView::chooseExportFile() {
  const QString file =
      QFileDialog::getSaveFileName(this, tr("Export plots"), QString(), tr("PNG images (*.png)"));
  if (!file.isEmpty() && !exportPng(file)) {
    QMessageBox::warning(this, tr("Export plots"), tr("%1: cannot write the image").arg(file));
  }
}

}  // namespace h3p::ui
