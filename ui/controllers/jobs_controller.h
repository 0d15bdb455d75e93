#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "ui/controllers/job.h"

namespace h3p::ui {

class JobsModel;

// Starts and keeps the workbench's jobs (generate / compare / ablate / drift), each a child
// process of the `h3parity` CLI, and the item model the jobs panel shows. Owns every job it
// started. UI thread only.
class JobsController : public QObject {
  Q_OBJECT

 public:
  explicit JobsController(QObject* parent = nullptr);

  // The CLI executable: $H3P_CLI when set, else `h3parity` next to the running executable,
  // else ../cli/h3parity (the build tree), else `h3parity` on PATH; empty when none is found.
  static QString locateCli();

  // The CLI executable used for new jobs (locateCli() unless set).
  QString cliPath() const { return m_cliPath; }
  void setCliPath(const QString& path) { m_cliPath = path; }

  // Starts `h3parity <arguments>` as a job and returns it (owned by the controller). A job
  // whose executable cannot be found fails at once with that in its log.
  Job* start(Job::Kind kind, const QStringList& arguments, const QString& resultFile = {});

  // Starts a new job from a command line as Job::commandLine() writes it (possibly edited):
  // same kind and result file as `job`. Returns the new job.
  Job* rerun(const Job* job, const QString& commandLine);

  // Jobs in start order.
  const QList<Job*>& jobs() const { return m_jobs; }
  JobsModel* model() const { return m_model; }

 signals:
  // A job was added (already started).
  void jobStarted(h3p::ui::Job* job);
  // A job ended; check job->state().
  void jobFinished(h3p::ui::Job* job);

 private:
  Job* adopt(Job* job);

  QString m_cliPath;
  QList<Job*> m_jobs;
  JobsModel* m_model = nullptr;
};

}  // namespace h3p::ui
