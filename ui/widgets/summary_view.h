#pragma once

#include <QWidget>

class QLabel;
class QPushButton;
class QTableView;

namespace h3p::ui {

class SummaryTableModel;

// The summary tab: a line about the selected run, the bounds, the comparisons table with
// failing values marked, and Markdown / CSV export. Dumb widget over a SummaryTableModel
// (not owned).
class SummaryView : public QWidget {
  Q_OBJECT

 public:
  explicit SummaryView(QWidget* parent = nullptr);

  void setModel(SummaryTableModel* model);
  // The line above the table (run or seed description).
  void setHeading(const QString& text);
  QLabel* headingLabel() const { return m_heading; }
  QTableView* table() const { return m_table; }

  // Writes the table as Markdown / CSV; false (and nothing written) when the file cannot be
  // written.
  bool exportMarkdown(const QString& file) const;
  bool exportCsv(const QString& file) const;

 private:
  void refreshBounds();
  void chooseExport(bool markdown);

  SummaryTableModel* m_model = nullptr;
  QLabel* m_heading = nullptr;
  QLabel* m_bounds = nullptr;
  QTableView* m_table = nullptr;
  QPushButton* m_markdownButton = nullptr;
  QPushButton* m_csvButton = nullptr;
};

}  // namespace h3p::ui
