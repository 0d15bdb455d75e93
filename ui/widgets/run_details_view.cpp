#include "ui/widgets/run_details_view.h"

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "ui/models/run_details.h"

namespace h3p::ui {

namespace {

const QColor kMixedColour(0xc0, 0x6a, 0x00);

// The value of `field` in a flattened environment, empty when absent.
QString valueOf(const QList<RunDetailsRow>& rows, const QString& field) {
  for (const RunDetailsRow& row : rows) {
    if (row.field == field) return row.value;
  }
  return {};
}

// What changed into segment `index`: "cpu.openblas_core: Haswell -> SkylakeX", one per line.
QString changesOf(const QList<RunSegment>& segments, qsizetype index) {
  const RunSegment& segment = segments.at(index);
  QStringList lines;
  for (const QString& field : segment.changed) {
    const QString before = valueOf(segments.at(index - 1).numerics, field);
    const QString after = valueOf(segment.numerics, field);
    lines.append(QStringLiteral("%1: %2 -> %3")
                     .arg(field, before.isEmpty() ? QStringLiteral("(unset)") : before,
                          after.isEmpty() ? QStringLiteral("(unset)") : after));
  }
  return lines.join('\n');
}

}  // namespace

RunDetailsView::RunDetailsView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("runDetailsView"));
  m_heading = new QLabel(this);
  m_heading->setObjectName(QStringLiteral("runDetailsHeading"));
  m_heading->setWordWrap(true);
  m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);

  m_mixed = new QLabel(this);
  m_mixed->setObjectName(QStringLiteral("runDetailsMixed"));
  m_mixed->setWordWrap(true);
  m_mixed->setMargin(4);
  m_mixed->setStyleSheet(
      QStringLiteral("QLabel { background: %1; color: white; font-weight: bold; }")
          .arg(kMixedColour.name()));

  m_errors = new QLabel(this);
  m_errors->setObjectName(QStringLiteral("runDetailsErrors"));
  m_errors->setWordWrap(true);
  m_errors->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_errors->setStyleSheet(QStringLiteral("QLabel { color: #d03030; }"));

  m_numericsLabel = new QLabel(this);
  m_numericsLabel->setObjectName(QStringLiteral("runDetailsNumericsLabel"));
  m_numerics = new QTableWidget(0, 2, this);
  m_numerics->setObjectName(QStringLiteral("runDetailsNumerics"));
  m_numerics->setHorizontalHeaderLabels({tr("Field"), tr("Value")});
  m_numerics->verticalHeader()->setVisible(false);
  m_numerics->horizontalHeader()->setStretchLastSection(true);
  m_numerics->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_numerics->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_numerics->setAlternatingRowColors(true);
  m_numerics->setWordWrap(false);

  m_segmentsLabel = new QLabel(this);
  m_segmentsLabel->setObjectName(QStringLiteral("runDetailsSegmentsLabel"));
  m_segmentsLabel->setWordWrap(true);
  m_segments = new QListWidget(this);
  m_segments->setObjectName(QStringLiteral("runDetailsSegments"));
  m_segments->setWordWrap(true);
  m_segments->setMaximumHeight(110);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(m_heading);
  layout->addWidget(m_mixed);
  layout->addWidget(m_errors);
  layout->addWidget(m_numericsLabel);
  layout->addWidget(m_numerics, 1);
  layout->addWidget(m_segmentsLabel);
  layout->addWidget(m_segments);

  clear(tr("Select a run to see its numerics environment"));
}

void RunDetailsView::clear(const QString& message) {
  m_heading->setText(message);
  m_mixed->hide();
  m_errors->hide();
  m_numericsLabel->hide();
  m_numerics->setRowCount(0);
  m_numerics->hide();
  m_segmentsLabel->hide();
  m_segments->clear();
  m_segments->hide();
}

void RunDetailsView::setDetails(const RunDetails& details) {
  clear(QDir::toNativeSeparators(details.runDir));

  // Mixed first, where it cannot be missed.
  if (details.mixed) {
    QStringList accepted;
    for (const RunSegment& segment : details.segments) {
      if (segment.check == SegmentCheck::Accepted) accepted.append(QString::number(segment.index));
    }
    m_mixed->setText(tr("MIXED RUN: segment %1 continued under a different numerics environment "
                        "and its difference was accepted")
                         .arg(accepted.join(QStringLiteral(", "))));
    m_mixed->show();
  }

  QStringList errors = details.manifestErrors;
  if (!details.segmentsError.isEmpty()) errors.append(details.segmentsError);
  if (!errors.isEmpty()) {
    m_errors->setText(errors.join('\n'));
    m_errors->show();
  }

  m_numericsLabel->show();
  if (!details.numericsRecorded) {
    m_numericsLabel->setText(tr("Numerics environment: not recorded"));
  } else {
    m_numericsLabel->setText(tr("Numerics environment (%1 fields)").arg(details.numerics.size()));
    m_numerics->setRowCount(static_cast<int>(details.numerics.size()));
    for (int row = 0; row < details.numerics.size(); ++row) {
      const RunDetailsRow& field = details.numerics.at(row);
      auto* name = new QTableWidgetItem(field.field);
      auto* value = new QTableWidgetItem(field.value);
      value->setToolTip(field.value);
      m_numerics->setItem(row, 0, name);
      m_numerics->setItem(row, 1, value);
    }
    m_numerics->resizeColumnToContents(0);
    m_numerics->resizeRowsToContents();
    m_numerics->show();
  }

  m_segmentsLabel->show();
  if (!details.hasSegments) {
    m_segmentsLabel->setText(
        tr("One numerics environment throughout (%1 steps saved)").arg(details.savedSteps));
    return;
  }
  if (details.segments.isEmpty()) {
    m_segmentsLabel->setText(tr("Segments: segments.json could not be read"));
    return;
  }
  m_segmentsLabel->setText(tr("Segments: %1 numerics environments over %2 saved steps")
                               .arg(details.segments.size())
                               .arg(details.savedSteps));
  for (qsizetype i = 0; i < details.segments.size(); ++i) {
    const RunSegment& segment = details.segments.at(i);
    auto* item = new QListWidgetItem(segment.describe(), m_segments);
    if (i > 0) item->setToolTip(changesOf(details.segments, i));
    if (segment.check == SegmentCheck::Accepted) {
      item->setForeground(kMixedColour);
      QFont font = item->font();
      font.setBold(true);
      item->setFont(font);
    }
  }
  m_segments->show();
}

}  // namespace h3p::ui
