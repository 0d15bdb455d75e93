#include "ui/models/summary_table_model.h"

#include <QBrush>
#include <QColor>
#include <cmath>
#include <limits>

namespace h3p::ui {

namespace {

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n'))) {
    return text;
  }
  QString quoted = text;
  quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString fullPrecision(double value) {
  if (std::isnan(value)) {
    return {};
  }
  if (std::isinf(value)) {
    return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
  }
  return QString::number(value, 'g', 17);
}

}  // namespace

SummaryTableModel::SummaryTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SummaryTableModel::setResults(const QList<CompareResult>& results) {
  beginResetModel();
  m_results = results;
  endResetModel();
}

int SummaryTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_results.size());
}

int SummaryTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString SummaryTableModel::metricKey(int column) {
  switch (column) {
    case PsnrColumn:
      return QStringLiteral("psnr_db");
    case SsimColumn:
      return QStringLiteral("ssim");
    case TemporalRmseColumn:
      return QStringLiteral("temporal_rmse");
    case AudioRelL2Column:
      return QStringLiteral("audio_rel_l2");
    case PsnrFfmpegColumn:
      return QStringLiteral("psnr_db_ffmpeg");
    case SsimFfmpegColumn:
      return QStringLiteral("ssim_ffmpeg");
    default:
      return {};
  }
}

double SummaryTableModel::value(const CompareResult& result, int column) {
  switch (column) {
    case PsnrColumn:
      return result.psnrDb;
    case SsimColumn:
      return result.ssim;
    case TemporalRmseColumn:
      return result.temporalRmse;
    case AudioRelL2Column:
      return result.audioRelL2;
    case PsnrFfmpegColumn:
      return result.psnrDbFfmpeg;
    case SsimFfmpegColumn:
      return result.ssimFfmpeg;
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

QString SummaryTableModel::formatValue(int column, double value) {
  if (std::isnan(value)) {
    return QStringLiteral("-");
  }
  if (std::isinf(value)) {
    return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
  }
  switch (column) {
    case PsnrColumn:
    case PsnrFfmpegColumn:
      return QString::number(value, 'f', 3);
    case SsimColumn:
    case SsimFfmpegColumn:
      return QString::number(value, 'f', 6);
    default:
      return QString::number(value, 'e', 3);
  }
}

QString SummaryTableModel::cellText(int row, int column) const {
  const CompareResult& result = m_results.at(row);
  switch (column) {
    case CandidateColumn:
      return result.candidate.implSpec.isEmpty() ? result.candidate.path
                                                 : result.candidate.implSpec;
    case SeedColumn:
      return result.candidate.seed < 0 ? QStringLiteral("-")
                                       : QString::number(result.candidate.seed);
    case VerdictColumn:
      if (!result.passed.has_value()) {
        return QStringLiteral("-");
      }
      return *result.passed ? QStringLiteral("pass") : QStringLiteral("FAIL");
    default:
      return formatValue(column, value(result, column));
  }
}

bool SummaryTableModel::failing(int row, int column) const {
  const CompareResult& result = m_results.at(row);
  if (column == VerdictColumn) {
    return result.passed.has_value() && !*result.passed;
  }
  return result.violates(metricKey(column), value(result, column));
}

QVariant SummaryTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) {
    return {};
  }
  const int row = index.row();
  const int column = index.column();
  switch (role) {
    case Qt::DisplayRole:
      return cellText(row, column);
    case FailingRole:
      return failing(row, column);
    case ValueRole:
      return value(m_results.at(row), column);
    case Qt::ForegroundRole:
      return failing(row, column) ? QVariant(QBrush(QColor(0xb0, 0x00, 0x00))) : QVariant();
    case Qt::BackgroundRole:
      return failing(row, column) ? QVariant(QBrush(QColor(0xff, 0xdd, 0xdd))) : QVariant();
    case Qt::TextAlignmentRole:
      return column == CandidateColumn ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                                       : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole:
      if (column == CandidateColumn) {
        return m_results.at(row).candidate.path + QStringLiteral("\nvs ") +
               m_results.at(row).provider.path;
      }
      if (column == VerdictColumn) {
        return m_results.at(row).failures.join(QLatin1Char('\n'));
      }
      return {};
    default:
      return {};
  }
}

QVariant SummaryTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  static const char* const names[ColumnCount] = {
      "candidate",        "seed",          "PSNR dB", "SSIM", "temporal RMSE", "audio rel L2",
      "PSNR dB (ffmpeg)", "SSIM (ffmpeg)", "verdict"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

QString SummaryTableModel::boundsText() const {
  if (m_results.isEmpty() || !m_results.front().bounds.present) {
    return tr("no bounds");
  }
  const CompareBounds& b = m_results.front().bounds;
  QStringList parts;
  if (!std::isnan(b.psnrDbMin)) parts << QStringLiteral("PSNR >= %1 dB").arg(b.psnrDbMin);
  if (!std::isnan(b.ssimMin)) parts << QStringLiteral("SSIM >= %1").arg(b.ssimMin);
  if (!std::isnan(b.temporalRmseMax))
    parts << QStringLiteral("temporal RMSE <= %1").arg(b.temporalRmseMax);
  if (!std::isnan(b.audioRelL2Max))
    parts << QStringLiteral("audio rel L2 <= %1").arg(b.audioRelL2Max);
  QString text = parts.join(QStringLiteral(", "));
  if (b.postHoc) {
    text += QStringLiteral(" (post hoc)");
  }
  return text;
}

QString SummaryTableModel::toMarkdown() const {
  QString out = QStringLiteral("Bounds: ") + boundsText() + QStringLiteral("\n\n|");
  QString rule = QStringLiteral("|");
  for (int column = 0; column < ColumnCount; ++column) {
    out += QLatin1Char(' ') + headerData(column, Qt::Horizontal).toString() + QStringLiteral(" |");
    rule += column == CandidateColumn ? QStringLiteral("---|") : QStringLiteral("---:|");
  }
  out += QLatin1Char('\n') + rule + QLatin1Char('\n');
  for (int row = 0; row < rowCount(); ++row) {
    out += QLatin1Char('|');
    for (int column = 0; column < ColumnCount; ++column) {
      QString text = cellText(row, column);
      text.replace(QLatin1Char('|'), QStringLiteral("\\|"));
      if (column == CandidateColumn) {
        text = QLatin1Char('`') + text + QLatin1Char('`');
      }
      if (failing(row, column)) {
        text = QStringLiteral("**") + text +
               (column == VerdictColumn ? QString() : QStringLiteral(" (fail)")) +
               QStringLiteral("**");
      }
      out += QLatin1Char(' ') + text + QStringLiteral(" |");
    }
    out += QLatin1Char('\n');
  }
  return out;
}

QString SummaryTableModel::toCsv() const {
  static const char* const keys[ColumnCount] = {"candidate",      "seed",          "psnr_db",
                                                "ssim",           "temporal_rmse", "audio_rel_l2",
                                                "psnr_db_ffmpeg", "ssim_ffmpeg",   "passed"};
  QStringList header;
  for (const char* key : keys) {
    header << QString::fromLatin1(key);
  }
  header << QStringLiteral("failing");
  QString out = header.join(QLatin1Char(',')) + QStringLiteral("\r\n");
  for (int row = 0; row < rowCount(); ++row) {
    const CompareResult& result = m_results.at(row);
    QStringList fields;
    QStringList failingKeys;
    for (int column = 0; column < ColumnCount; ++column) {
      if (column == CandidateColumn || column == SeedColumn) {
        fields << csvField(cellText(row, column));
      } else if (column == VerdictColumn) {
        fields << (result.passed.has_value()
                       ? (*result.passed ? QStringLiteral("true") : QStringLiteral("false"))
                       : QString());
      } else {
        fields << fullPrecision(value(result, column));
        if (failing(row, column)) {
          failingKeys << metricKey(column);
        }
      }
    }
    fields << csvField(failingKeys.join(QLatin1Char(' ')));
    out += fields.join(QLatin1Char(',')) + QStringLiteral("\r\n");
  }
  return out;
}

}  // namespace h3p::ui
