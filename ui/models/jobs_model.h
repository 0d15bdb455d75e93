#pragma once

#include <QAbstractTableModel>
#include <QList>

namespace h3p::ui {

class Job;

// Table of jobs for the jobs panel: what, state, progress, detail, command line. Rows follow
// the jobs' signals; a row's job pointer is under JobRole. Does not own the jobs.
class JobsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    TitleColumn,
    StateColumn,
    ProgressColumn,
    DetailColumn,
    CommandColumn,
    ColumnCount
  };
  enum Role {
    JobRole = Qt::UserRole + 1,  // Job* (as QObject*)
    FractionRole,                // double in [0, 1]
  };

  explicit JobsModel(QObject* parent = nullptr);

  // Appends a row for `job` and follows its updates.
  void addJob(Job* job);
  // The job of a row, or null.
  Job* jobAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void rowChanged(Job* job);
  QList<Job*> m_jobs;
};

// "running", "succeeded", ... for a job state.
QString jobStateText(int state);

}  // namespace h3p::ui
