#pragma once

#include <QPointer>
#include <QWidget>

class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;

namespace h3p::ui {

class Job;
class JobsModel;

// The jobs panel: a table of jobs (what, state, a progress bar, detail, command line), the
// selected job's log and its command line (editable) with Cancel and Re-run. Dumb widget: the
// buttons emit intent signals; the window hands them to the jobs controller.
class JobsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit JobsPanel(QWidget* parent = nullptr);

  // The model to show (not owned).
  void setModel(JobsModel* model);
  // Selects the row of `job` and shows its log.
  void selectJob(Job* job);
  // The selected job, or null.
  Job* selectedJob() const;

  QTableView* table() const { return m_table; }
  QLineEdit* commandLineEdit() const { return m_commandLine; }
  QPlainTextEdit* logView() const { return m_log; }

 signals:
  void cancelRequested(h3p::ui::Job* job);
  // Start a new job from `commandLine` (the selected job's, possibly edited).
  void rerunRequested(h3p::ui::Job* job, const QString& commandLine);

 private:
  void showJob(Job* job);
  void updateButtons();

  JobsModel* m_model = nullptr;
  QTableView* m_table = nullptr;
  QPlainTextEdit* m_log = nullptr;
  QLineEdit* m_commandLine = nullptr;
  QPushButton* m_cancelButton = nullptr;
  QPushButton* m_rerunButton = nullptr;
  QPointer<Job> m_shown;
  QMetaObject::Connection m_logConnection, m_stateConnection;
};

}  // namespace h3p::ui
