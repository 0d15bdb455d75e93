#include "ui/review/review_pair.h"

#include <QCollator>
#include <QDir>
#include <algorithm>

namespace h3p::ui {

namespace {
QStringList sortedDirs(const QDir& dir) {
  QStringList names = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
  QCollator collator;
  collator.setNumericMode(true);
  std::sort(names.begin(), names.end(), collator);
  return names;
}
}  // namespace

QPair<QString, QString> findReviewPair(const QString& runsDir) {
  const QDir root(runsDir);
  for (const QString& contract : sortedDirs(root)) {
    const QDir candidate(root.filePath(contract + QStringLiteral("/candidate")));
    const QDir provider(root.filePath(contract + QStringLiteral("/provider")));
    if (!candidate.exists() || !provider.exists()) continue;
    for (const QString& seed : sortedDirs(candidate)) {
      if (!seed.startsWith(QStringLiteral("seed-"))) continue;
      const QString c = candidate.filePath(seed);
      const QString p = provider.filePath(seed);
      if (QFileInfo::exists(c + QStringLiteral("/decoded/frames.json")) &&
          QFileInfo::exists(p + QStringLiteral("/decoded/frames.json"))) {
        return {c, p};
      }
    }
  }
  return {};
}

QPair<QString, QString> pairOfRun(const QString& runDir) {
  const QFileInfo seed(QDir::cleanPath(runDir));
  const QFileInfo impl(seed.absolutePath());
  const QDir contract(impl.absolutePath());
  if (impl.fileName() == QStringLiteral("provider")) {
    return {contract.filePath(QStringLiteral("candidate/") + seed.fileName()), seed.filePath()};
  }
  return {seed.filePath(), contract.filePath(QStringLiteral("provider/") + seed.fileName())};
}

}  // namespace h3p::ui
