#include "ui/widgets/jobs_panel.h"

#include <QApplication>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/controllers/job.h"
#include "ui/models/jobs_model.h"

namespace h3p::ui {

namespace {

// Draws the progress column as a progress bar.
class ProgressDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 2, -2, -2);
    bar.minimum = 0;
    bar.maximum = 1000;
    bar.progress = qRound(index.data(JobsModel::FractionRole).toDouble() * 1000);
    bar.text = index.data().toString();
    bar.textVisible = true;
    bar.state = option.state | QStyle::State_Horizontal;
    QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, painter);
  }
};

}  // namespace

JobsPanel::JobsPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("jobsPanel"));
  m_table = new QTableView(this);
  m_table->setObjectName(QStringLiteral("jobsTable"));
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->setVisible(false);
  m_table->setItemDelegateForColumn(JobsModel::ProgressColumn, new ProgressDelegate(m_table));

  m_log = new QPlainTextEdit(this);
  m_log->setObjectName(QStringLiteral("jobLog"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(10000);
  m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  m_commandLine = new QLineEdit(this);
  m_commandLine->setObjectName(QStringLiteral("jobCommandLine"));
  m_commandLine->setPlaceholderText(tr("command line of the selected job"));
  m_cancelButton = new QPushButton(tr("Cancel"), this);
  m_cancelButton->setObjectName(QStringLiteral("jobCancelButton"));
  m_rerunButton = new QPushButton(tr("Re-run"), this);
  m_rerunButton->setObjectName(QStringLiteral("jobRerunButton"));

  auto* commandRow = new QHBoxLayout;
  commandRow->addWidget(m_commandLine, 1);
  commandRow->addWidget(m_rerunButton);
  commandRow->addWidget(m_cancelButton);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(m_table);
  splitter->addWidget(m_log);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter, 1);
  layout->addLayout(commandRow);

  connect(m_cancelButton, &QPushButton::clicked, this, [this] {
    if (Job* job = selectedJob()) emit cancelRequested(job);
  });
  connect(m_rerunButton, &QPushButton::clicked, this, [this] {
    if (Job* job = selectedJob()) emit rerunRequested(job, m_commandLine->text());
  });
  updateButtons();
}

void JobsPanel::setModel(JobsModel* model) {
  m_model = model;
  m_table->setModel(model);
  m_table->horizontalHeader()->setSectionResizeMode(JobsModel::CommandColumn, QHeaderView::Stretch);
  m_table->setColumnWidth(JobsModel::ProgressColumn, 120);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            showJob(m_model ? m_model->jobAt(current.row()) : nullptr);
          });
}

Job* JobsPanel::selectedJob() const { return m_shown.data(); }

void JobsPanel::selectJob(Job* job) {
  for (int row = 0; m_model != nullptr && row < m_model->rowCount(); ++row) {
    if (m_model->jobAt(row) == job) {
      m_table->setCurrentIndex(m_model->index(row, 0));
      showJob(job);
      return;
    }
  }
}

void JobsPanel::showJob(Job* job) {
  if (job == m_shown && job != nullptr) {
    return;
  }
  disconnect(m_logConnection);
  disconnect(m_stateConnection);
  m_shown = job;
  m_log->setPlainText(job ? job->log() : QString());
  m_commandLine->setText(job ? job->commandLine() : QString());
  if (job != nullptr) {
    m_logConnection = connect(job, &Job::logAppended, this, [this](const QString& text) {
      m_log->moveCursor(QTextCursor::End);
      m_log->insertPlainText(text);
      m_log->moveCursor(QTextCursor::End);
    });
    m_stateConnection = connect(job, &Job::stateChanged, this, &JobsPanel::updateButtons);
  }
  updateButtons();
}

void JobsPanel::updateButtons() {
  const Job* job = m_shown.data();
  m_cancelButton->setEnabled(job != nullptr && job->state() == Job::State::Running);
  m_rerunButton->setEnabled(job != nullptr && job->state() != Job::State::Running);
}

}  // namespace h3p::ui
