#pragma once

#include <QWidget>

class QLabel;
class QListWidget;
class QTableWidget;

namespace h3p::ui {

struct RunDetails;

// The run-details pane beside the runs tree: the selected run's numerics environment field by
// field (manifest.json environment.numerics), a banner when the run is mixed, and its segments
// (segments.json) one line each. Dumb widget: the window reads the run and calls setDetails.
class RunDetailsView : public QWidget {
  Q_OBJECT

 public:
  explicit RunDetailsView(QWidget* parent = nullptr);

  // Shows `details` (copied; nothing is kept but the shown text).
  void setDetails(const RunDetails& details);
  // Empties the pane and shows `message` (no run selected).
  void clear(const QString& message);

  QLabel* headingLabel() const { return m_heading; }
  // Visible only for a mixed run.
  QLabel* mixedLabel() const { return m_mixed; }
  // Unreadable or malformed manifest.json / segments.json; hidden when there is none.
  QLabel* errorsLabel() const { return m_errors; }
  // "Numerics environment…" above the table: says "not recorded" for older runs.
  QLabel* numericsLabel() const { return m_numericsLabel; }
  // Two columns: field (dotted path) and value.
  QTableWidget* numericsTable() const { return m_numerics; }
  QLabel* segmentsLabel() const { return m_segmentsLabel; }
  // One item per segment, its RunSegment::describe() line.
  QListWidget* segmentsList() const { return m_segments; }

 private:
  QLabel* m_heading = nullptr;
  QLabel* m_mixed = nullptr;
  QLabel* m_errors = nullptr;
  QLabel* m_numericsLabel = nullptr;
  QTableWidget* m_numerics = nullptr;
  QLabel* m_segmentsLabel = nullptr;
  QListWidget* m_segments = nullptr;
};

}  // namespace h3p::ui
