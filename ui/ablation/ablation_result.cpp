#include "ui/ablation/ablation_result.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

#include "ui/models/compare_result.h"
#include "ui/models/json_file.h"

namespace h3p::ui {

namespace {

AblationDiff readDiff(const QJsonObject& object) {
  return {jsonNumber(object.value(QStringLiteral("rel_l2"))),
          jsonNumber(object.value(QStringLiteral("max_abs"))),
          object.value(QStringLiteral("bitwise_equal")).toBool()};
}

}  // namespace

QString AblationResult::label() const {
  static const QRegularExpression seedPattern(QStringLiteral("seed-(\\d+)"));
  const QRegularExpressionMatch match = seedPattern.match(candidateRun);
  const QString seed =
      match.hasMatch() ? QStringLiteral("seed %1, ").arg(match.captured(1)) : QString();
  return QStringLiteral("%1step %2: %3 vs %4 — %5")
      .arg(seed)
      .arg(step)
      .arg(candidateSpec, providerSpec, QFileInfo(file).fileName());
}

AblationResult readAblationFile(const QString& file) {
  const QJsonDocument doc = readJsonFile(file);
  const QJsonObject root = doc.object();
  const QJsonValue rows = root.value(QStringLiteral("rows"));
  if (!rows.isArray()) {
    failJsonField(file, QStringLiteral("rows"), QStringLiteral("missing or not an array"));
  }
  AblationResult result;
  result.file = file;
  result.candidateRun = root.value(QStringLiteral("candidate_run")).toString();
  result.providerRun = root.value(QStringLiteral("provider_run")).toString();
  result.candidateSpec = root.value(QStringLiteral("candidate_spec")).toString();
  result.providerSpec = root.value(QStringLiteral("provider_spec")).toString();
  result.step = root.value(QStringLiteral("step")).toInt();
  for (const QJsonValue& value : rows.toArray()) {
    const QJsonObject row = value.toObject();
    if (!row.value(QStringLiteral("impl_spec")).isString()) {
      failJsonField(file, QStringLiteral("rows.impl_spec"),
                    QStringLiteral("missing or not a string"));
    }
    const QString error = row.value(QStringLiteral("error")).toString();
    const AblationDiff notRun{std::nan(""), std::nan(""), false};
    result.rows.append({row.value(QStringLiteral("impl_spec")).toString(),
                        row.value(QStringLiteral("what")).toString(),
                        error.isEmpty() ? readDiff(row.value(QStringLiteral("video")).toObject())
                                        : notRun,
                        error.isEmpty() ? readDiff(row.value(QStringLiteral("audio")).toObject())
                                        : notRun,
                        jsonNumber(row.value(QStringLiteral("seconds"))),
                        row.value(QStringLiteral("variant")).toBool(), error});
  }
  const QJsonValue free = root.value(QStringLiteral("free_running"));
  if (free.isObject()) {
    result.hasFreeRunning = true;
    result.freeVideo = readDiff(free.toObject().value(QStringLiteral("video")).toObject());
    result.freeAudio = readDiff(free.toObject().value(QStringLiteral("audio")).toObject());
  }
  return result;
}

QStringList findAblationFiles(const QString& runsDir) {
  QFileInfoList found;
  const QDir root(runsDir);
  for (const QString& contract : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    found += QDir(root.filePath(contract))
                 .entryInfoList({QStringLiteral("ablation-*.json")}, QDir::Files, QDir::Name);
  }
  std::stable_sort(found.begin(), found.end(), [](const QFileInfo& a, const QFileInfo& b) {
    return a.lastModified() > b.lastModified();
  });
  QStringList files;
  for (const QFileInfo& info : found) {
    files.append(info.absoluteFilePath());
  }
  return files;
}

QStringList ablationGroups() {
  return {QStringLiteral("gemm"),  QStringLiteral("attention"), QStringLiteral("swiglu"),
          QStringLiteral("adaln"), QStringLiteral("qk_norm"),   QStringLiteral("rope"),
          QStringLiteral("norm"),  QStringLiteral("residual"),  QStringLiteral("embed"),
          QStringLiteral("head")};
}

}  // namespace h3p::ui
