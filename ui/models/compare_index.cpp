#include "ui/models/compare_index.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <algorithm>

#include "core/common/error.h"

namespace h3p::ui {

namespace {

bool lessBySeedThenSpec(const CompareResult& a, const CompareResult& b) {
  if (a.candidate.contract != b.candidate.contract) {
    return a.candidate.contract < b.candidate.contract;
  }
  if (a.candidate.seed != b.candidate.seed) {
    return a.candidate.seed < b.candidate.seed;
  }
  return a.candidate.implSpec < b.candidate.implSpec;
}

// JSON files below dir (recursively), in path order.
QStringList jsonFilesBelow(const QString& dir) {
  QStringList files;
  QDirIterator it(dir, {QStringLiteral("*.json")}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    files.append(it.next());
  }
  files.sort();
  return files;
}

}  // namespace

QString CompareIndex::key(const QString& contract, const QString& implSpec, qint64 seed) {
  return contract + QLatin1Char('\n') + implSpec + QLatin1Char('\n') + QString::number(seed);
}

int CompareIndex::addFile(const QString& file) {
  const QList<CompareResult> results = readCompareFile(file);
  for (const CompareResult& result : results) {
    m_byKey.insert(key(result.candidate.contract, result.candidate.implSpec, result.candidate.seed),
                   result);
  }
  return static_cast<int>(results.size());
}

int CompareIndex::load(const QString& runsDir, const QStringList& runDirs) {
  m_byKey.clear();
  m_errors.clear();
  QStringList files;
  // Report directories: any top-level folder holding comparisons/.
  for (const QString& top :
       QDir(runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    const QString comparisons = runsDir + QLatin1Char('/') + top + QStringLiteral("/comparisons");
    if (QFileInfo(comparisons).isDir()) {
      files += jsonFilesBelow(comparisons);
    }
  }
  for (const QString& run : runDirs) {
    const QString metrics = run + QStringLiteral("/metrics");
    for (const QString& name :
         QDir(metrics).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
      files.append(metrics + QLatin1Char('/') + name);
    }
  }
  for (const QString& file : files) {
    try {
      addFile(file);
    } catch (const h3p::Error& error) {
      m_errors.append(QString::fromStdString(error.what()));
    }
  }
  return size();
}

const CompareResult* CompareIndex::find(const QString& contract, const QString& implSpec,
                                        qint64 seed) const {
  const auto it = m_byKey.constFind(key(contract, implSpec, seed));
  return it == m_byKey.constEnd() ? nullptr : &it.value();
}

QList<CompareResult> CompareIndex::forSeed(const QString& contract, qint64 seed) const {
  QList<CompareResult> results;
  for (const CompareResult& result : m_byKey) {
    if (result.candidate.contract == contract && result.candidate.seed == seed) {
      results.append(result);
    }
  }
  std::sort(results.begin(), results.end(), lessBySeedThenSpec);
  return results;
}

QList<CompareResult> CompareIndex::all() const {
  QList<CompareResult> results = m_byKey.values();
  std::sort(results.begin(), results.end(), lessBySeedThenSpec);
  return results;
}

}  // namespace h3p::ui
