// MainWindow: opens with its title, menus, runs dock and placeholder; selecting a run updates it;
// the view tabs with an injected review view; seeks from the plots; drag and drop; the recent
// list; verdicts and the summary from compare files; compare jobs from the menu.
#include "ui/widgets/main_window.h"

#include <qcustomplot.h>

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QUrl>
#include <QtTest>

#include "compare_fixture.h"
#include "run_tree_fixture.h"
#include "ui/controllers/job.h"
#include "ui/controllers/jobs_controller.h"
#include "ui/models/jobs_model.h"
#include "ui/models/runs_tree_model.h"
#include "ui/models/summary_table_model.h"
#include "ui/plots/frame_metrics_plot.h"
#include "ui/plots/plots_view.h"
#include "ui/widgets/summary_view.h"

using h3p::ui::MainWindow;

// Stands in for the review view: the seek slot and frameChanged signal the window wires by name.
class FakeReview : public QWidget {
  Q_OBJECT

 public:
  int lastSeek = -1;

 public slots:
  void seek(int frame) { lastSeek = frame; }

 signals:
  void frameChanged(int frame);
};
using h3p::ui::RunsTreeModel;

class MainWindowTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_settings;
  // RUNS/c/{provider,candidate}/seed-{1,2}; seed 2's comparison fails its bounds.
  QString makeComparedRuns(const QTemporaryDir& dir);

 private slots:
  void initTestCase();
  void opensWithTitleMenusAndPlaceholder();
  void tabsTakeAnInjectedReviewView();
  void reviewViewIsWiredToThePlotsAndTheSelection();
  void verdictsSummaryAndPlotsFollowTheSelection();
  void plotClickEmitsSeekRequested();
  void droppedDirectoryOpens();
  void recentListKeepsNewestFirst();
  void compareJobFromTheMenu();
  void openRunsDirectoryFillsTreeAndStatus();
  void selectingSeedEmitsRunSelected();
};

void MainWindowTest::opensWithTitleMenusAndPlaceholder() {
  MainWindow window;
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QCOMPARE(window.windowTitle(), QString("h3parity studio"));

  QVERIFY(window.findChild<QAction*>("openRunsAction") != nullptr);
  QVERIFY(window.findChild<QAction*>("quitAction") != nullptr);
  const auto* dock = window.findChild<QDockWidget*>("runsDock");
  QVERIFY(dock != nullptr);
  QCOMPARE(window.dockWidgetArea(const_cast<QDockWidget*>(dock)), Qt::LeftDockWidgetArea);
  const auto* placeholder = window.findChild<QLabel*>("runPlaceholder");
  QVERIFY(placeholder != nullptr);
  QCOMPARE(placeholder->text(), QString("Select a run"));
  QVERIFY(window.statusBar() != nullptr);

  // Quit closes the window.
  window.findChild<QAction*>("quitAction")->trigger();
  QVERIFY(!window.isVisible());
}

void MainWindowTest::openRunsDirectoryFillsTreeAndStatus() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  using h3p::ui::test::manifestFor;
  QVERIFY(!h3p::ui::test::writeRun(runs.path(), "c", "provider", 3, manifestFor("provider", 3))
               .isEmpty());
  QVERIFY(!h3p::ui::test::writeRun(runs.path(), "c", "candidate", 3, manifestFor("candidate", 3))
               .isEmpty());

  MainWindow window;
  window.openRunsDirectory(runs.path());
  QCOMPARE(window.runsModel()->runCount(), 2);
  QCOMPARE(window.runsView()->model(), window.runsModel());
  QVERIFY2(window.statusBar()->currentMessage().contains("2 run"),
           qPrintable(window.statusBar()->currentMessage()));

  window.openRunsDirectory(runs.path() + "/missing");
  QCOMPARE(window.runsModel()->rowCount(), 0);
  QVERIFY2(window.statusBar()->currentMessage().contains("not a directory"),
           qPrintable(window.statusBar()->currentMessage()));
}

void MainWindowTest::selectingSeedEmitsRunSelected() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString runDir = h3p::ui::test::writeRun(runs.path(), "c", "provider", 9,
                                                 h3p::ui::test::manifestFor("provider", 9));
  QVERIFY(!runDir.isEmpty());

  MainWindow window;
  window.openRunsDirectory(runs.path());
  QSignalSpy spy(&window, &MainWindow::runSelected);

  // Selecting a contract row is not a run.
  const QModelIndex contract = window.runsModel()->index(0, 0);
  window.runsView()->setCurrentIndex(contract);
  QCOMPARE(spy.count(), 0);

  const QModelIndex seed =
      window.runsModel()->index(0, 0, window.runsModel()->index(0, 0, contract));
  QCOMPARE(seed.data(RunsTreeModel::SeedRole).toLongLong(), 9);
  window.runsView()->setCurrentIndex(seed);
  QCOMPARE(spy.count(), 1);
  QCOMPARE(QDir(spy.at(0).at(0).toString()).absolutePath(), QDir(runDir).absolutePath());
  const auto* placeholder = window.findChild<QLabel*>("runPlaceholder");
  QVERIFY(placeholder->text().contains("seed 9"));
}

void MainWindowTest::initTestCase() {
  // Keep the recent list away from the user's settings.
  QCoreApplication::setOrganizationName(QStringLiteral("h3parity-test"));
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settings.path());
}

QString MainWindowTest::makeComparedRuns(const QTemporaryDir& dir) {
  using h3p::ui::test::manifestFor;
  using h3p::ui::test::writeRun;
  for (qint64 seed : {1, 2}) {
    writeRun(dir.path(), "c", "provider", seed, manifestFor("provider", seed));
    writeRun(dir.path(), "c", "candidate", seed, manifestFor("candidate", seed));
    h3p::ui::test::CompareFigures figures;
    figures.seed = seed;
    figures.frames = 30;
    figures.ssim = seed == 2 ? 0.9 : 0.999;
    h3p::ui::test::writeJson(
        dir.filePath(QStringLiteral("report/comparisons/c/candidate/seed-%1.json").arg(seed)),
        h3p::ui::test::compareObject(figures));
  }
  return dir.path();
}

void MainWindowTest::tabsTakeAnInjectedReviewView() {
  MainWindow window;
  QTabWidget* tabs = window.tabs();
  QCOMPARE(tabs->count(), 4);
  QCOMPARE(tabs->tabText(1), QString("Review"));
  auto* review = new QLabel("review");
  window.setReviewView(review);
  QCOMPARE(tabs->count(), 4);
  QCOMPARE(tabs->widget(1), review);
  QCOMPARE(window.reviewView(), review);
  QVERIFY(window.showView("review"));
  QCOMPARE(tabs->currentWidget(), review);
  QVERIFY(window.showView("ablation"));
  QCOMPARE(tabs->currentIndex(), 3);
  QVERIFY(!window.showView("nonsense"));
  // A second view replaces the first.
  QPointer<QLabel> first(review);
  window.setReviewView(new QLabel("second"));
  QCOMPARE(tabs->count(), 4);
  QCOMPARE(qobject_cast<QLabel*>(tabs->widget(1))->text(), QString("second"));
  QTRY_VERIFY(first.isNull());
}

void MainWindowTest::reviewViewIsWiredToThePlotsAndTheSelection() {
  QTemporaryDir runs;
  MainWindow window;
  window.openRunsDirectory(makeComparedRuns(runs));
  auto* review = new FakeReview;
  window.setReviewView(review);
  QSignalSpy pairs(&window, &MainWindow::pairSelected);
  QVERIFY(window.selectFirstSeed());
  QCOMPARE(pairs.count(), 1);
  QCOMPARE(pairs.at(0).at(0).toString(), runs.path() + "/c/candidate/seed-1");
  QCOMPARE(pairs.at(0).at(1).toString(), runs.path() + "/c/provider/seed-1");

  // A click in the frame plot seeks the review and shows its tab.
  emit window.plotsView()->framePlot()->seekRequested(12);
  QCOMPARE(review->lastSeek, 12);
  QCOMPARE(window.tabs()->currentWidget(), review);
  // Playback moves the plots' playhead.
  emit review->frameChanged(21);
  QCOMPARE(window.plotsView()->framePlot()->playhead(), 21);

  // Selecting the provider run itself is no pair.
  window.runsView()->setCurrentIndex(window.runsModel()->index(
      0, 0, window.runsModel()->index(0, 0, window.runsModel()->index(0, 0))));
  QCOMPARE(pairs.count(), 1);
}

void MainWindowTest::verdictsSummaryAndPlotsFollowTheSelection() {
  QTemporaryDir runs;
  MainWindow window;
  window.openRunsDirectory(makeComparedRuns(runs));
  QVERIFY2(window.statusBar()->currentMessage().contains("4 runs, 2 comparisons"),
           qPrintable(window.statusBar()->currentMessage()));
  const QModelIndex contract = window.runsModel()->index(0, 0);
  QCOMPARE(contract.data(RunsTreeModel::VerdictRole).toInt(),
           static_cast<int>(RunsTreeModel::Verdict::Fail));
  // Before a seed is chosen the summary lists every comparison.
  auto* summary = qobject_cast<h3p::ui::SummaryTableModel*>(window.summaryView()->table()->model());
  QCOMPARE(summary->rowCount(), 2);

  QVERIFY(window.selectFirstSeed());
  const QModelIndex seed = window.runsView()->currentIndex();
  QCOMPARE(seed.data(RunsTreeModel::ImplSpecRole).toString(), QString("candidate"));
  QCOMPARE(seed.data(RunsTreeModel::SeedRole).toLongLong(), 1);
  QCOMPARE(summary->rowCount(), 1);
  QCOMPARE(window.plotsView()->framePlot()->frameCount(), 30);

  // Seed 2 fails on SSIM: its cell is marked.
  const QModelIndex seed2 =
      window.runsModel()->index(1, 0, window.runsModel()->index(1, 0, contract));
  window.runsView()->setCurrentIndex(seed2);
  QCOMPARE(summary->rowCount(), 1);
  QVERIFY(summary->index(0, h3p::ui::SummaryTableModel::SsimColumn)
              .data(h3p::ui::SummaryTableModel::FailingRole)
              .toBool());

  // Export writes the table.
  const QString md = runs.filePath("summary.md");
  QVERIFY(window.summaryView()->exportMarkdown(md));
  QFile file(md);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QVERIFY(file.readAll().contains("(fail)"));
}

void MainWindowTest::plotClickEmitsSeekRequested() {
  QTemporaryDir runs;
  MainWindow window;
  window.openRunsDirectory(makeComparedRuns(runs));
  window.selectFirstSeed();
  window.showView("plots");
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QSignalSpy seeks(&window, &MainWindow::seekRequested);
  QCustomPlot* plot = window.plotsView()->framePlot()->plot();
  plot->replot();
  QCPAxisRect* rect = plot->axisRects().at(0);
  const int x = qRound(rect->axis(QCPAxis::atBottom)->coordToPixel(17));
  QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(x, rect->center().y()));
  QCOMPARE(seeks.count(), 1);
  QCOMPARE(seeks.at(0).at(0).toInt(), 17);
  // The window moves the plots' playhead only when told (the review's frameChanged).
  window.plotsView()->setPlayhead(17);
  QCOMPARE(window.plotsView()->framePlot()->playhead(), 17);
}

void MainWindowTest::droppedDirectoryOpens() {
  QTemporaryDir runs;
  MainWindow window;
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(makeComparedRuns(runs))});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &enter);
  QVERIFY(enter.isAccepted());
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &drop);
  QCOMPARE(window.runsModel()->runCount(), 4);

  // A file that is not a directory is refused.
  QMimeData fileMime;
  fileMime.setUrls(
      {QUrl::fromLocalFile(runs.filePath("report/comparisons/c/candidate/seed-1.json"))});
  QDragEnterEvent refuse(QPoint(10, 10), Qt::CopyAction, &fileMime, Qt::LeftButton, Qt::NoModifier);
  refuse.setAccepted(false);
  QApplication::sendEvent(&window, &refuse);
  QVERIFY(!refuse.isAccepted());
}

void MainWindowTest::recentListKeepsNewestFirst() {
  QSettings().clear();  // earlier tests opened directories too
  QTemporaryDir a, b;
  {
    MainWindow window;
    window.openRunsDirectory(a.path());
    window.openRunsDirectory(b.path());
    window.openRunsDirectory(a.path() + "/missing");  // not remembered
    window.setRecentListEnabled(false);
    window.openRunsDirectory(a.path() + "/..");  // not remembered either
    QCOMPARE(window.recentDirectories(),
             (QStringList{QDir(b.path()).absolutePath(), QDir(a.path()).absolutePath()}));
  }
  // A new window sees the list, and its recent menu opens an entry.
  MainWindow window;
  auto* menu = window.findChild<QMenu*>("recentMenu");
  QVERIFY(menu != nullptr);
  QCOMPARE(menu->actions().size(), 2);
  menu->actions().at(1)->trigger();
  QCOMPARE(window.runsModel()->runsDirectory(), QDir(a.path()).absolutePath());
  QCOMPARE(window.recentDirectories().front(), QDir(a.path()).absolutePath());
}

void MainWindowTest::compareJobFromTheMenu() {
  QTemporaryDir runs;
  MainWindow window;
  window.jobs()->setCliPath(QStringLiteral(H3P_SOURCE_DIR "/tests/ui/fake_cli.sh"));
  window.openRunsDirectory(makeComparedRuns(runs));
  QVERIFY(window.selectFirstSeed());
  QSignalSpy finished(window.jobs(), &h3p::ui::JobsController::jobFinished);
  window.findChild<QAction*>("compareAction")->trigger();
  QCOMPARE(window.jobs()->jobs().size(), 1);
  h3p::ui::Job* job = window.jobs()->jobs().front();
  const QString command = job->processArguments().join(' ');
  QVERIFY2(
      command.contains("compare --candidate " + runs.path() + "/c/candidate/seed-1 --provider " +
                       runs.path() + "/c/provider/seed-1 --json " + runs.path() +
                       "/c/candidate/seed-1/metrics/compare.json"),
      qPrintable(command));
  QVERIFY(finished.wait(30000));
  QCOMPARE(job->state(), h3p::ui::Job::State::Succeeded);
  QCOMPARE(window.jobs()->model()->rowCount(), 1);

  // Teacher-forced drift and generate from the menu.
  window.findChild<QAction*>("driftAction")->trigger();
  QCOMPARE(window.jobs()->jobs().size(), 2);
  const QString drift = window.jobs()->jobs().at(1)->processArguments().join(' ');
  QVERIFY2(drift.contains("ablate --candidate " + runs.path() + "/c/candidate/seed-1") &&
               drift.contains("--all-steps --json " + runs.path() + "/c/drift-seed-1.json"),
           qPrintable(drift));
  QCOMPARE(window.jobs()->jobs().at(1)->kind(), h3p::ui::Job::Kind::Drift);
  // generate needs the run's contract.json.
  window.findChild<QAction*>("generateAction")->trigger();
  QCOMPARE(window.jobs()->jobs().size(), 2);
  QFile contract(runs.path() + "/c/candidate/seed-1/contract.json");
  QVERIFY(contract.open(QIODevice::WriteOnly));
  contract.close();
  window.findChild<QAction*>("generateAction")->trigger();
  QCOMPARE(window.jobs()->jobs().size(), 3);
  QVERIFY(window.jobs()->jobs().at(2)->processArguments().join(' ').contains(
      "generate --contract " + runs.path() +
      "/c/candidate/seed-1/contract.json --impl candidate "
      "--seed 1 --runs " +
      QDir(runs.path()).absolutePath()));
  for (h3p::ui::Job* job : window.jobs()->jobs()) {
    if (job->state() == h3p::ui::Job::State::Running)
      QVERIFY(QSignalSpy(job, &h3p::ui::Job::finished).wait(30000));
  }
  // A provider run has nothing to compare against: no job.
  window.runsView()->setCurrentIndex(window.runsModel()->index(
      0, 0, window.runsModel()->index(1, 0, window.runsModel()->index(0, 0))));
  window.findChild<QAction*>("compareAction")->trigger();
  QCOMPARE(window.jobs()->jobs().size(), 3);
}

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
