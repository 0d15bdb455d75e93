#include "ui/models/run_details.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "ui/models/compare_result.h"
#include "ui/models/json_file.h"

namespace h3p::ui {

namespace {

// Display order of the known numerics fields (manifest.json environment.numerics); fields not
// listed follow, by name.
const QStringList& fieldOrder() {
  // clang-format off
  static const QStringList order{
      "cpu", "cpu.model", "cpu.isa", "cpu.aten_capability", "cpu.openblas_core", "cpu.onednn",
      "cpu.mkl", "cpu.threads",
      "torch", "torch.version", "torch.build_sha256", "torch.cuda",
      "device",
      "cuda", "cuda.name", "cuda.compute_capability", "cuda.sm_count", "cuda.memory_bytes",
      "cuda.driver", "cuda.runtime", "cuda.cublas", "cuda.cublaslt", "cuda.cudnn",
      "attention", "attention.requested", "attention.selected",
      "kernels", "plugin", "env"};
  // clang-format on
  return order;
}

int fieldRank(const QString& path) {
  const qsizetype rank = fieldOrder().indexOf(path);
  return rank < 0 ? static_cast<int>(fieldOrder().size()) : static_cast<int>(rank);
}

bool isInteger(const QJsonValue& value) {
  if (!value.isDouble()) return false;
  const double number = value.toDouble();
  return std::isfinite(number) && number == std::trunc(number);
}

QString valueText(const QJsonValue& value) {
  switch (value.type()) {
    case QJsonValue::String:
      return value.toString();
    case QJsonValue::Bool:
      return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Null:
      return QStringLiteral("null");
    case QJsonValue::Double:
      if (isInteger(value) && std::abs(value.toDouble()) < 9.0e15) {
        return QString::number(static_cast<qint64>(value.toDouble()));
      }
      return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
    case QJsonValue::Array: {
      QStringList parts;
      for (const QJsonValue& element : value.toArray()) parts.append(valueText(element));
      return parts.isEmpty() ? QStringLiteral("(none)") : parts.join(QStringLiteral(", "));
    }
    case QJsonValue::Object:
      return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Undefined:
      break;
  }
  return {};
}

// Appends `value` under `path` to rows: objects become one row per leaf, dotted.
void flatten(const QString& path, const QJsonValue& value, QList<RunDetailsRow>& rows) {
  if (!value.isObject()) {
    rows.append({path, valueText(value)});
    return;
  }
  const QJsonObject object = value.toObject();
  if (object.isEmpty()) {
    rows.append({path, QStringLiteral("(none)")});
    return;
  }
  QStringList keys = object.keys();
  const auto child = [&path](const QString& key) {
    return path.isEmpty() ? key : path + '.' + key;
  };
  std::stable_sort(keys.begin(), keys.end(), [&](const QString& a, const QString& b) {
    const int rankA = fieldRank(child(a));
    const int rankB = fieldRank(child(b));
    return rankA != rankB ? rankA < rankB : a < b;
  });
  for (const QString& key : keys) flatten(child(key), object.value(key), rows);
}

QList<RunDetailsRow> flattenNumerics(const QJsonObject& numerics) {
  QList<RunDetailsRow> rows;
  if (!numerics.isEmpty()) flatten(QString(), numerics, rows);
  return rows;
}

// Checks the types of the fields environment.numerics holds against the format; each mismatch
// appends "<file>: environment.numerics.<field>: <what>". Absent fields are not errors: the
// recorder leaves out what a library cannot tell (ops/numerics_env.h), and older recorders
// wrote fewer fields.
class NumericsChecker {
 public:
  NumericsChecker(const QString& file, QStringList& errors) : m_file(file), m_errors(errors) {}

  void check(const QJsonObject& numerics) {
    if (const auto cpu = object(numerics, QStringLiteral("cpu"))) {
      for (const char* key : {"model", "aten_capability", "openblas_core", "onednn", "mkl"}) {
        string(*cpu, QStringLiteral("cpu"), QLatin1String(key));
      }
      stringArray(*cpu, QStringLiteral("cpu"), QStringLiteral("isa"));
      const QJsonValue threads = cpu->value(QStringLiteral("threads"));
      if (!threads.isUndefined() && !isInteger(threads)) {
        fail(QStringLiteral("cpu.threads"), describe(threads, "an integer"));
      }
    }
    if (const auto torch = object(numerics, QStringLiteral("torch"))) {
      string(*torch, QStringLiteral("torch"), QStringLiteral("version"));
      string(*torch, QStringLiteral("torch"), QStringLiteral("build_sha256"));
      const QJsonValue cuda = torch->value(QStringLiteral("cuda"));
      if (!cuda.isUndefined() && !cuda.isString() && !cuda.isNull()) {
        fail(QStringLiteral("torch.cuda"), describe(cuda, "a string or null"));
      }
    }
    const QJsonValue device = numerics.value(QStringLiteral("device"));
    if (!device.isUndefined() && device != QJsonValue(QStringLiteral("cpu")) &&
        device != QJsonValue(QStringLiteral("cuda"))) {
      fail(QStringLiteral("device"), describe(device, "\"cpu\" or \"cuda\""));
    }
    object(numerics, QStringLiteral("cuda"));
    if (const auto attention = object(numerics, QStringLiteral("attention"))) {
      string(*attention, QStringLiteral("attention"), QStringLiteral("requested"));
      string(*attention, QStringLiteral("attention"), QStringLiteral("selected"));
    }
    if (const auto kernels = object(numerics, QStringLiteral("kernels"))) {
      for (const QString& key : kernels->keys()) string(*kernels, QStringLiteral("kernels"), key);
    }
    object(numerics, QStringLiteral("plugin"));
    if (const auto env = object(numerics, QStringLiteral("env"))) {
      for (const QString& key : env->keys()) string(*env, QStringLiteral("env"), key);
    }
  }

 private:
  void fail(const QString& field, const QString& what) {
    m_errors.append(m_file + QStringLiteral(": environment.numerics.") + field + ": " + what);
  }

  static QString describe(const QJsonValue& value, const char* expected) {
    return QStringLiteral("%1 is not %2").arg(valueText(value).left(60), QLatin1String(expected));
  }

  // The object under `key`; empty (and an error when something else is there) otherwise.
  std::optional<QJsonObject> object(const QJsonObject& parent, const QString& key) {
    const QJsonValue value = parent.value(key);
    if (value.isObject()) return value.toObject();
    if (!value.isUndefined()) fail(key, describe(value, "an object"));
    return std::nullopt;
  }

  void string(const QJsonObject& group, const QString& groupName, const QString& key) {
    const QJsonValue value = group.value(key);
    if (!value.isUndefined() && !value.isString()) {
      fail(groupName + '.' + key, describe(value, "a string"));
    }
  }

  void stringArray(const QJsonObject& group, const QString& groupName, const QString& key) {
    const QJsonValue value = group.value(key);
    const QJsonArray array = value.toArray();
    const bool ok =
        value.isArray() &&
        std::all_of(array.begin(), array.end(), [](const QJsonValue& v) { return v.isString(); });
    if (!value.isUndefined() && !ok)
      fail(groupName + '.' + key, describe(value, "an array of strings"));
  }

  QString m_file;
  QStringList& m_errors;
};

// steps/NNN.json sidecars of a run.
int countSavedSteps(const QString& runDir) {
  static const QRegularExpression sidecar(QStringLiteral("^\\d{3,}\\.json$"));
  const QStringList files =
      QDir(runDir + QStringLiteral("/steps")).entryList({QStringLiteral("*.json")}, QDir::Files);
  return static_cast<int>(std::count_if(files.begin(), files.end(), [](const QString& name) {
    return sidecar.match(name).hasMatch();
  }));
}

std::optional<SegmentCheck> parseCheck(const QString& name) {
  if (name == QLatin1String("initial")) return SegmentCheck::Initial;
  if (name == QLatin1String("verified")) return SegmentCheck::Verified;
  if (name == QLatin1String("accepted")) return SegmentCheck::Accepted;
  if (name == QLatin1String("unchecked")) return SegmentCheck::Unchecked;
  return std::nullopt;
}

qint64 requireInteger(const QString& file, const QString& field, const QJsonValue& value) {
  if (!isInteger(value) || value.toDouble() < 0) {
    failJsonField(file, field,
                  value.isUndefined()
                      ? QStringLiteral("missing (expected an integer >= 0)")
                      : valueText(value).left(60) + QStringLiteral(" is not an integer >= 0"));
  }
  return static_cast<qint64>(value.toDouble());
}

double requireNumber(const QString& file, const QString& field, const QJsonValue& value) {
  // The CLI writes non-finite values as the strings "inf", "-inf", "nan".
  const QString text = value.toString();
  const bool nonFinite =
      value.isString() && (text == QLatin1String("inf") || text == QLatin1String("-inf") ||
                           text == QLatin1String("nan"));
  if (!value.isDouble() && !nonFinite) {
    failJsonField(file, field,
                  value.isUndefined()
                      ? QStringLiteral("missing (expected a number)")
                      : valueText(value).left(60) + QStringLiteral(" is not a number"));
  }
  return jsonNumber(value);
}

QString requireString(const QString& file, const QString& field, const QJsonValue& value) {
  if (!value.isString()) {
    failJsonField(file, field,
                  value.isUndefined()
                      ? QStringLiteral("missing (expected a string)")
                      : valueText(value).left(60) + QStringLiteral(" is not a string"));
  }
  return value.toString();
}

RunSegment parseSegment(const QString& file, int position, const QJsonValue& value) {
  const QString at = QStringLiteral("segments[%1]").arg(position);
  if (!value.isObject()) failJsonField(file, at, QStringLiteral("not an object"));
  const QJsonObject object = value.toObject();
  const auto field = [&at](const char* key) { return at + '.' + QLatin1String(key); };

  RunSegment segment;
  const qint64 index =
      requireInteger(file, field("segment"), object.value(QStringLiteral("segment")));
  if (index != position) {
    failJsonField(
        file, field("segment"),
        QStringLiteral("%1, expected %2 (segments in order from 0)").arg(index).arg(position));
  }
  segment.index = position;
  segment.firstStep =
      requireInteger(file, field("first_step"), object.value(QStringLiteral("first_step")));

  const QString checkName =
      requireString(file, field("check"), object.value(QStringLiteral("check")));
  const std::optional<SegmentCheck> check = parseCheck(checkName);
  if (!check.has_value()) {
    failJsonField(
        file, field("check"),
        QStringLiteral("\"%1\" is none of initial, verified, accepted, unchecked").arg(checkName));
  }
  if ((*check == SegmentCheck::Initial) != (position == 0)) {
    failJsonField(file, field("check"),
                  position == 0
                      ? QStringLiteral("\"%1\": the first segment is \"initial\"").arg(checkName)
                      : QStringLiteral("\"initial\" on a segment after the first"));
  }
  segment.check = *check;

  const QJsonValue changed = object.value(QStringLiteral("changed"));
  if (!changed.isUndefined() && !changed.isNull()) {
    if (!changed.isArray()) failJsonField(file, field("changed"), QStringLiteral("not an array"));
    const QJsonArray list = changed.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
      segment.changed.append(
          requireString(file, field("changed") + QStringLiteral("[%1]").arg(i), list.at(i)));
    }
  }

  // The saved steps recomputed before the segment continued.
  const QJsonValue recomputedList = object.value(QStringLiteral("recomputed_steps"));
  if (!recomputedList.isUndefined() && !recomputedList.isNull()) {
    if (!recomputedList.isArray()) {
      failJsonField(file, field("recomputed_steps"), QStringLiteral("not an array"));
    }
    const QJsonArray list = recomputedList.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
      segment.recomputedSteps.append(requireInteger(
          file, field("recomputed_steps") + QStringLiteral("[%1]").arg(i), list.at(i)));
    }
  }

  const QJsonValue difference = object.value(QStringLiteral("difference"));
  if (!difference.isUndefined() && !difference.isNull()) {
    if (!difference.isObject()) {
      failJsonField(file, field("difference"), QStringLiteral("not an object or null"));
    }
    const QJsonObject d = difference.toObject();
    const QString at = field("difference");
    SegmentDifference parsed;
    const QJsonValue step = d.value(QStringLiteral("step"));
    if (!step.isUndefined()) {
      parsed.step = requireInteger(file, at + QStringLiteral(".step"), step);
    } else if (!segment.recomputedSteps.isEmpty()) {
      parsed.step = segment.recomputedSteps.back();
    }
    parsed.output =
        requireString(file, at + QStringLiteral(".output"), d.value(QStringLiteral("output")));
    parsed.relL2 =
        requireNumber(file, at + QStringLiteral(".rel_l2"), d.value(QStringLiteral("rel_l2")));
    parsed.maxAbs =
        requireNumber(file, at + QStringLiteral(".max_abs"), d.value(QStringLiteral("max_abs")));
    segment.difference = parsed;
  }

  const QJsonValue host = object.value(QStringLiteral("host"));
  if (!host.isUndefined()) segment.host = requireString(file, field("host"), host);

  // null where the run did not record its environment.
  const QJsonValue numerics = object.value(QStringLiteral("numerics"));
  if (!numerics.isUndefined() && !numerics.isNull()) {
    if (!numerics.isObject()) {
      failJsonField(file, field("numerics"), QStringLiteral("not an object or null"));
    }
    segment.numerics = flattenNumerics(numerics.toObject());
  }
  return segment;
}

// Parses segments.json; throws h3p::InputError("<file>: <field>: <what>").
QList<RunSegment> parseSegments(const QString& file, int savedSteps) {
  const QJsonDocument doc = readJsonFile(file);
  if (!doc.isObject())
    failJsonField(file, QStringLiteral("top level"), QStringLiteral("not an object"));
  const QJsonObject root = doc.object();
  const QJsonValue version = root.value(QStringLiteral("format_version"));
  if (version != QJsonValue(1)) {
    failJsonField(file, QStringLiteral("format_version"),
                  version.isUndefined()
                      ? QStringLiteral("missing (expected 1)")
                      : valueText(version).left(20) +
                            QStringLiteral(" is not supported (this studio reads 1)"));
  }
  const QJsonValue list = root.value(QStringLiteral("segments"));
  if (!list.isArray()) {
    failJsonField(file, QStringLiteral("segments"),
                  list.isUndefined() ? QStringLiteral("missing") : QStringLiteral("not an array"));
  }
  const QJsonArray array = list.toArray();
  if (array.isEmpty()) failJsonField(file, QStringLiteral("segments"), QStringLiteral("empty"));

  QList<RunSegment> segments;
  for (qsizetype i = 0; i < array.size(); ++i) {
    RunSegment segment = parseSegment(file, static_cast<int>(i), array.at(i));
    const QString at = QStringLiteral("segments[%1].first_step").arg(i);
    if (i == 0 && segment.firstStep != 0) {
      failJsonField(file, at, QStringLiteral("%1, expected 0").arg(segment.firstStep));
    }
    // Equal first steps are allowed: a resume that stopped before computing a step may be
    // followed by another at the same step.
    if (i > 0 && segment.firstStep < segments.back().firstStep) {
      failJsonField(file, at,
                    QStringLiteral("%1 is before segment %2's first step %3")
                        .arg(segment.firstStep)
                        .arg(i - 1)
                        .arg(segments.back().firstStep));
    }
    segments.append(segment);
  }
  // Segment k runs up to the step before segment k+1; the last one to the last saved step.
  for (qsizetype i = 0; i < segments.size(); ++i) {
    segments[i].lastStep =
        i + 1 < segments.size() ? segments[i + 1].firstStep - 1 : qint64{savedSteps} - 1;
  }
  return segments;
}

QString number3(double value) { return QString::number(value, 'g', 3); }

}  // namespace

QString segmentCheckName(SegmentCheck check) {
  switch (check) {
    case SegmentCheck::Initial:
      return QStringLiteral("initial");
    case SegmentCheck::Verified:
      return QStringLiteral("verified");
    case SegmentCheck::Accepted:
      return QStringLiteral("accepted");
    case SegmentCheck::Unchecked:
      return QStringLiteral("unchecked");
  }
  return {};
}

QString RunSegment::describe() const {
  QString range;
  if (lastStep < firstStep) {
    range = QStringLiteral("no steps (from step %1)").arg(firstStep);
  } else if (lastStep == firstStep) {
    range = QStringLiteral("step %1").arg(firstStep);
  } else {
    range = QStringLiteral("steps %1-%2").arg(firstStep).arg(lastStep);
  }
  if (check == SegmentCheck::Initial) {
    return QStringLiteral("%1: segment %2 (initial%3)")
        .arg(range)
        .arg(index)
        .arg(host.isEmpty() ? QString() : QStringLiteral(", host ") + host);
  }
  QString line =
      QStringLiteral("%1: segment %2, %3: ").arg(range).arg(index).arg(segmentCheckName(check));
  line += changed.isEmpty() ? QStringLiteral("no changed field recorded")
                            : QStringLiteral("changed ") + changed.join(QStringLiteral(", "));
  if (difference.has_value()) {
    line +=
        QStringLiteral("; %1differs in %2, rel L2 %3, max abs %4")
            .arg(difference->step.has_value() ? QStringLiteral("step %1 ").arg(*difference->step)
                                              : QString(),
                 difference->output, number3(difference->relL2), number3(difference->maxAbs));
  } else if (recomputedSteps.isEmpty()) {
    line += QStringLiteral("; no step recomputed");
  } else {
    QStringList steps;
    for (qint64 step : recomputedSteps) steps.append(QString::number(step));
    line += QStringLiteral("; %1 %2 recomputed bitwise equal")
                .arg(steps.size() == 1 ? QStringLiteral("step") : QStringLiteral("steps"),
                     steps.join(QStringLiteral(", ")));
  }
  if (!host.isEmpty()) line += QStringLiteral("; host ") + host;
  return line;
}

QString RunDetails::value(const QString& field) const {
  for (const RunDetailsRow& row : numerics) {
    if (row.field == field) return row.value;
  }
  return {};
}

RunSegments readRunSegments(const QString& runDir) {
  RunSegments result;
  result.savedSteps = countSavedSteps(runDir);
  const QString file = runDir + QStringLiteral("/segments.json");
  result.present = QFileInfo::exists(file);
  if (!result.present) return result;
  try {
    result.segments = parseSegments(file, result.savedSteps);
  } catch (const h3p::Error& e) {
    result.error = QString::fromStdString(e.what());
    return result;
  }
  result.mixed = std::any_of(result.segments.begin(), result.segments.end(),
                             [](const RunSegment& s) { return s.check == SegmentCheck::Accepted; });
  return result;
}

RunDetails readRunDetails(const QString& runDir) {
  RunDetails details;
  details.runDir = QFileInfo(runDir).absoluteFilePath();
  const QString file = details.runDir + QStringLiteral("/manifest.json");
  try {
    const QJsonDocument doc = readJsonFile(file);
    if (!doc.isObject())
      failJsonField(file, QStringLiteral("top level"), QStringLiteral("not an object"));
    const QJsonValue environment = doc.object().value(QStringLiteral("environment"));
    if (!environment.isUndefined() && !environment.isObject()) {
      failJsonField(file, QStringLiteral("environment"), QStringLiteral("not an object"));
    }
    const QJsonValue numerics = environment.toObject().value(QStringLiteral("numerics"));
    if (!numerics.isUndefined()) {
      if (!numerics.isObject()) {
        failJsonField(file, QStringLiteral("environment.numerics"),
                      QStringLiteral("not an object"));
      }
      details.numericsRecorded = true;
      details.numerics = flattenNumerics(numerics.toObject());
      NumericsChecker(file, details.manifestErrors).check(numerics.toObject());
    }
  } catch (const h3p::Error& e) {
    details.manifestErrors.append(QString::fromStdString(e.what()));
  }

  const RunSegments segments = readRunSegments(details.runDir);
  details.savedSteps = segments.savedSteps;
  details.hasSegments = segments.present;
  details.segments = segments.segments;
  details.mixed = segments.mixed;
  details.segmentsError = segments.error;
  return details;
}

}  // namespace h3p::ui
