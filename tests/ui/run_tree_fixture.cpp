#include "run_tree_fixture.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

namespace h3p::ui::test {

QString writeRun(const QString& runsDir, const QString& contract, const QString& implDir,
                 qint64 seed, const QByteArray& manifestJson) {
  const QString seedDir =
      runsDir + '/' + contract + '/' + implDir + QStringLiteral("/seed-%1").arg(seed);
  if (!QDir().mkpath(seedDir)) {
    return {};
  }
  QFile file(seedDir + QStringLiteral("/manifest.json"));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(manifestJson) != manifestJson.size()) {
    return {};
  }
  return seedDir;
}

QByteArray manifestFor(const QString& implSpec, qint64 seed) {
  QJsonObject root;
  root.insert(QStringLiteral("impl_spec"), implSpec);
  root.insert(QStringLiteral("seed"), seed);
  root.insert(QStringLiteral("contract_digest"), QStringLiteral("0123abcd"));
  return QJsonDocument(root).toJson();
}

}  // namespace h3p::ui::test
