// MainWindow: opens with its title, menus, runs dock and placeholder; selecting a run updates it.
#include "ui/widgets/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "run_tree_fixture.h"
#include "ui/models/runs_tree_model.h"

using h3p::ui::MainWindow;
using h3p::ui::RunsTreeModel;

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void opensWithTitleMenusAndPlaceholder();
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

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
