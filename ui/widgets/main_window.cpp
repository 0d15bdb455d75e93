#include "ui/widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTreeView>

#include "ui/models/runs_tree_model.h"

namespace h3p::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_runsModel(new RunsTreeModel(this)) {
  setWindowTitle(QStringLiteral("h3parity studio"));
  setObjectName(QStringLiteral("mainWindow"));

  m_placeholder = new QLabel(tr("Select a run"), this);
  m_placeholder->setObjectName(QStringLiteral("runPlaceholder"));
  m_placeholder->setAlignment(Qt::AlignCenter);
  m_placeholder->setWordWrap(true);
  setCentralWidget(m_placeholder);

  createMenus();
  createRunsDock();
  statusBar()->showMessage(tr("No runs directory open"));
  resize(1280, 800);
}

void MainWindow::createMenus() {
  QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
  fileMenu->setObjectName(QStringLiteral("fileMenu"));

  QAction* openAction = fileMenu->addAction(tr("&Open runs directory…"));
  openAction->setObjectName(QStringLiteral("openRunsAction"));
  openAction->setShortcut(QKeySequence::Open);
  connect(openAction, &QAction::triggered, this, &MainWindow::chooseRunsDirectory);

  fileMenu->addSeparator();

  QAction* quitAction = fileMenu->addAction(tr("&Quit"));
  quitAction->setObjectName(QStringLiteral("quitAction"));
  quitAction->setShortcut(QKeySequence::Quit);
  connect(quitAction, &QAction::triggered, this, &QWidget::close);
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
  resizeDocks({m_runsDock}, {320}, Qt::Horizontal);
}

void MainWindow::openRunsDirectory(const QString& runsDir) {
  const int runs = m_runsModel->scan(runsDir);
  m_runsView->expandAll();
  m_placeholder->setText(tr("Select a run"));
  const QString shown = QDir::toNativeSeparators(m_runsModel->runsDirectory());
  if (!QFileInfo(m_runsModel->runsDirectory()).isDir()) {
    statusBar()->showMessage(tr("%1: not a directory").arg(shown));
  } else {
    const QString count = runs == 1 ? tr("1 run") : tr("%1 runs").arg(runs);
    statusBar()->showMessage(tr("%1: %2").arg(shown, count));
  }
}

RunsTreeModel* MainWindow::runsModel() const { return m_runsModel; }

QTreeView* MainWindow::runsView() const { return m_runsView; }

void MainWindow::chooseRunsDirectory() {
  const QString start =
      m_runsModel->runsDirectory().isEmpty() ? QDir::currentPath() : m_runsModel->runsDirectory();
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Open runs directory"), start);
  if (!dir.isEmpty()) {
    openRunsDirectory(dir);
  }
}

void MainWindow::onCurrentRunChanged(const QModelIndex& index) {
  if (!index.isValid() ||
      index.data(RunsTreeModel::KindRole).toInt() != static_cast<int>(RunsTreeModel::Kind::Seed)) {
    return;
  }
  const QString runDir = index.data(RunsTreeModel::PathRole).toString();
  QString text = tr("%1\nseed %2\n%3")
                     .arg(index.data(RunsTreeModel::ImplSpecRole).toString())
                     .arg(index.data(RunsTreeModel::SeedRole).toLongLong())
                     .arg(QDir::toNativeSeparators(runDir));
  const QString error = index.data(RunsTreeModel::ManifestErrorRole).toString();
  if (!error.isEmpty()) {
    text += '\n' + error;
  }
  m_placeholder->setText(text);
  statusBar()->showMessage(QDir::toNativeSeparators(runDir));
  emit runSelected(runDir);
}

}  // namespace h3p::ui
