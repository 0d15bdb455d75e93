#include "ui/controllers/ablation_controller.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QListWidget>

#include "core/common/error.h"
#include "ui/controllers/job.h"
#include "ui/controllers/jobs_controller.h"
#include "ui/models/runs_tree_model.h"

namespace h3p::ui {

namespace {

// Consecutive saved steps of a run (sidecars steps/NNN.json from 000).
int savedSteps(const QString& runDir) {
  int count = 0;
  while (QFileInfo::exists(runDir +
                           QStringLiteral("/steps/%1.json").arg(count, 3, 10, QLatin1Char('0')))) {
    ++count;
  }
  return count;
}

}  // namespace

AblationController::AblationController(AblationView* view, JobsController* jobs, QObject* parent)
    : QObject(parent), m_view(view), m_jobs(jobs) {
  connect(m_view, &AblationView::runRequested, this, &AblationController::run);
  connect(m_view, &AblationView::cancelRequested, this, &AblationController::cancel);
  connect(m_view, &AblationView::showSweepRequested, this, &AblationController::showSweep);
  // Any ablate job (also one re-run from the jobs panel) may have added a sweep.
  connect(m_jobs, &JobsController::jobFinished, this, [this](Job* job) {
    if (job->kind() == Job::Kind::Ablate) {
      refreshSweeps();
    }
  });
}

QList<AblationPair> AblationController::pairsOf(const RunsTreeModel& runs) {
  struct SeedRow {
    QString contract, implSpec, path;
    qint64 seed;
  };
  QList<SeedRow> rows;
  QHash<QString, QString> providerBySeed;  // "<contract>\n<seed>" -> provider run
  for (int c = 0; c < runs.rowCount(); ++c) {
    const QStandardItem* contract = runs.item(c);
    for (int i = 0; i < contract->rowCount(); ++i) {
      const QStandardItem* seedGroup = contract->child(i);
      for (int r = 0; r < seedGroup->rowCount(); ++r) {
        const QStandardItem* seed = seedGroup->child(r);
        SeedRow row{seed->data(RunsTreeModel::ContractRole).toString(),
                    seed->data(RunsTreeModel::ImplSpecRole).toString(),
                    seed->data(RunsTreeModel::PathRole).toString(),
                    seed->data(RunsTreeModel::SeedRole).toLongLong()};
        if (row.implSpec == QLatin1String("provider")) {
          providerBySeed.insert(row.contract + '\n' + QString::number(row.seed), row.path);
        } else {
          rows.append(row);
        }
      }
    }
  }
  QList<AblationPair> pairs;
  for (const SeedRow& row : rows) {
    const QString provider = providerBySeed.value(row.contract + '\n' + QString::number(row.seed));
    if (provider.isEmpty()) {
      continue;
    }
    pairs.append(
        {QStringLiteral("%1 seed %2: %3").arg(row.contract).arg(row.seed).arg(row.implSpec),
         row.path, provider, savedSteps(provider)});
  }
  return pairs;
}

void AblationController::setRuns(const RunsTreeModel* runs) {
  m_runsDir = runs->runsDirectory();
  m_pairs = pairsOf(*runs);
  m_view->setPairs(m_pairs);
  refreshSweeps();
}

void AblationController::refreshSweeps() {
  const QStringList files = findAblationFiles(m_runsDir);
  QStringList labels;
  for (const QString& file : files) {
    try {
      labels.append(readAblationFile(file).label());
    } catch (const h3p::Error& error) {
      labels.append(QFileInfo(file).fileName() + QStringLiteral(" (unreadable)"));
    }
  }
  m_view->setSweeps(labels, files);
  // Nothing chosen yet: show the newest sweep.
  if (m_view->sweepList()->currentRow() < 0 && !files.isEmpty()) {
    m_view->selectSweep(files.front());
  }
}

void AblationController::run(int pair, int step, const QStringList& groups) {
  if (m_job != nullptr || pair < 0 || pair >= m_pairs.size()) {
    return;
  }
  const AblationPair& chosen = m_pairs.at(pair);
  const QString contractDir =
      QFileInfo(chosen.providerRun + QStringLiteral("/../..")).canonicalFilePath();
  const QString seedDir = QFileInfo(chosen.candidateRun).fileName();  // seed-<n>
  const QString file =
      contractDir +
      QStringLiteral("/ablation-%1-step%2-%3.json")
          .arg(seedDir)
          .arg(step)
          .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  QStringList arguments{QStringLiteral("ablate"), QStringLiteral("--candidate"),
                        chosen.candidateRun,      QStringLiteral("--provider"),
                        chosen.providerRun,       QStringLiteral("--step"),
                        QString::number(step)};
  if (!groups.isEmpty()) {
    arguments << QStringLiteral("--groups") << groups.join(QLatin1Char(','));
  }
  arguments << QStringLiteral("--device") << m_view->device();
  arguments << QStringLiteral("--json") << file;

  Job* job = m_jobs->start(Job::Kind::Ablate, arguments, file);
  m_job = job;
  m_view->setRunning(job->state() == Job::State::Running);
  m_view->setLog(job->log());
  connect(job, &Job::progressChanged, m_view, &AblationView::setProgress);
  connect(job, &Job::logAppended, m_view, &AblationView::appendLog);
  connect(job, &Job::finished, this, [this, job] {
    if (m_job == job) {
      m_job = nullptr;
    }
    m_view->setRunning(false);
    refreshSweeps();
    if (job->state() == Job::State::Succeeded) {
      m_view->selectSweep(job->resultFile());
    }
  });
  if (job->state() != Job::State::Running) {  // could not start
    m_job = nullptr;
    m_view->setRunning(false);
  }
}

void AblationController::cancel() {
  if (m_job != nullptr) {
    m_job->cancel();
  }
}

void AblationController::showSweep(const QString& file) {
  try {
    m_view->showSweep(readAblationFile(file));
  } catch (const h3p::Error& error) {
    m_view->clearSweep(QString::fromStdString(error.what()));
  }
}

}  // namespace h3p::ui
