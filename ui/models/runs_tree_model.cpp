#include "ui/models/runs_tree_model.h"

#include <QDir>
#include <QFile>
#include <QIcon>
#include <QPainter>
#include <QPixmap>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <optional>
#include <vector>

#include "ui/models/compare_index.h"

namespace h3p::ui {

namespace {

// What the tree needs from one manifest.json.
struct ManifestSummary {
  QString implSpec;            // empty when absent
  std::optional<qint64> seed;  // empty when absent
  QString error;               // "<file>: <field>: <what>" when something could not be read
};

ManifestSummary readManifest(const QString& path) {
  ManifestSummary summary;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    summary.error = path + ": cannot open: " + file.errorString();
    return summary;
  }
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
  if (parseError.error != QJsonParseError::NoError) {
    summary.error =
        path + ": offset " + QString::number(parseError.offset) + ": " + parseError.errorString();
    return summary;
  }
  if (!doc.isObject()) {
    summary.error = path + ": top level is not an object";
    return summary;
  }
  const QJsonObject root = doc.object();
  const QJsonValue impl = root.value(QStringLiteral("impl_spec"));
  if (impl.isString()) {
    summary.implSpec = impl.toString();
  } else {
    summary.error = path + ": impl_spec: missing or not a string";
  }
  const QJsonValue seed = root.value(QStringLiteral("seed"));
  if (seed.isDouble()) {
    summary.seed = seed.toInteger();
  } else if (summary.error.isEmpty()) {
    summary.error = path + ": seed: missing or not a number";
  }
  return summary;
}

QStringList sortedSubdirectories(const QString& dir) {
  QStringList names = QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
  return names;
}

// A filled circle badge: green for pass, red for fail.
QIcon badgeIcon(RunsTreeModel::Verdict verdict) {
  if (verdict == RunsTreeModel::Verdict::None) {
    return {};
  }
  QPixmap pixmap(14, 14);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(Qt::NoPen);
  painter.setBrush(verdict == RunsTreeModel::Verdict::Pass ? QColor(0x2e, 0x9d, 0x45)
                                                          : QColor(0xd0, 0x30, 0x30));
  painter.drawEllipse(QRectF(1, 1, 12, 12));
  return QIcon(pixmap);
}

QString verdictText(RunsTreeModel::Verdict verdict) {
  switch (verdict) {
    case RunsTreeModel::Verdict::Pass:
      return QStringLiteral("pass");
    case RunsTreeModel::Verdict::Fail:
      return QStringLiteral("FAIL");
    case RunsTreeModel::Verdict::None:
      break;
  }
  return {};
}

void setVerdict(QStandardItem* item, RunsTreeModel::Verdict verdict, const QString& detail) {
  item->setData(static_cast<int>(verdict), RunsTreeModel::VerdictRole);
  item->setData(badgeIcon(verdict), Qt::DecorationRole);
  QString tip = item->data(RunsTreeModel::PathRole).toString();
  const QString error = item->data(RunsTreeModel::ManifestErrorRole).toString();
  if (!error.isEmpty()) {
    tip += '\n' + error;
  }
  if (verdict != RunsTreeModel::Verdict::None) {
    tip += '\n' + verdictText(verdict) + (detail.isEmpty() ? QString() : ": " + detail);
  }
  item->setToolTip(tip);
}

// Any Fail -> Fail; else any Pass -> Pass; else None.
RunsTreeModel::Verdict aggregate(const QStandardItem* parent) {
  bool anyPass = false;
  for (int row = 0; row < parent->rowCount(); ++row) {
    const auto verdict = static_cast<RunsTreeModel::Verdict>(
        parent->child(row)->data(RunsTreeModel::VerdictRole).toInt());
    if (verdict == RunsTreeModel::Verdict::Fail) {
      return verdict;
    }
    anyPass = anyPass || verdict == RunsTreeModel::Verdict::Pass;
  }
  return anyPass ? RunsTreeModel::Verdict::Pass : RunsTreeModel::Verdict::None;
}

QStandardItem* makeItem(const QString& text, RunsTreeModel::Kind kind, const QString& path) {
  auto* item = new QStandardItem(text);
  item->setEditable(false);
  item->setData(static_cast<int>(kind), RunsTreeModel::KindRole);
  item->setData(path, RunsTreeModel::PathRole);
  item->setToolTip(path);
  return item;
}

}  // namespace

RunsTreeModel::RunsTreeModel(QObject* parent) : QStandardItemModel(parent) {
  setHorizontalHeaderLabels({tr("Runs")});
}

int RunsTreeModel::scan(const QString& runsDir) {
  clear();
  setHorizontalHeaderLabels({tr("Runs")});
  m_runsDir = runsDir.isEmpty() ? QString() : QFileInfo(runsDir).absoluteFilePath();
  m_runCount = 0;
  if (m_runsDir.isEmpty() || !QFileInfo(m_runsDir).isDir()) {
    return 0;
  }

  static const QRegularExpression seedDirPattern(QStringLiteral("^seed-(\\d+)$"));
  for (const QString& contract : sortedSubdirectories(m_runsDir)) {
    const QString contractPath = m_runsDir + '/' + contract;
    QStandardItem* contractItem = nullptr;

    for (const QString& implDir : sortedSubdirectories(contractPath)) {
      const QString implPath = contractPath + '/' + implDir;

      // Collect the seed directories that hold a manifest, in numeric order.
      struct SeedRun {
        qint64 dirSeed;
        QString path;
      };
      std::vector<SeedRun> runs;
      for (const QString& seedDir : sortedSubdirectories(implPath)) {
        const QRegularExpressionMatch match = seedDirPattern.match(seedDir);
        const QString seedPath = implPath + '/' + seedDir;
        if (!match.hasMatch() || !QFileInfo(seedPath + QStringLiteral("/manifest.json")).isFile()) {
          continue;
        }
        runs.push_back({match.captured(1).toLongLong(), seedPath});
      }
      if (runs.empty()) {
        continue;
      }
      std::sort(runs.begin(), runs.end(),
                [](const SeedRun& a, const SeedRun& b) { return a.dirSeed < b.dirSeed; });

      // Build the seed rows; the impl row takes its label from the first readable manifest.
      QString implSpec;
      QList<QStandardItem*> seedItems;
      for (const SeedRun& run : runs) {
        const ManifestSummary manifest = readManifest(run.path + QStringLiteral("/manifest.json"));
        const qint64 seed = manifest.seed.value_or(run.dirSeed);
        auto* seedItem = makeItem(tr("seed %1").arg(seed), Kind::Seed, run.path);
        seedItem->setData(contract, ContractRole);
        seedItem->setData(seed, SeedRole);
        seedItem->setData(manifest.implSpec.isEmpty() ? implDir : manifest.implSpec, ImplSpecRole);
        if (!manifest.error.isEmpty()) {
          seedItem->setData(manifest.error, ManifestErrorRole);
          seedItem->setToolTip(run.path + '\n' + manifest.error);
        }
        if (implSpec.isEmpty()) {
          implSpec = manifest.implSpec;
        }
        seedItems.append(seedItem);
      }

      if (implSpec.isEmpty()) {
        implSpec = implDir;
      }
      auto* implItem = makeItem(implSpec, Kind::Impl, implPath);
      implItem->setData(contract, ContractRole);
      implItem->setData(implSpec, ImplSpecRole);
      for (QStandardItem* seedItem : seedItems) {
        implItem->appendRow(seedItem);
      }
      if (contractItem == nullptr) {
        contractItem = makeItem(contract, Kind::Contract, contractPath);
        contractItem->setData(contract, ContractRole);
        appendRow(contractItem);
      }
      contractItem->appendRow(implItem);
      m_runCount += static_cast<int>(seedItems.size());
    }
  }
  return m_runCount;
}

void RunsTreeModel::applyVerdicts(const CompareIndex& index) {
  for (int c = 0; c < rowCount(); ++c) {
    QStandardItem* contractItem = item(c);
    for (int i = 0; i < contractItem->rowCount(); ++i) {
      QStandardItem* implItem = contractItem->child(i);
      for (int s = 0; s < implItem->rowCount(); ++s) {
        QStandardItem* seedItem = implItem->child(s);
        const CompareResult* result = index.find(seedItem->data(ContractRole).toString(),
                                                 seedItem->data(ImplSpecRole).toString(),
                                                 seedItem->data(SeedRole).toLongLong());
        Verdict verdict = Verdict::None;
        QString detail;
        if (result != nullptr && result->passed.has_value()) {
          verdict = *result->passed ? Verdict::Pass : Verdict::Fail;
          detail = result->failures.join(QStringLiteral("; "));
        }
        setVerdict(seedItem, verdict, detail);
      }
      setVerdict(implItem, aggregate(implItem), {});
    }
    setVerdict(contractItem, aggregate(contractItem), {});
  }
}

QStringList RunsTreeModel::runDirectories() const {
  QStringList dirs;
  for (int c = 0; c < rowCount(); ++c) {
    const QStandardItem* contractItem = item(c);
    for (int i = 0; i < contractItem->rowCount(); ++i) {
      const QStandardItem* implItem = contractItem->child(i);
      for (int s = 0; s < implItem->rowCount(); ++s) {
        dirs.append(implItem->child(s)->data(PathRole).toString());
      }
    }
  }
  return dirs;
}

int RunsTreeModel::rescan() { return scan(m_runsDir); }

QString RunsTreeModel::runsDirectory() const { return m_runsDir; }

int RunsTreeModel::runCount() const { return m_runCount; }

}  // namespace h3p::ui
