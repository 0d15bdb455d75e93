#pragma once

#include <QMainWindow>
#include <QPersistentModelIndex>
#include <QString>
#include <QStringList>

class QDockWidget;
class QLabel;
class QMenu;
class QModelIndex;
class QTabWidget;
class QTreeView;

namespace h3p::ui {

class AblationController;
class AblationView;
class CompareIndex;
class Job;
class JobsController;
class JobsPanel;
class PlotsView;
class RunDetailsView;
class RunsTreeModel;
class SummaryTableModel;
class SummaryView;

// The workbench's main window: the runs tree (with pass/fail badges) docked on the left with the
// selected run's details (numerics environment, segments) below it, the jobs panel docked at the
// bottom, and a tab per view in the centre: summary, review (a widget
// injected with setReviewView), plots, ablation. Opens runs directories from the command line,
// the File menu, the recent list (kept in QSettings) and by drag and drop. Lives on the UI
// thread; reads small JSON files there, runs everything long as jobs.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Shows the runs found under runsDir in the runs tree with their verdicts, refreshes the
  // ablation launcher, adds the directory to the recent list; reports the count in the status bar.
  void openRunsDirectory(const QString& runsDir);

  // Puts `view` (owned by the window from now on) in the review tab, replacing the placeholder
  // or an earlier view. When the view has a slot seek(int) it receives seekRequested; when it
  // has a signal frameChanged(int) the plots' playhead follows it.
  void setReviewView(QWidget* view);
  QWidget* reviewView() const { return m_reviewView; }

  // Selects the first non-provider run of the first seed (else the first run); false when none.
  bool selectFirstSeed();

  // Shows the tab named "summary", "review", "plots" or "ablation"; false for another name.
  bool showView(const QString& name);

  // Whether opened directories are added to the recent list (on by default; off for
  // screenshots, which must not touch the user's settings).
  void setRecentListEnabled(bool enabled) { m_recentEnabled = enabled; }

  // Recently opened runs directories, newest first (at most 8).
  QStringList recentDirectories() const;

  RunsTreeModel* runsModel() const;
  QTreeView* runsView() const;
  RunDetailsView* runDetailsView() const { return m_detailsView; }
  SummaryView* summaryView() const { return m_summaryView; }
  PlotsView* plotsView() const { return m_plotsView; }
  AblationView* ablationView() const { return m_ablationView; }
  JobsPanel* jobsPanel() const { return m_jobsPanel; }
  JobsController* jobs() const { return m_jobs; }
  AblationController* ablationController() const { return m_ablation; }
  QTabWidget* tabs() const { return m_tabs; }

 public slots:
  // Re-reads the runs directory and the comparisons (after a job, or on request).
  void refresh();
  // Starts a compare job for the selected seed (candidate against the provider of its seed).
  void compareSelected();
  // Starts a teacher-forced drift job (ablate --all-steps) for the selected seed.
  void driftSelected();
  // Starts a generate job that resumes (or checks) the selected run.
  void generateSelected();

 signals:
  // A run (seed directory) was selected in the runs tree.
  void runSelected(const QString& runDir);
  // A plot asked to show `frame` (setReviewView connects the review view's seek(int)).
  void seekRequested(int frame);
  // A non-provider run was selected that has a provider run of its contract and seed: the pair
  // to review side by side (run directories).
  void pairSelected(const QString& candidateRun, const QString& providerRun);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private slots:
  void chooseRunsDirectory();
  void onCurrentRunChanged(const QModelIndex& index);

 private:
  void createMenus();
  void createRunsDock();
  void createDetailsDock();
  void createJobsDock();
  void createTabs();
  void rememberDirectory(const QString& dir);
  void rebuildRecentMenu();
  void showSelection(const QModelIndex& index);
  // The provider run of the selected seed's contract and seed; empty when none.
  QString providerRunFor(const QModelIndex& seed) const;
  // The selected run row, or an invalid index.
  QModelIndex currentRun() const;
  void onJobFinished(Job* job);

  RunsTreeModel* m_runsModel = nullptr;
  CompareIndex* m_compareIndex = nullptr;
  SummaryTableModel* m_summaryModel = nullptr;
  JobsController* m_jobs = nullptr;
  AblationController* m_ablation = nullptr;
  QTreeView* m_runsView = nullptr;
  QDockWidget* m_runsDock = nullptr;
  RunDetailsView* m_detailsView = nullptr;
  QDockWidget* m_detailsDock = nullptr;
  QMenu* m_viewMenu = nullptr;
  QDockWidget* m_jobsDock = nullptr;
  QTabWidget* m_tabs = nullptr;
  SummaryView* m_summaryView = nullptr;
  QWidget* m_reviewView = nullptr;
  QLabel* m_reviewPlaceholder = nullptr;
  PlotsView* m_plotsView = nullptr;
  AblationView* m_ablationView = nullptr;
  JobsPanel* m_jobsPanel = nullptr;
  QMenu* m_recentMenu = nullptr;
  bool m_recentEnabled = true;
};

}  // namespace h3p::ui
