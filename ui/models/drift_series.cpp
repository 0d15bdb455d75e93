#include "ui/models/drift_series.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "ui/models/compare_result.h"
#include "ui/models/json_file.h"

namespace h3p::ui {

int DriftSeries::firstOver(double threshold) const {
  for (const DriftPoint& point : points) {
    if (point.teacherVideo > threshold || point.teacherAudio > threshold) {
      return point.step;
    }
  }
  return -1;
}

DriftSeries readDriftFile(const QString& file) {
  const QJsonDocument doc = readJsonFile(file);
  const QJsonValue steps = doc.object().value(QStringLiteral("steps"));
  if (!steps.isArray()) {
    failJsonField(file, QStringLiteral("steps"), QStringLiteral("missing or not an array"));
  }
  DriftSeries series;
  series.file = file;
  for (const QJsonValue& value : steps.toArray()) {
    const QJsonObject step = value.toObject();
    const QJsonObject teacher = step.value(QStringLiteral("teacher_forced")).toObject();
    const QJsonObject free = step.value(QStringLiteral("free_running")).toObject();
    series.points.append({step.value(QStringLiteral("step")).toInt(),
                          jsonNumber(teacher.value(QStringLiteral("video_rel_l2"))),
                          jsonNumber(teacher.value(QStringLiteral("audio_rel_l2"))),
                          jsonNumber(free.value(QStringLiteral("video_rel_l2"))),
                          jsonNumber(free.value(QStringLiteral("audio_rel_l2")))});
  }
  return series;
}

QString driftFilePath(const QString& runsDir, const QString& contract, qint64 seed) {
  return runsDir + QLatin1Char('/') + contract + QStringLiteral("/drift-seed-%1.json").arg(seed);
}

}  // namespace h3p::ui
