#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "ui/ablation/ablation_result.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace h3p::ui {

// A candidate run and the provider run of the same contract and seed, offered for ablation.
struct AblationPair {
  QString label;         // "demo seed 42: candidate"
  QString candidateRun;  // run directories
  QString providerRun;
  int savedSteps = 0;  // steps the provider run has saved (the step spin box's range)
};

// The ablation launcher: choose a run pair, a step, the groups and the device, run it (intent
// signal), see progress, cancel, the log; past sweeps in a list, the chosen sweep as a table and
// a bar chart of relative L2 per impl spec (video and audio), the provider variants' rows marked
// and their range drawn as a band behind the bars (the provider's own spread). Dumb widget: a controller starts the jobs and
// feeds it.
class AblationView : public QWidget {
  Q_OBJECT

 public:
  explicit AblationView(QWidget* parent = nullptr);

  // Replaces the pairs in the run chooser.
  void setPairs(const QList<AblationPair>& pairs);
  // Replaces the sweep list (labels and files, newest first); keeps the selection by file.
  void setSweeps(const QStringList& labels, const QStringList& files);
  // Selects the sweep of `file` in the list (showSweepRequested follows).
  void selectSweep(const QString& file);
  // Shows one sweep's table and bar chart.
  void showSweep(const AblationResult& result);
  // Clears the table and chart, showing `text` in the result title.
  void clearSweep(const QString& text);

  // Job display.
  void setRunning(bool running);
  void setProgress(double fraction, const QString& detail);
  void setLog(const QString& text);
  void appendLog(const QString& text);

  // Current choices.
  int currentPair() const;
  int step() const;
  QStringList checkedGroups() const;  // empty = every group
  QString device() const;             // "cpu" or "cuda": where the ablation job computes
  void setStep(int step);
  void setCheckedGroups(const QStringList& groups);

  QTableWidget* table() const { return m_table; }
  QCustomPlot* chart() const { return m_chart; }
  QListWidget* sweepList() const { return m_sweeps; }

 signals:
  // Run the ablation of pair `pair` at `step` swapping `groups` (empty = all).
  void runRequested(int pair, int step, const QStringList& groups);
  void cancelRequested();
  // The user picked a sweep in the list.
  void showSweepRequested(const QString& file);

 private:
  void onPairChanged(int index);

  QList<AblationPair> m_pairs;
  QComboBox* m_pairBox = nullptr;
  QSpinBox* m_stepBox = nullptr;
  QComboBox* m_deviceBox = nullptr;
  QList<QCheckBox*> m_groupBoxes;
  QPushButton* m_runButton = nullptr;
  QPushButton* m_cancelButton = nullptr;
  QProgressBar* m_progress = nullptr;
  QPlainTextEdit* m_log = nullptr;
  QListWidget* m_sweeps = nullptr;
  QLabel* m_resultTitle = nullptr;
  QTableWidget* m_table = nullptr;
  QCustomPlot* m_chart = nullptr;
};

}  // namespace h3p::ui
