#include "ui/models/compare_result.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <cmath>
#include <limits>

#include "ui/models/json_file.h"

namespace h3p::ui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QJsonObject requireObject(const QString& file, const QJsonObject& parent, const QString& key) {
  const QJsonValue value = parent.value(key);
  if (!value.isObject()) {
    failJsonField(
        file, key,
        value.isUndefined() ? QStringLiteral("missing") : QStringLiteral("not an object"));
  }
  return value.toObject();
}

// The array under `key`, empty when the key is absent or null; throws when it is something else.
QJsonArray optionalArray(const QString& file, const QJsonObject& parent, const QString& key) {
  const QJsonValue value = parent.value(key);
  if (!value.isUndefined() && !value.isNull() && !value.isArray()) {
    failJsonField(file, key, QStringLiteral("not an array"));
  }
  return value.toArray();
}

CompareSide readSide(const QJsonObject& object) {
  CompareSide side;
  side.path = object.value(QStringLiteral("path")).toString();
  side.contract = object.value(QStringLiteral("contract")).toString();
  side.implSpec = object.value(QStringLiteral("impl_spec")).toString();
  const QJsonValue seed = object.value(QStringLiteral("seed"));
  side.seed = seed.isDouble() ? seed.toInteger() : -1;
  return side;
}

}  // namespace

double jsonNumber(const QJsonValue& value) {
  if (value.isDouble()) {
    return value.toDouble();
  }
  if (value.isString()) {
    const QString text = value.toString().toLower();
    if (text == QLatin1String("inf") || text == QLatin1String("+inf")) {
      return std::numeric_limits<double>::infinity();
    }
    if (text == QLatin1String("-inf")) {
      return -std::numeric_limits<double>::infinity();
    }
  }
  return kNaN;
}

bool CompareResult::violates(const QString& key, double value) const {
  if (!bounds.present || std::isnan(value)) {
    return false;
  }
  if (key == QLatin1String("psnr_db")) {
    return !std::isnan(bounds.psnrDbMin) && value < bounds.psnrDbMin;
  }
  if (key == QLatin1String("ssim")) {
    return !std::isnan(bounds.ssimMin) && value < bounds.ssimMin;
  }
  if (key == QLatin1String("temporal_rmse")) {
    return !std::isnan(bounds.temporalRmseMax) && value > bounds.temporalRmseMax;
  }
  if (key == QLatin1String("audio_rel_l2")) {
    return !std::isnan(bounds.audioRelL2Max) && value > bounds.audioRelL2Max;
  }
  return false;
}

CompareResult parseCompareObject(const QString& file, const QJsonObject& object) {
  CompareResult result;
  result.file = file;
  result.candidate = readSide(requireObject(file, object, QStringLiteral("candidate")));
  result.provider = readSide(requireObject(file, object, QStringLiteral("provider")));

  // Summary.
  const QJsonObject summary = requireObject(file, object, QStringLiteral("summary"));
  result.psnrDb = jsonNumber(summary.value(QStringLiteral("psnr_db")));
  result.ssim = jsonNumber(summary.value(QStringLiteral("ssim")));
  result.temporalRmse = jsonNumber(summary.value(QStringLiteral("temporal_rmse")));
  result.audioRelL2 = jsonNumber(summary.value(QStringLiteral("audio_rel_l2")));
  result.psnrDbFfmpeg = jsonNumber(summary.value(QStringLiteral("psnr_db_ffmpeg")));
  result.ssimFfmpeg = jsonNumber(summary.value(QStringLiteral("ssim_ffmpeg")));
  const QJsonValue passed = summary.value(QStringLiteral("passed"));
  if (passed.isBool()) {
    result.passed = passed.toBool();
  }

  // Bounds (absent or null: judged without bounds).
  const QJsonValue boundsValue = object.value(QStringLiteral("bounds"));
  result.bounds = {kNaN, kNaN, kNaN, kNaN, false, false};
  if (boundsValue.isObject()) {
    const QJsonObject bounds = boundsValue.toObject();
    result.bounds.present = true;
    result.bounds.psnrDbMin = jsonNumber(bounds.value(QStringLiteral("psnr_db_min")));
    result.bounds.ssimMin = jsonNumber(bounds.value(QStringLiteral("ssim_min")));
    result.bounds.temporalRmseMax = jsonNumber(bounds.value(QStringLiteral("temporal_rmse_max")));
    result.bounds.audioRelL2Max = jsonNumber(bounds.value(QStringLiteral("audio_rel_l2_max")));
    result.bounds.postHoc = bounds.value(QStringLiteral("post_hoc")).toBool();
  }

  for (const QJsonValue& failure : object.value(QStringLiteral("failures")).toArray()) {
    result.failures.append(
        failure.isString()
            ? failure.toString()
            : QString::fromUtf8(QJsonDocument(failure.toObject()).toJson(QJsonDocument::Compact)));
  }

  // Per-frame and per-step series.
  for (const QJsonValue& value : optionalArray(file, object, QStringLiteral("frames"))) {
    const QJsonObject frame = value.toObject();
    result.frames.append({frame.value(QStringLiteral("index")).toInt(),
                          jsonNumber(frame.value(QStringLiteral("psnr_db"))),
                          jsonNumber(frame.value(QStringLiteral("ssim"))),
                          jsonNumber(frame.value(QStringLiteral("psnr_db_ffmpeg"))),
                          jsonNumber(frame.value(QStringLiteral("ssim_ffmpeg")))});
  }
  for (const QJsonValue& value : optionalArray(file, object, QStringLiteral("steps"))) {
    const QJsonObject step = value.toObject();
    result.steps.append({step.value(QStringLiteral("step")).toInt(),
                         jsonNumber(step.value(QStringLiteral("video_rel_l2"))),
                         jsonNumber(step.value(QStringLiteral("audio_rel_l2")))});
  }
  result.stepThreshold = jsonNumber(object.value(QStringLiteral("step_threshold")));
  QJsonValue first = object.value(QStringLiteral("first_step_over_threshold"));
  if (first.isUndefined()) {
    first = summary.value(QStringLiteral("first_step_over_threshold"));
  }
  result.firstStepOverThreshold = first.isDouble() ? first.toInt() : -1;
  return result;
}

QList<CompareResult> readCompareFile(const QString& file) {
  const QJsonDocument doc = readJsonFile(file);
  if (!doc.isObject()) {
    failJsonField(file, QStringLiteral("top level"), QStringLiteral("not an object"));
  }
  const QJsonObject root = doc.object();
  QList<CompareResult> results;
  if (root.contains(QStringLiteral("comparisons"))) {
    const QJsonValue list = root.value(QStringLiteral("comparisons"));
    if (!list.isArray()) {
      failJsonField(file, QStringLiteral("comparisons"), QStringLiteral("not an array"));
    }
    for (const QJsonValue& value : list.toArray()) {
      if (!value.isObject()) {
        failJsonField(file, QStringLiteral("comparisons"),
                      QStringLiteral("element is not an object"));
      }
      results.append(parseCompareObject(file, value.toObject()));
    }
    return results;
  }
  results.append(parseCompareObject(file, root));
  return results;
}

}  // namespace h3p::ui
