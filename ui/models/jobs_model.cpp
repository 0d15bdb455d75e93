#include "ui/models/jobs_model.h"

#include <QBrush>
#include <QColor>

#include "ui/controllers/job.h"

namespace h3p::ui {

QString jobStateText(int state) {
  switch (static_cast<Job::State>(state)) {
    case Job::State::Pending:
      return QStringLiteral("pending");
    case Job::State::Running:
      return QStringLiteral("running");
    case Job::State::Succeeded:
      return QStringLiteral("succeeded");
    case Job::State::Failed:
      return QStringLiteral("failed");
    case Job::State::Cancelled:
      return QStringLiteral("cancelled");
  }
  return {};
}

JobsModel::JobsModel(QObject* parent) : QAbstractTableModel(parent) {}

void JobsModel::addJob(Job* job) {
  const int row = static_cast<int>(m_jobs.size());
  beginInsertRows({}, row, row);
  m_jobs.append(job);
  endInsertRows();
  connect(job, &Job::stateChanged, this, [this, job] { rowChanged(job); });
  connect(job, &Job::progressChanged, this, [this, job] { rowChanged(job); });
  connect(job, &QObject::destroyed, this, [this, job] {
    const int gone = static_cast<int>(m_jobs.indexOf(job));
    if (gone >= 0) {
      beginRemoveRows({}, gone, gone);
      m_jobs.removeAt(gone);
      endRemoveRows();
    }
  });
}

Job* JobsModel::jobAt(int row) const {
  return row >= 0 && row < m_jobs.size() ? m_jobs.at(row) : nullptr;
}

void JobsModel::rowChanged(Job* job) {
  const int row = static_cast<int>(m_jobs.indexOf(job));
  if (row >= 0) {
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
  }
}

int JobsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_jobs.size());
}

int JobsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant JobsModel::data(const QModelIndex& index, int role) const {
  const Job* job = index.isValid() ? jobAt(index.row()) : nullptr;
  if (job == nullptr) {
    return {};
  }
  if (role == JobRole) {
    return QVariant::fromValue(static_cast<QObject*>(const_cast<Job*>(job)));
  }
  if (role == FractionRole) {
    return job->fraction();
  }
  if (role == Qt::ForegroundRole && index.column() == StateColumn) {
    if (job->state() == Job::State::Failed) return QBrush(QColor(0xb0, 0, 0));
    if (job->state() == Job::State::Succeeded) return QBrush(QColor(0x1e, 0x7d, 0x32));
    return {};
  }
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) {
    return {};
  }
  switch (index.column()) {
    case TitleColumn:
      return job->title();
    case StateColumn:
      return jobStateText(static_cast<int>(job->state()));
    case ProgressColumn:
      return QStringLiteral("%1 %").arg(qRound(job->fraction() * 100));
    case DetailColumn:
      return job->detail();
    case CommandColumn:
      return job->commandLine();
    default:
      return {};
  }
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  static const char* const names[ColumnCount] = {"job", "state", "progress", "detail", "command"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace h3p::ui
