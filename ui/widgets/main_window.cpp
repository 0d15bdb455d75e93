#include "ui/widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>
#include <QUrl>
#include <optional>

#include "core/common/error.h"
#include "ui/ablation/ablation_view.h"
#include "ui/controllers/ablation_controller.h"
#include "ui/controllers/job.h"
#include "ui/controllers/jobs_controller.h"
#include "ui/models/compare_index.h"
#include "ui/models/drift_series.h"
#include "ui/models/run_details.h"
#include "ui/models/runs_tree_model.h"
#include "ui/models/summary_table_model.h"
#include "ui/plots/plots_view.h"
#include "ui/widgets/jobs_panel.h"
#include "ui/widgets/run_details_view.h"
#include "ui/widgets/summary_view.h"

namespace h3p::ui {

namespace {

constexpr int kMaxRecent = 8;
const char* const kRecentKey = "recentRunsDirectories";

// The directory a drop carries (first local URL that is a directory), or empty.
QString droppedDirectory(const QMimeData* mime) {
  if (mime == nullptr || !mime->hasUrls()) {
    return {};
  }
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && QFileInfo(url.toLocalFile()).isDir()) {
      return url.toLocalFile();
    }
  }
  return {};
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_runsModel(new RunsTreeModel(this)),
      m_compareIndex(new CompareIndex),
      m_summaryModel(new SummaryTableModel(this)),
      m_jobs(new JobsController(this)) {
  setWindowTitle(QStringLiteral("h3parity studio"));
  setObjectName(QStringLiteral("mainWindow"));
  setAcceptDrops(true);

  createTabs();
  createMenus();
  createRunsDock();
  createDetailsDock();
  createJobsDock();
  m_ablation = new AblationController(m_ablationView, m_jobs, this);
  connect(m_jobs, &JobsController::jobFinished, this, &MainWindow::onJobFinished);
  connect(m_jobs, &JobsController::jobStarted, this, [this](Job* job) {
    m_jobsDock->show();
    m_jobsPanel->selectJob(job);
  });
  statusBar()->showMessage(tr("No runs directory open"));
  resize(1280, 800);
}

MainWindow::~MainWindow() { delete m_compareIndex; }

void MainWindow::createTabs() {
  m_tabs = new QTabWidget(this);
  m_tabs->setObjectName(QStringLiteral("viewTabs"));
  m_tabs->setDocumentMode(true);

  m_summaryView = new SummaryView(m_tabs);
  m_summaryView->setModel(m_summaryModel);
  m_tabs->addTab(m_summaryView, tr("Summary"));

  m_reviewPlaceholder = new QLabel(tr("Review: choose a seed in the runs tree"), m_tabs);
  m_reviewPlaceholder->setObjectName(QStringLiteral("reviewPlaceholder"));
  m_reviewPlaceholder->setAlignment(Qt::AlignCenter);
  m_tabs->addTab(m_reviewPlaceholder, tr("Review"));

  m_plotsView = new PlotsView(m_tabs);
  m_tabs->addTab(m_plotsView, tr("Plots"));
  connect(m_plotsView, &PlotsView::seekRequested, this, &MainWindow::seekRequested);
  // A seek from the plots shows the review where the frame is.
  connect(m_plotsView, &PlotsView::seekRequested, this, [this] {
    if (m_reviewView != nullptr) m_tabs->setCurrentWidget(m_reviewView);
  });

  m_ablationView = new AblationView(m_tabs);
  m_tabs->addTab(m_ablationView, tr("Ablation"));
  setCentralWidget(m_tabs);
}

void MainWindow::setReviewView(QWidget* view) {
  const int index = m_tabs->indexOf(m_reviewView != nullptr ? m_reviewView : m_reviewPlaceholder);
  m_tabs->removeTab(index);
  if (m_reviewView != nullptr) {
    m_reviewView->deleteLater();
  } else {
    m_reviewPlaceholder->hide();
  }
  m_reviewView = view;
  m_tabs->insertTab(index, view, tr("Review"));

  // Wire by name what the view offers, so that the window needs no review header: the plots'
  // seeks drive its seek(int), its frameChanged(int) moves the plots' playhead.
  const QMetaObject* meta = view->metaObject();
  if (meta->indexOfSlot("seek(int)") >= 0) {
    connect(this, SIGNAL(seekRequested(int)), view, SLOT(seek(int)));
  }
  if (meta->indexOfSignal("frameChanged(int)") >= 0) {
    connect(view, SIGNAL(frameChanged(int)), m_plotsView, SLOT(setPlayhead(int)));
  }
}

void MainWindow::createMenus() {
  QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
  fileMenu->setObjectName(QStringLiteral("fileMenu"));

  QAction* openAction = fileMenu->addAction(tr("&Open runs directory…"));
  openAction->setObjectName(QStringLiteral("openRunsAction"));
  openAction->setShortcut(QKeySequence::Open);
  connect(openAction, &QAction::triggered, this, &MainWindow::chooseRunsDirectory);

  m_recentMenu = fileMenu->addMenu(tr("Open &recent"));
  m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
  rebuildRecentMenu();

  QAction* refreshAction = fileMenu->addAction(tr("Re&fresh"));
  refreshAction->setObjectName(QStringLiteral("refreshAction"));
  refreshAction->setShortcut(QKeySequence::Refresh);
  connect(refreshAction, &QAction::triggered, this, &MainWindow::refresh);

  fileMenu->addSeparator();
  QAction* quitAction = fileMenu->addAction(tr("&Quit"));
  quitAction->setObjectName(QStringLiteral("quitAction"));
  quitAction->setShortcut(QKeySequence::Quit);
  connect(quitAction, &QAction::triggered, this, &QWidget::close);

  QMenu* jobsMenu = menuBar()->addMenu(tr("&Jobs"));
  jobsMenu->setObjectName(QStringLiteral("jobsMenu"));
  QAction* compare = jobsMenu->addAction(tr("&Compare selected seed"));
  compare->setObjectName(QStringLiteral("compareAction"));
  connect(compare, &QAction::triggered, this, &MainWindow::compareSelected);
  QAction* drift = jobsMenu->addAction(tr("&Teacher-forced drift of selected seed"));
  drift->setObjectName(QStringLiteral("driftAction"));
  connect(drift, &QAction::triggered, this, &MainWindow::driftSelected);
  QAction* generate = jobsMenu->addAction(tr("&Generate (resume) selected run"));
  generate->setObjectName(QStringLiteral("generateAction"));
  connect(generate, &QAction::triggered, this, &MainWindow::generateSelected);

  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  viewMenu->setObjectName(QStringLiteral("viewMenu"));
  m_viewMenu = viewMenu;
  const QStringList names{QStringLiteral("summary"), QStringLiteral("review"),
                          QStringLiteral("plots"), QStringLiteral("ablation")};
  for (int i = 0; i < names.size(); ++i) {
    QAction* action = viewMenu->addAction(m_tabs->tabText(i));
    action->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + i)));
    const QString name = names.at(i);
    connect(action, &QAction::triggered, this, [this, name] { showView(name); });
  }
}

void MainWindow::createRunsDock() {
  m_runsView = new QTreeView(this);
  m_runsView->setObjectName(QStringLiteral("runsView"));
  m_runsView->setModel(m_runsModel);
  m_runsView->setHeaderHidden(true);
  m_runsView->setUniformRowHeights(true);
  m_runsView->setSelectionMode(QAbstractItemView::SingleSelection);
  connect(m_runsView->selectionModel(), &QItemSelectionModel::currentChanged, this,
          &MainWindow::onCurrentRunChanged);

  m_runsDock = new QDockWidget(tr("Runs"), this);
  m_runsDock->setObjectName(QStringLiteral("runsDock"));
  m_runsDock->setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);
  m_runsDock->setWidget(m_runsView);
  addDockWidget(Qt::LeftDockWidgetArea, m_runsDock);
  resizeDocks({m_runsDock}, {300}, Qt::Horizontal);
}

void MainWindow::createDetailsDock() {
  m_detailsView = new RunDetailsView(this);
  m_detailsDock = new QDockWidget(tr("Run details"), this);
  m_detailsDock->setObjectName(QStringLiteral("runDetailsDock"));
  m_detailsDock->setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);
  m_detailsDock->setWidget(m_detailsView);
  addDockWidget(Qt::LeftDockWidgetArea, m_detailsDock);
  // Below the runs tree, in its column.
  splitDockWidget(m_runsDock, m_detailsDock, Qt::Vertical);
  resizeDocks({m_runsDock, m_detailsDock}, {240, 560}, Qt::Vertical);
  m_viewMenu->addSeparator();
  QAction* toggle = m_detailsDock->toggleViewAction();
  toggle->setObjectName(QStringLiteral("runDetailsAction"));
  m_viewMenu->addAction(toggle);
}

void MainWindow::createJobsDock() {
  m_jobsPanel = new JobsPanel(this);
  m_jobsPanel->setModel(m_jobs->model());
  connect(m_jobsPanel, &JobsPanel::cancelRequested, this, [](Job* job) { job->cancel(); });
  connect(m_jobsPanel, &JobsPanel::rerunRequested, this,
          [this](Job* job, const QString& commandLine) { m_jobs->rerun(job, commandLine); });
  m_jobsDock = new QDockWidget(tr("Jobs"), this);
  m_jobsDock->setObjectName(QStringLiteral("jobsDock"));
  m_jobsDock->setWidget(m_jobsPanel);
  addDockWidget(Qt::BottomDockWidgetArea, m_jobsDock);
  resizeDocks({m_jobsDock}, {170}, Qt::Vertical);
}

void MainWindow::openRunsDirectory(const QString& runsDir) {
  const int runs = m_runsModel->scan(runsDir);
  m_compareIndex->load(m_runsModel->runsDirectory(), m_runsModel->runDirectories());
  m_runsModel->applyVerdicts(*m_compareIndex);
  m_runsView->expandAll();
  m_summaryView->setHeading(tr("Select a run"));
  m_summaryModel->setResults(m_compareIndex->all());
  m_plotsView->clear(tr("Select a seed to plot its comparisons"));
  m_detailsView->clear(tr("Select a run to see its numerics environment"));
  m_ablation->setRuns(m_runsModel);
  const QString shown = QDir::toNativeSeparators(m_runsModel->runsDirectory());
  if (!QFileInfo(m_runsModel->runsDirectory()).isDir()) {
    statusBar()->showMessage(tr("%1: not a directory").arg(shown));
    return;
  }
  rememberDirectory(m_runsModel->runsDirectory());
  const QString count = runs == 1 ? tr("1 run") : tr("%1 runs").arg(runs);
  QString message = tr("%1: %2, %3 comparisons").arg(shown, count).arg(m_compareIndex->size());
  if (!m_compareIndex->errors().isEmpty()) {
    message += tr(" (%1 unreadable: %2)")
                   .arg(m_compareIndex->errors().size())
                   .arg(m_compareIndex->errors().front());
  }
  statusBar()->showMessage(message);
}

void MainWindow::refresh() {
  // Keep the selection by path across the rescan.
  const QString selected = m_runsView->currentIndex().data(RunsTreeModel::PathRole).toString();
  openRunsDirectory(m_runsModel->runsDirectory());
  if (selected.isEmpty()) return;
  const QModelIndexList found =
      m_runsModel->match(m_runsModel->index(0, 0), RunsTreeModel::PathRole, selected, 1,
                         Qt::MatchExactly | Qt::MatchRecursive);
  if (!found.isEmpty()) m_runsView->setCurrentIndex(found.front());
}

RunsTreeModel* MainWindow::runsModel() const { return m_runsModel; }

QTreeView* MainWindow::runsView() const { return m_runsView; }

QStringList MainWindow::recentDirectories() const {
  return QSettings().value(QLatin1String(kRecentKey)).toStringList();
}

void MainWindow::rememberDirectory(const QString& dir) {
  if (!m_recentEnabled) {
    return;
  }
  QStringList recent = recentDirectories();
  recent.removeAll(dir);
  recent.prepend(dir);
  while (recent.size() > kMaxRecent) recent.removeLast();
  QSettings().setValue(QLatin1String(kRecentKey), recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList recent = recentDirectories();
  for (const QString& dir : recent) {
    QAction* action = m_recentMenu->addAction(QDir::toNativeSeparators(dir));
    connect(action, &QAction::triggered, this, [this, dir] { openRunsDirectory(dir); });
  }
  m_recentMenu->setEnabled(!recent.isEmpty());
}

bool MainWindow::selectFirstSeed() {
  QModelIndex fallback;
  for (int c = 0; c < m_runsModel->rowCount(); ++c) {
    const QModelIndex contract = m_runsModel->index(c, 0);
    for (int s = 0; s < m_runsModel->rowCount(contract); ++s) {
      const QModelIndex seed = m_runsModel->index(s, 0, contract);
      for (int r = 0; r < m_runsModel->rowCount(seed); ++r) {
        const QModelIndex run = m_runsModel->index(r, 0, seed);
        if (run.data(RunsTreeModel::ImplSpecRole).toString() != QLatin1String("provider")) {
          m_runsView->setCurrentIndex(run);
          return true;
        }
        if (!fallback.isValid()) fallback = run;
      }
    }
  }
  if (fallback.isValid()) m_runsView->setCurrentIndex(fallback);
  return fallback.isValid();
}

bool MainWindow::showView(const QString& name) {
  QWidget* widget = nullptr;
  if (name == QLatin1String("summary")) widget = m_summaryView;
  if (name == QLatin1String("review"))
    widget = m_reviewView != nullptr ? m_reviewView : m_reviewPlaceholder;
  if (name == QLatin1String("plots")) widget = m_plotsView;
  if (name == QLatin1String("ablation")) widget = m_ablationView;
  if (widget == nullptr) return false;
  m_tabs->setCurrentWidget(widget);
  return true;
}

void MainWindow::chooseRunsDirectory() {
  const QString start =
      m_runsModel->runsDirectory().isEmpty() ? QDir::currentPath() : m_runsModel->runsDirectory();
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Open runs directory"), start);
  if (!dir.isEmpty()) {
    openRunsDirectory(dir);
  }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedDirectory(event->mimeData()).isEmpty()) {
    event->acceptProposedAction();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString dir = droppedDirectory(event->mimeData());
  if (!dir.isEmpty()) {
    event->acceptProposedAction();
    openRunsDirectory(dir);
  }
}

QModelIndex MainWindow::currentRun() const {
  const QModelIndex index = m_runsView->currentIndex();
  if (!index.isValid() ||
      index.data(RunsTreeModel::KindRole).toInt() != static_cast<int>(RunsTreeModel::Kind::Run)) {
    return {};
  }
  return index;
}

QString MainWindow::providerRunFor(const QModelIndex& seed) const {
  const QString contract = seed.data(RunsTreeModel::ContractRole).toString();
  const qint64 number = seed.data(RunsTreeModel::SeedRole).toLongLong();
  const QModelIndexList found =
      m_runsModel->match(m_runsModel->index(0, 0), RunsTreeModel::ImplSpecRole,
                         QStringLiteral("provider"), -1, Qt::MatchExactly | Qt::MatchRecursive);
  for (const QModelIndex& index : found) {
    if (index.data(RunsTreeModel::KindRole).toInt() == static_cast<int>(RunsTreeModel::Kind::Run) &&
        index.data(RunsTreeModel::ContractRole).toString() == contract &&
        index.data(RunsTreeModel::SeedRole).toLongLong() == number) {
      return index.data(RunsTreeModel::PathRole).toString();
    }
  }
  return {};
}

void MainWindow::onCurrentRunChanged(const QModelIndex& index) {
  showSelection(index);
  if (!index.isValid() ||
      index.data(RunsTreeModel::KindRole).toInt() != static_cast<int>(RunsTreeModel::Kind::Run)) {
    m_detailsView->clear(tr("Select a run to see its numerics environment"));
    return;
  }
  const QString runDir = index.data(RunsTreeModel::PathRole).toString();
  m_detailsView->setDetails(readRunDetails(runDir));
  statusBar()->showMessage(QDir::toNativeSeparators(runDir));
  emit runSelected(runDir);
  const QString provider = providerRunFor(index);
  if (!provider.isEmpty() && provider != runDir) {
    emit pairSelected(runDir, provider);
  }
}

void MainWindow::showSelection(const QModelIndex& index) {
  if (!index.isValid()) {
    return;
  }
  const auto kind = static_cast<RunsTreeModel::Kind>(index.data(RunsTreeModel::KindRole).toInt());
  const QString contract = index.data(RunsTreeModel::ContractRole).toString();
  if (kind == RunsTreeModel::Kind::Contract) {
    QList<CompareResult> results;
    for (const CompareResult& result : m_compareIndex->all()) {
      if (result.candidate.contract == contract) {
        results.append(result);
      }
    }
    m_summaryModel->setResults(results);
    m_summaryView->setHeading(
        tr("%1 — %2 comparisons").arg(index.data().toString()).arg(results.size()));
    return;
  }

  // A seed or one of its runs: the seed's comparisons (the candidate and every provider
  // variant of the seed).
  const qint64 seed = index.data(RunsTreeModel::SeedRole).toLongLong();
  const QList<CompareResult> results = m_compareIndex->forSeed(contract, seed);
  QString heading =
      kind == RunsTreeModel::Kind::Seed
          ? tr("%1, seed %2: %3 run(s)")
                .arg(contract)
                .arg(seed)
                .arg(m_runsModel->itemFromIndex(index)->rowCount())
          : tr("%1\nseed %2\n%3")
                .arg(index.data(RunsTreeModel::ImplSpecRole).toString())
                .arg(seed)
                .arg(QDir::toNativeSeparators(index.data(RunsTreeModel::PathRole).toString()));
  const QString error = index.data(RunsTreeModel::ManifestErrorRole).toString();
  if (!error.isEmpty()) {
    heading += '\n' + error;
  }
  m_summaryView->setHeading(heading);
  m_summaryModel->setResults(results);

  std::optional<DriftSeries> teacher;
  const QString driftFile = driftFilePath(m_runsModel->runsDirectory(), contract, seed);
  if (QFileInfo::exists(driftFile)) {
    try {
      teacher = readDriftFile(driftFile);
    } catch (const h3p::Error& e) {
      statusBar()->showMessage(QString::fromStdString(e.what()));
    }
  }
  if (results.isEmpty() && !teacher.has_value()) {
    m_plotsView->clear(tr("%1 seed %2: no comparisons yet (Jobs → Compare selected seed)")
                           .arg(contract)
                           .arg(seed));
  } else {
    m_plotsView->setSeedData(tr("%1, seed %2: %3 comparison(s) against the provider%4")
                                 .arg(contract)
                                 .arg(seed)
                                 .arg(results.size())
                                 .arg(teacher ? tr(", teacher-forced drift") : QString()),
                             results, teacher);
  }
}

void MainWindow::compareSelected() {
  const QModelIndex seed = currentRun();
  const QString provider = seed.isValid() ? providerRunFor(seed) : QString();
  const QString candidate = seed.data(RunsTreeModel::PathRole).toString();
  if (provider.isEmpty() || provider == candidate) {
    statusBar()->showMessage(tr("Compare: select a non-provider seed that has a provider run"));
    return;
  }
  const QString out = candidate + QStringLiteral("/metrics/compare.json");
  m_jobs->start(Job::Kind::Compare,
                {QStringLiteral("compare"), QStringLiteral("--candidate"), candidate,
                 QStringLiteral("--provider"), provider, QStringLiteral("--json"), out},
                out);
}

void MainWindow::driftSelected() {
  const QModelIndex seed = currentRun();
  const QString provider = seed.isValid() ? providerRunFor(seed) : QString();
  const QString candidate = seed.data(RunsTreeModel::PathRole).toString();
  if (provider.isEmpty() || provider == candidate) {
    statusBar()->showMessage(tr("Drift: select a non-provider seed that has a provider run"));
    return;
  }
  const QString out =
      driftFilePath(m_runsModel->runsDirectory(), seed.data(RunsTreeModel::ContractRole).toString(),
                    seed.data(RunsTreeModel::SeedRole).toLongLong());
  m_jobs->start(Job::Kind::Drift,
                {QStringLiteral("ablate"), QStringLiteral("--candidate"), candidate,
                 QStringLiteral("--provider"), provider, QStringLiteral("--all-steps"),
                 QStringLiteral("--json"), out},
                out);
}

void MainWindow::generateSelected() {
  const QModelIndex seed = currentRun();
  const QString run = seed.data(RunsTreeModel::PathRole).toString();
  const QString contract = run + QStringLiteral("/contract.json");
  if (!seed.isValid() || !QFileInfo::exists(contract)) {
    statusBar()->showMessage(tr("Generate: select a run that holds its contract.json"));
    return;
  }
  m_jobs->start(
      Job::Kind::Generate,
      {QStringLiteral("generate"), QStringLiteral("--contract"), contract, QStringLiteral("--impl"),
       seed.data(RunsTreeModel::ImplSpecRole).toString(), QStringLiteral("--seed"),
       QString::number(seed.data(RunsTreeModel::SeedRole).toLongLong()), QStringLiteral("--runs"),
       m_runsModel->runsDirectory()});
}

void MainWindow::onJobFinished(Job* job) {
  statusBar()->showMessage(tr("%1: %2").arg(
      job->title(), job->state() == Job::State::Succeeded ? tr("done") : tr("not completed")));
  if (job->state() == Job::State::Succeeded && job->kind() != Job::Kind::Ablate) {
    refresh();
  }
}

}  // namespace h3p::ui
