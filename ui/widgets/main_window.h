#pragma once

#include <QMainWindow>
#include <QString>

class QDockWidget;
class QLabel;
class QModelIndex;
class QTreeView;

namespace h3p::ui {

class RunsTreeModel;

// The workbench's main window: a runs tree docked on the left, the run view in the centre
// (a placeholder until a run is selected), a status bar. Lives on the UI thread.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Shows the runs found under runsDir in the runs tree; reports the count in the status bar.
  void openRunsDirectory(const QString& runsDir);

  // The model behind the runs tree (owned by the window).
  RunsTreeModel* runsModel() const;

  // The runs tree view (owned by the window).
  QTreeView* runsView() const;

 signals:
  // A run (seed directory) was selected in the runs tree.
  void runSelected(const QString& runDir);

 private slots:
  void chooseRunsDirectory();
  void onCurrentRunChanged(const QModelIndex& index);

 private:
  void createMenus();
  void createRunsDock();

  RunsTreeModel* m_runsModel = nullptr;
  QTreeView* m_runsView = nullptr;
  QDockWidget* m_runsDock = nullptr;
  QLabel* m_placeholder = nullptr;
};

}  // namespace h3p::ui
