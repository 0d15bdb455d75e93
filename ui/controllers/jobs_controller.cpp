#include "ui/controllers/jobs_controller.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QStandardPaths>

#include "ui/models/jobs_model.h"

namespace h3p::ui {

JobsController::JobsController(QObject* parent)
    : QObject(parent), m_cliPath(locateCli()), m_model(new JobsModel(this)) {}

QString JobsController::locateCli() {
  const QString fromEnv = qEnvironmentVariable("H3P_CLI");
  if (!fromEnv.isEmpty()) {
    return fromEnv;
  }
  const QString appDir = QCoreApplication::applicationDirPath();
  for (const QString& candidate :
       {appDir + QStringLiteral("/h3parity"), appDir + QStringLiteral("/../cli/h3parity")}) {
    const QFileInfo info(candidate);
    if (info.isFile() && info.isExecutable()) {
      return info.canonicalFilePath();
    }
  }
  return QStandardPaths::findExecutable(QStringLiteral("h3parity"));
}

Job* JobsController::adopt(Job* job) {
  m_jobs.append(job);
  m_model->addJob(job);
  connect(job, &Job::finished, this, [this, job] { emit jobFinished(job); });
  emit jobStarted(job);
  job->start();
  return job;
}

Job* JobsController::start(Job::Kind kind, const QStringList& arguments,
                           const QString& resultFile) {
  const QString program = m_cliPath.isEmpty() ? QStringLiteral("h3parity") : m_cliPath;
  return adopt(new Job(kind, program, arguments, resultFile, this));
}

Job* JobsController::rerun(const Job* job, const QString& commandLine) {
  QStringList words = Job::splitCommandLine(commandLine);
  const QString program = words.isEmpty() ? job->program() : words.takeFirst();
  return adopt(new Job(job->kind(), program, words, job->resultFile(), this));
}

}  // namespace h3p::ui
