#pragma once

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include "ui/ablation/ablation_view.h"

namespace h3p::ui {

class Job;
class JobsController;
class RunsTreeModel;

// Wires the ablation launcher to the runs and the jobs: offers every candidate run with the
// provider run of its contract and seed, starts `h3parity ablate` jobs writing
// RUNS/<contract>/ablation-seed-<n>-step<k>-<time>.json (one file per sweep), follows the
// running job's progress and log, and lists and shows the sweeps on disk. UI thread only.
class AblationController : public QObject {
  Q_OBJECT

 public:
  AblationController(AblationView* view, JobsController* jobs, QObject* parent = nullptr);

  // Re-reads the run pairs from `runs` (a scanned tree) and the sweeps under its directory.
  void setRuns(const RunsTreeModel* runs);
  // Re-lists the sweeps on disk (keeps the selection).
  void refreshSweeps();

  const QList<AblationPair>& pairs() const { return m_pairs; }
  // The running ablation job, or null.
  Job* currentJob() const { return m_job; }

  // The pairs a runs tree offers: every non-provider seed with a provider run of the same
  // contract and seed ("provider" impl spec).
  static QList<AblationPair> pairsOf(const RunsTreeModel& runs);

 public slots:
  // Starts the ablation of pairs()[pair]; ignored while one runs or for a bad index.
  void run(int pair, int step, const QStringList& groups);
  void cancel();
  // Reads and shows one sweep file; a file that cannot be read shows its error.
  void showSweep(const QString& file);

 private:
  AblationView* m_view;
  JobsController* m_jobs;
  QString m_runsDir;
  QList<AblationPair> m_pairs;
  QPointer<Job> m_job;
};

}  // namespace h3p::ui
