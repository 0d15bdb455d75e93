#include "ui/widgets/summary_view.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/models/summary_table_model.h"

namespace h3p::ui {

namespace {

bool writeText(const QString& file, const QString& text) {
  QSaveFile out(file);
  if (!out.open(QIODevice::WriteOnly)) {
    return false;
  }
  out.write(text.toUtf8());
  return out.commit();
}

}  // namespace

SummaryView::SummaryView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("summaryView"));
  m_heading = new QLabel(tr("Select a run"), this);
  m_heading->setObjectName(QStringLiteral("runPlaceholder"));
  m_heading->setWordWrap(true);
  m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_bounds = new QLabel(this);
  m_bounds->setObjectName(QStringLiteral("summaryBounds"));
  m_table = new QTableView(this);
  m_table->setObjectName(QStringLiteral("summaryTable"));
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->verticalHeader()->setVisible(false);
  m_table->setAlternatingRowColors(true);
  m_markdownButton = new QPushButton(tr("Export Markdown…"), this);
  m_markdownButton->setObjectName(QStringLiteral("summaryMarkdownButton"));
  m_csvButton = new QPushButton(tr("Export CSV…"), this);
  m_csvButton->setObjectName(QStringLiteral("summaryCsvButton"));

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_bounds, 1);
  buttons->addWidget(m_markdownButton);
  buttons->addWidget(m_csvButton);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_heading);
  layout->addLayout(buttons);
  layout->addWidget(m_table, 1);

  connect(m_markdownButton, &QPushButton::clicked, this, [this] { chooseExport(true); });
  connect(m_csvButton, &QPushButton::clicked, this, [this] { chooseExport(false); });
}

void SummaryView::setModel(SummaryTableModel* model) {
  m_model = model;
  m_table->setModel(model);
  m_table->horizontalHeader()->setSectionResizeMode(SummaryTableModel::CandidateColumn,
                                                    QHeaderView::Stretch);
  connect(model, &QAbstractItemModel::modelReset, this, [this] {
    refreshBounds();
    m_table->resizeColumnsToContents();
  });
  refreshBounds();
}

void SummaryView::setHeading(const QString& text) { m_heading->setText(text); }

void SummaryView::refreshBounds() {
  const bool any = m_model != nullptr && m_model->rowCount() > 0;
  m_bounds->setText(any ? tr("Bounds: %1").arg(m_model->boundsText())
                        : tr("No comparisons for this selection"));
  m_markdownButton->setEnabled(any);
  m_csvButton->setEnabled(any);
}

bool SummaryView::exportMarkdown(const QString& file) const {
  return m_model != nullptr && writeText(file, m_model->toMarkdown());
}

bool SummaryView::exportCsv(const QString& file) const {
  return m_model != nullptr && writeText(file, m_model->toCsv());
}

void SummaryView::chooseExport(bool markdown) {
  const QString file =
      QFileDialog::getSaveFileName(this, markdown ? tr("Export Markdown") : tr("Export CSV"),
                                   QString(), markdown ? tr("Markdown (*.md)") : tr("CSV (*.csv)"));
  if (file.isEmpty()) {
    return;
  }
  if (!(markdown ? exportMarkdown(file) : exportCsv(file))) {
    QMessageBox::warning(this, tr("Export"), tr("%1: cannot write the file").arg(file));
  }
}

}  // namespace h3p::ui
