#include "ui/models/runs_tree_model.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QIcon>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QPixmap>
#include <QRegularExpression>
#include <algorithm>
#include <optional>
#include <vector>

#include "ui/models/compare_index.h"
#include "ui/models/run_details.h"

namespace h3p::ui {

namespace {

// What the tree needs from one manifest.json.
struct ManifestSummary {
  QString implSpec;            // empty when absent
  std::optional<qint64> seed;  // empty when absent
  QString error;               // "<file>: <field>: <what>" when something could not be read
  QString plugin;              // the candidate plugin that ran, in words; empty without one
};

// "plugin acme-kernels 0.3, libacme.so sha256 1f2e3d4c5b6a" from the manifest's plugin object.
QString describePlugin(const QJsonObject& plugin) {
  const QString library = plugin.value(QStringLiteral("library")).toString();
  const QString argument = plugin.value(QStringLiteral("argument")).toString();
  const QString file = QFileInfo(argument.isEmpty() ? library : argument).fileName();
  // A Python plugin is named by its module file; its digest is that file's.
  const QJsonValue source = plugin.value(QStringLiteral("sources")).toObject().value(argument);
  const QString digest = source.isString()
                             ? source.toString()
                             : plugin.value(QStringLiteral("library_sha256")).toString();
  return QStringLiteral("%1 plugin %2 %3, %4 sha256 %5")
      .arg(plugin.value(QStringLiteral("kind")).toString() == QLatin1String("python")
               ? QStringLiteral("Python")
               : QStringLiteral("C"),
           plugin.value(QStringLiteral("name")).toString(),
           plugin.value(QStringLiteral("version")).toString(), file, digest.left(12));
}

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
  const QJsonValue plugin = root.value(QStringLiteral("plugin"));
  if (plugin.isObject()) summary.plugin = describePlugin(plugin.toObject());
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

// The tooltip of a row without its verdict: path (or contract and label), the manifest error,
// the plugin, the segments.
QString baseToolTip(const QStandardItem* item) {
  QString tip = item->data(RunsTreeModel::PathRole).toString();
  if (tip.isEmpty()) {
    tip = item->data(RunsTreeModel::ContractRole).toString() + ", " + item->text();
  }
  const QString error = item->data(RunsTreeModel::ManifestErrorRole).toString();
  if (!error.isEmpty()) {
    tip += '\n' + error;
  }
  const QString plugin = item->data(RunsTreeModel::PluginRole).toString();
  if (!plugin.isEmpty()) {
    tip += '\n' + plugin;
  }
  const QString segments = item->data(RunsTreeModel::SegmentsRole).toString();
  if (!segments.isEmpty()) {
    tip += '\n' + segments;
  }
  return tip;
}

// The segments of a run as the tree shows them: a heading line, then one line per segment.
QString describeSegments(const RunSegments& segments) {
  if (!segments.error.isEmpty()) {
    return segments.error;
  }
  QStringList lines;
  lines.append(segments.mixed ? RunsTreeModel::tr("mixed: %1 segments, a resume's difference was "
                                                  "accepted")
                                    .arg(segments.segments.size())
                              : RunsTreeModel::tr("%1 segments").arg(segments.segments.size()));
  for (const RunSegment& segment : segments.segments) lines.append(segment.describe());
  return lines.join('\n');
}

void setVerdict(QStandardItem* item, RunsTreeModel::Verdict verdict, const QString& detail) {
  item->setData(static_cast<int>(verdict), RunsTreeModel::VerdictRole);
  item->setData(badgeIcon(verdict), Qt::DecorationRole);
  QString tip = baseToolTip(item);
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
  m_runsDir = bundleRunsDirectory(m_runsDir);

  static const QRegularExpression seedDirPattern(QStringLiteral("^seed-(\\d+)$"));
  for (const QString& contract : sortedSubdirectories(m_runsDir)) {
    const QString contractPath = m_runsDir + '/' + contract;

    // Every run of the contract: impl-dir/seed-<n> directories that hold a manifest.
    struct Run {
      qint64 seed;
      QString implSpec;
      QString path;
      QString error;
      QString plugin;
      QString segments;  // SegmentsRole text; empty without segments.json
      bool mixed = false;
    };
    std::vector<Run> runs;
    for (const QString& implDir : sortedSubdirectories(contractPath)) {
      const QString implPath = contractPath + '/' + implDir;
      for (const QString& seedDir : sortedSubdirectories(implPath)) {
        const QRegularExpressionMatch match = seedDirPattern.match(seedDir);
        const QString runPath = implPath + '/' + seedDir;
        if (!match.hasMatch() || !QFileInfo(runPath + QStringLiteral("/manifest.json")).isFile()) {
          continue;
        }
        const ManifestSummary manifest = readManifest(runPath + QStringLiteral("/manifest.json"));
        Run run{manifest.seed.value_or(match.captured(1).toLongLong()),
                manifest.implSpec.isEmpty() ? implDir : manifest.implSpec,
                runPath,
                manifest.error,
                manifest.plugin,
                {},
                false};
        if (QFileInfo::exists(runPath + QStringLiteral("/segments.json"))) {
          const RunSegments segments = readRunSegments(runPath);
          run.segments = describeSegments(segments);
          run.mixed = segments.mixed;
        }
        runs.push_back(run);
      }
    }
    if (runs.empty()) {
      continue;
    }
    // Seeds in numeric order; within a seed the provider first, then by impl spec.
    std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
      if (a.seed != b.seed) return a.seed < b.seed;
      const bool aProvider = a.implSpec == QLatin1String("provider");
      const bool bProvider = b.implSpec == QLatin1String("provider");
      if (aProvider != bProvider) return aProvider;
      return a.implSpec < b.implSpec;
    });

    auto* contractItem = makeItem(contract, Kind::Contract, contractPath);
    contractItem->setData(contract, ContractRole);
    appendRow(contractItem);
    QStandardItem* seedItem = nullptr;
    for (const Run& run : runs) {
      if (seedItem == nullptr || seedItem->data(SeedRole).toLongLong() != run.seed) {
        seedItem = makeItem(tr("seed %1").arg(run.seed), Kind::Seed, QString());
        seedItem->setData(contract, ContractRole);
        seedItem->setData(run.seed, SeedRole);
        seedItem->setToolTip(tr("%1, seed %2").arg(contract).arg(run.seed));
        contractItem->appendRow(seedItem);
      }
      auto* runItem =
          makeItem(run.mixed ? run.implSpec + tr(" (mixed)") : run.implSpec, Kind::Run, run.path);
      runItem->setData(contract, ContractRole);
      runItem->setData(run.seed, SeedRole);
      runItem->setData(run.implSpec, ImplSpecRole);
      runItem->setData(run.mixed, MixedRole);
      if (!run.plugin.isEmpty()) runItem->setData(run.plugin, PluginRole);
      if (!run.error.isEmpty()) runItem->setData(run.error, ManifestErrorRole);
      if (!run.segments.isEmpty()) runItem->setData(run.segments, SegmentsRole);
      runItem->setToolTip(baseToolTip(runItem));
      seedItem->appendRow(runItem);
      ++m_runCount;
    }
  }
  return m_runCount;
}

void RunsTreeModel::applyVerdicts(const CompareIndex& index) {
  for (int c = 0; c < rowCount(); ++c) {
    QStandardItem* contractItem = item(c);
    for (int i = 0; i < contractItem->rowCount(); ++i) {
      QStandardItem* seedItem = contractItem->child(i);
      for (int r = 0; r < seedItem->rowCount(); ++r) {
        QStandardItem* runItem = seedItem->child(r);
        const CompareResult* result = index.find(runItem->data(ContractRole).toString(),
                                                 runItem->data(ImplSpecRole).toString(),
                                                 runItem->data(SeedRole).toLongLong());
        Verdict verdict = Verdict::None;
        QString detail;
        if (result != nullptr && result->passed.has_value()) {
          verdict = *result->passed ? Verdict::Pass : Verdict::Fail;
          detail = result->failures.join(QStringLiteral("; "));
        }
        setVerdict(runItem, verdict, detail);
      }
      setVerdict(seedItem, aggregate(seedItem), {});
    }
    setVerdict(contractItem, aggregate(contractItem), {});
  }
}

QStringList RunsTreeModel::runDirectories() const {
  QStringList dirs;
  for (int c = 0; c < rowCount(); ++c) {
    const QStandardItem* contractItem = item(c);
    for (int i = 0; i < contractItem->rowCount(); ++i) {
      const QStandardItem* seedItem = contractItem->child(i);
      for (int r = 0; r < seedItem->rowCount(); ++r) {
        dirs.append(seedItem->child(r)->data(PathRole).toString());
      }
    }
  }
  return dirs;
}

QString RunsTreeModel::bundleRunsDirectory(const QString& dir) {
  const QString runs = dir + QStringLiteral("/runs");
  return QFileInfo(dir + QStringLiteral("/bundle.json")).isFile() && QFileInfo(runs).isDir() ? runs
                                                                                          : dir;
}

int RunsTreeModel::rescan() { return scan(m_runsDir); }

QString RunsTreeModel::runsDirectory() const { return m_runsDir; }

int RunsTreeModel::runCount() const { return m_runCount; }

}  // namespace h3p::ui
