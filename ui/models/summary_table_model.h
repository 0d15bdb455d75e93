#pragma once

#include <QAbstractTableModel>
#include <QList>

#include "ui/models/compare_result.h"

namespace h3p::ui {

// Summary table of comparisons (one row each, usually the candidates and provider variants of
// one seed) against their bounds. Values outside the bounds are marked (FailingRole, red text
// and background). Exports the same table as Markdown (failing values in bold with "(fail)")
// and as CSV (full precision, plus a "failing" column listing the failing keys).
class SummaryTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // Column order of the table and the exports.
  enum Column {
    CandidateColumn,  // candidate impl spec
    SeedColumn,
    PsnrColumn,  // mean PSNR dB
    SsimColumn,
    TemporalRmseColumn,
    AudioRelL2Column,
    PsnrFfmpegColumn,
    SsimFfmpegColumn,
    VerdictColumn,  // pass / FAIL / -
    ColumnCount
  };

  // Extra data roles.
  enum Role {
    FailingRole = Qt::UserRole + 1,  // bool: this cell's value violates the bounds
    ValueRole,                       // double: the raw value of a metric cell (NaN when absent)
  };

  explicit SummaryTableModel(QObject* parent = nullptr);

  // Replaces the rows.
  void setResults(const QList<CompareResult>& results);
  const QList<CompareResult>& results() const { return m_results; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // The table as Markdown: a bounds line, then a pipe table.
  QString toMarkdown() const;
  // The table as CSV (RFC 4180 quoting), header row first.
  QString toCsv() const;

  // "PSNR >= 30 dB, SSIM >= 0.99, ..." for the first row's bounds; "no bounds" when none.
  QString boundsText() const;

 private:
  static QString metricKey(int column);
  static double value(const CompareResult& result, int column);
  static QString formatValue(int column, double value);
  QString cellText(int row, int column) const;
  bool failing(int row, int column) const;

  QList<CompareResult> m_results;
};

}  // namespace h3p::ui
