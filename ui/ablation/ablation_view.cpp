#include "ui/ablation/ablation_view.h"

#include <QRegularExpression>

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "ui/plots/plot_palette.h"

namespace h3p::ui {

namespace {

QString sci(double value) {
  return std::isnan(value) ? QStringLiteral("-") : QString::number(value, 'e', 3);
}

QTableWidgetItem* cell(const QString& text, bool right = true) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  item->setTextAlignment(right ? Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter)
                               : Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
  return item;
}

}  // namespace

AblationView::AblationView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("ablationView"));

  // Launcher: run pair, step, groups, run / cancel, progress.
  m_pairBox = new QComboBox(this);
  m_pairBox->setObjectName(QStringLiteral("ablationPairBox"));
  m_stepBox = new QSpinBox(this);
  m_stepBox->setObjectName(QStringLiteral("ablationStepBox"));
  m_stepBox->setRange(0, 0);
  m_deviceBox = new QComboBox(this);
  m_deviceBox->setObjectName(QStringLiteral("ablationDeviceBox"));
  m_deviceBox->addItems({QStringLiteral("cpu"), QStringLiteral("cuda")});
  m_deviceBox->setToolTip(
      tr("Where the job computes: cuda replays the candidate's CUDA kernels group by group"));
  auto* groupsBox = new QGroupBox(tr("Groups to swap to the provider (none checked: all)"), this);
  auto* groupsLayout = new QGridLayout(groupsBox);
  const QStringList groups = ablationGroups();
  for (int i = 0; i < groups.size(); ++i) {
    auto* box = new QCheckBox(groups.at(i), groupsBox);
    box->setObjectName(QStringLiteral("ablationGroup_") + groups.at(i));
    groupsLayout->addWidget(box, i / 5, i % 5);
    m_groupBoxes.append(box);
  }
  m_runButton = new QPushButton(tr("Run ablation"), this);
  m_runButton->setObjectName(QStringLiteral("ablationRunButton"));
  m_cancelButton = new QPushButton(tr("Cancel"), this);
  m_cancelButton->setObjectName(QStringLiteral("ablationCancelButton"));
  m_progress = new QProgressBar(this);
  m_progress->setObjectName(QStringLiteral("ablationProgress"));
  m_progress->setRange(0, 1000);
  m_progress->setFormat(QStringLiteral("%p %"));

  auto* form = new QFormLayout;
  form->addRow(tr("Runs"), m_pairBox);
  form->addRow(tr("Step"), m_stepBox);
  form->addRow(tr("Device"), m_deviceBox);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_runButton);
  buttons->addWidget(m_cancelButton);
  buttons->addWidget(m_progress, 1);

  m_log = new QPlainTextEdit(this);
  m_log->setObjectName(QStringLiteral("ablationLog"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(5000);
  m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  m_sweeps = new QListWidget(this);
  m_sweeps->setObjectName(QStringLiteral("ablationSweeps"));

  auto* launcher = new QWidget(this);
  auto* launcherLayout = new QVBoxLayout(launcher);
  launcherLayout->setContentsMargins(0, 0, 0, 0);
  launcherLayout->addLayout(form);
  launcherLayout->addWidget(groupsBox);
  launcherLayout->addLayout(buttons);
  launcherLayout->addWidget(new QLabel(tr("Sweeps"), launcher));
  launcherLayout->addWidget(m_sweeps, 1);
  launcherLayout->addWidget(new QLabel(tr("Log"), launcher));
  launcherLayout->addWidget(m_log, 1);

  // Result: title, table, bar chart.
  m_resultTitle = new QLabel(this);
  m_resultTitle->setObjectName(QStringLiteral("ablationResultTitle"));
  m_resultTitle->setWordWrap(true);
  m_table = new QTableWidget(0, 6, this);
  m_table->setObjectName(QStringLiteral("ablationTable"));
  m_table->setHorizontalHeaderLabels({tr("impl spec"), tr("video rel L2"), tr("audio rel L2"),
                                      tr("video max |Δ|"), tr("audio max |Δ|"), tr("bitwise")});
  m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_table->verticalHeader()->setVisible(false);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_chart = new QCustomPlot(this);
  m_chart->setObjectName(QStringLiteral("ablationChart"));
  m_chart->setMinimumHeight(220);

  auto* result = new QWidget(this);
  auto* resultLayout = new QVBoxLayout(result);
  resultLayout->setContentsMargins(0, 0, 0, 0);
  resultLayout->addWidget(m_resultTitle);
  auto* resultSplitter = new QSplitter(Qt::Vertical, result);
  resultSplitter->addWidget(m_table);
  resultSplitter->addWidget(m_chart);
  resultSplitter->setStretchFactor(1, 1);
  resultLayout->addWidget(resultSplitter, 1);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(launcher);
  splitter->addWidget(result);
  splitter->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter);

  connect(m_pairBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &AblationView::onPairChanged);
  connect(m_runButton, &QPushButton::clicked, this,
          [this] { emit runRequested(currentPair(), step(), checkedGroups()); });
  connect(m_cancelButton, &QPushButton::clicked, this, &AblationView::cancelRequested);
  connect(m_sweeps, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row >= 0) {
      emit showSweepRequested(m_sweeps->item(row)->data(Qt::UserRole).toString());
    }
  });
  setRunning(false);
  clearSweep(tr("No sweep selected"));
}

void AblationView::setPairs(const QList<AblationPair>& pairs) {
  m_pairs = pairs;
  m_pairBox->clear();
  for (const AblationPair& pair : pairs) {
    m_pairBox->addItem(pair.label);
  }
  onPairChanged(m_pairBox->currentIndex());
  m_runButton->setEnabled(!pairs.isEmpty() && !m_cancelButton->isEnabled());
}

void AblationView::onPairChanged(int index) {
  const int saved = index >= 0 && index < m_pairs.size() ? m_pairs.at(index).savedSteps : 0;
  m_stepBox->setRange(0, std::max(0, saved - 1));
}

void AblationView::setSweeps(const QStringList& labels, const QStringList& files) {
  const QString selected =
      m_sweeps->currentItem() ? m_sweeps->currentItem()->data(Qt::UserRole).toString() : QString();
  const QSignalBlocker blocker(m_sweeps);
  m_sweeps->clear();
  for (int i = 0; i < labels.size() && i < files.size(); ++i) {
    auto* item = new QListWidgetItem(labels.at(i), m_sweeps);
    item->setData(Qt::UserRole, files.at(i));
    item->setToolTip(files.at(i));
    if (files.at(i) == selected) {
      m_sweeps->setCurrentItem(item);
    }
  }
}

void AblationView::selectSweep(const QString& file) {
  for (int row = 0; row < m_sweeps->count(); ++row) {
    if (m_sweeps->item(row)->data(Qt::UserRole).toString() == file) {
      if (m_sweeps->currentRow() == row) {
        emit showSweepRequested(file);
      } else {
        m_sweeps->setCurrentRow(row);
      }
      return;
    }
  }
}

void AblationView::showSweep(const AblationResult& result) {
  m_resultTitle->setText(
      tr("Step %1: %2 against %3\n%4 vs %5")
          .arg(result.step)
          .arg(result.candidateSpec, result.providerSpec, result.candidateRun, result.providerRun));
  QList<AblationRow> rows = result.rows;
  if (result.hasFreeRunning) {
    rows.append({tr("candidate run (free-running)"), QString(), result.freeVideo, result.freeAudio,
                 std::nan("")});
  }
  m_table->setRowCount(static_cast<int>(rows.size()));
  QVector<double> ticks, video, audio;
  QVector<QString> labels;
  for (int i = 0; i < rows.size(); ++i) {
    const AblationRow& row = rows.at(i);
    auto* name = cell(row.variant ? row.implSpec + tr(" (variant)") : row.implSpec, false);
    name->setToolTip(row.error.isEmpty() ? row.what : row.error);
    if (row.variant) {
      QFont italic = name->font();
      italic.setItalic(true);
      name->setFont(italic);
    }
    m_table->setItem(i, 0, name);
    m_table->setItem(i, 1, cell(sci(row.video.relL2)));
    m_table->setItem(i, 2, cell(sci(row.audio.relL2)));
    m_table->setItem(i, 3, cell(sci(row.video.maxAbs)));
    m_table->setItem(i, 4, cell(sci(row.audio.maxAbs)));
    const bool bitwise = row.video.bitwiseEqual && row.audio.bitwiseEqual;
    m_table->setItem(i, 5, cell(!row.error.isEmpty() ? tr("not run") : bitwise ? tr("yes") : tr("no")));
    ticks.append(i + 1);
    video.append(row.video.relL2);
    audio.append(row.audio.relL2);
    QString label =
        result.hasFreeRunning && i == rows.size() - 1 ? tr("free-running") : row.implSpec;
    label.replace(QLatin1String("candidate:"), QLatin1String("c:"));
    // A plugin's path is shortened to its file name on the axis (the table keeps the spec).
    static const QRegularExpression pluginPath(QStringLiteral("^(plugin|python):[^:]*/"));
    label.replace(pluginPath, QStringLiteral("\\1:"));
    labels.append(label);
  }
  m_table->resizeColumnsToContents();

  // Grouped bars: video and audio relative L2 per impl spec.
  m_chart->clearPlottables();
  m_chart->clearItems();
  m_chart->legend->setVisible(true);
  auto* group = new QCPBarsGroup(m_chart);
  const QList<std::pair<QString, QVector<double>>> series = {{tr("video rel L2"), video},
                                                             {tr("audio rel L2"), audio}};
  int colorIndex = 0;
  double high = 0;
  for (const auto& [name, values] : series) {
    auto* bars = new QCPBars(m_chart->xAxis, m_chart->yAxis);
    bars->setName(name);
    bars->setWidth(0.38);
    bars->setBarsGroup(group);
    const QColor color = seriesColor(colorIndex++);
    bars->setPen(QPen(color.darker(120)));
    bars->setBrush(color);
    bars->setData(ticks, values, true);
    for (double v : values) {
      if (std::isfinite(v)) high = std::max(high, v);
    }
  }
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  ticker->addTicks(ticks, labels);
  m_chart->xAxis->setTicker(ticker);
  m_chart->xAxis->setTickLabelRotation(-40);
  m_chart->xAxis->setRange(0.4, rows.size() + 0.6);
  m_chart->yAxis->setLabel(tr("relative L2 vs the provider"));
  m_chart->yAxis->setRange(0, high > 0 ? high * 1.35 : 1);
  m_chart->legend->setBrush(QColor(255, 255, 255, 200));
  m_chart->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  // The provider variants' video range: the band a candidate's bars are read against.
  double bandLow = std::nan(""), bandHigh = std::nan("");
  for (const AblationRow& row : rows) {
    if (!row.variant || !std::isfinite(row.video.relL2)) continue;
    bandLow = std::isnan(bandLow) ? row.video.relL2 : std::min(bandLow, row.video.relL2);
    bandHigh = std::isnan(bandHigh) ? row.video.relL2 : std::max(bandHigh, row.video.relL2);
  }
  if (std::isfinite(bandHigh) && bandHigh * 1.1 > m_chart->yAxis->range().upper) {
    m_chart->yAxis->setRange(0, bandHigh * 1.35);
  }
  if (std::isfinite(bandLow) && bandHigh > 0) {
    auto* band = new QCPItemRect(m_chart);
    band->setObjectName(QStringLiteral("variantBand"));
    band->setLayer(QStringLiteral("background"));
    band->topLeft->setCoords(0.4, bandHigh);
    band->bottomRight->setCoords(rows.size() + 0.6, bandLow);
    band->setPen(QPen(QColor(0x90, 0x90, 0x90), 1, Qt::DashLine));
    band->setBrush(QColor(0x90, 0x90, 0x90, 50));
    auto* caption = new QCPItemText(m_chart);
    caption->position->setCoords(0.5, bandHigh);
    caption->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    caption->setText(tr("provider variants (video)"));
    caption->setColor(QColor(0x60, 0x60, 0x60));
  }
  // Bitwise-equal rows have no bar: mark them.
  for (int i = 0; i < rows.size(); ++i) {
    if (rows.at(i).video.bitwiseEqual && rows.at(i).audio.bitwiseEqual) {
      auto* mark = new QCPItemText(m_chart);
      mark->position->setType(QCPItemPosition::ptPlotCoords);
      mark->position->setCoords(i + 1, 0);
      mark->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);  // rotated: reads upwards
      mark->setRotation(-90);
      mark->setPadding(QMargins(6, 0, 0, 0));
      mark->setText(tr("bitwise equal"));
      mark->setColor(QColor(0x1e, 0x7d, 0x32));
    }
  }
  m_chart->replot();
}

void AblationView::clearSweep(const QString& text) {
  m_resultTitle->setText(text);
  m_table->setRowCount(0);
  m_chart->clearPlottables();
  m_chart->clearItems();
  m_chart->legend->setVisible(false);
  m_chart->replot();
}

void AblationView::setRunning(bool running) {
  m_runButton->setEnabled(!running && !m_pairs.isEmpty());
  m_cancelButton->setEnabled(running);
  if (running) {
    m_progress->setValue(0);
  }
}

void AblationView::setProgress(double fraction, const QString& detail) {
  m_progress->setValue(qRound(fraction * 1000));
  m_progress->setFormat(QStringLiteral("%p % ") + detail);
}

void AblationView::setLog(const QString& text) { m_log->setPlainText(text); }

void AblationView::appendLog(const QString& text) {
  m_log->moveCursor(QTextCursor::End);
  m_log->insertPlainText(text);
  m_log->moveCursor(QTextCursor::End);
}

int AblationView::currentPair() const { return m_pairBox->currentIndex(); }

int AblationView::step() const { return m_stepBox->value(); }

QString AblationView::device() const { return m_deviceBox->currentText(); }

QStringList AblationView::checkedGroups() const {
  QStringList groups;
  for (const QCheckBox* box : m_groupBoxes) {
    if (box->isChecked()) groups.append(box->text());
  }
  return groups;
}

void AblationView::setStep(int step) { m_stepBox->setValue(step); }

void AblationView::setCheckedGroups(const QStringList& groups) {
  for (QCheckBox* box : m_groupBoxes) {
    box->setChecked(groups.contains(box->text()));
  }
}

}  // namespace h3p::ui
