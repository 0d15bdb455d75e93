#include "ui/models/runs_tree_model.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <optional>
#include <vector>

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
      implItem->setData(implSpec, ImplSpecRole);
      for (QStandardItem* seedItem : seedItems) {
        implItem->appendRow(seedItem);
      }
      if (contractItem == nullptr) {
        contractItem = makeItem(contract, Kind::Contract, contractPath);
        appendRow(contractItem);
      }
      contractItem->appendRow(implItem);
      m_runCount += static_cast<int>(seedItems.size());
    }
  }
  return m_runCount;
}

int RunsTreeModel::rescan() { return scan(m_runsDir); }

QString RunsTreeModel::runsDirectory() const { return m_runsDir; }

int RunsTreeModel::runCount() const { return m_runCount; }

}  // namespace h3p::ui
