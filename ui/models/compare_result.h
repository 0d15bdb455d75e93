#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace h3p::ui {

// One side of a comparison as recorded by `h3parity compare --json`.
struct CompareSide {
  QString path;      // run directory or video file, as recorded
  QString contract;  // contract name (runs only)
  QString implSpec;  // impl spec (runs only)
  qint64 seed = -1;  // -1 when unknown (a video file)
};

// Quality limits recorded with the comparison; a limit that is absent is NaN.
struct CompareBounds {
  double psnrDbMin;
  double ssimMin;
  double temporalRmseMax;
  double audioRelL2Max;
  bool postHoc = false;
  bool present = false;  // false when the comparison was judged without bounds
};

// One frame's pixel metrics (NaN where absent; +inf PSNR for identical frames).
struct FrameMetrics {
  int index = 0;
  double psnrDb;
  double ssim;
  double psnrDbFfmpeg;
  double ssimFfmpeg;
};

// One sampling step's velocity drift, candidate against provider.
struct StepDrift {
  int step = 0;
  double videoRelL2;
  double audioRelL2;
};

// A comparison read back from its JSON file (ARCHITECTURE.md "compare --json keys").
struct CompareResult {
  QString file;  // the JSON file it was read from
  CompareSide candidate, provider;
  CompareBounds bounds;
  // Summary figures; NaN when absent.
  double psnrDb, ssim, temporalRmse, audioRelL2, psnrDbFfmpeg, ssimFfmpeg;
  std::optional<bool> passed;  // empty when there were no bounds
  QStringList failures;        // human-readable failure lines
  QList<FrameMetrics> frames;
  QList<StepDrift> steps;
  double stepThreshold;  // NaN when absent
  int firstStepOverThreshold = -1;

  // True when the candidate side is a provider variant (a `provider:...` spec): the provider's
  // own spread, drawn as a band behind the candidates' curves.
  bool isProviderVariant() const { return candidate.implSpec.startsWith(QLatin1String("provider:")); }

  // True when `value` of the named summary column violates the bounds ("psnr_db", "ssim",
  // "temporal_rmse", "audio_rel_l2"); false without bounds or for other columns.
  bool violates(const QString& key, double value) const;
};

// Reads one comparison object (the top level of a `compare --json` file or one element of a
// report's "comparisons"). Throws h3p::InputError("<file>: <field>: <what>") when required
// keys ("summary", "candidate", "provider") are missing or of the wrong type.
CompareResult parseCompareObject(const QString& file, const QJsonObject& object);

// Reads a `compare --json` file: one comparison, or {"comparisons": [...]} for several.
// Throws h3p::InputError naming the file when it cannot be read or parsed.
QList<CompareResult> readCompareFile(const QString& file);

// A JSON number, or the strings "inf"/"-inf"/"nan" the CLI writes for non-finite values, as a
// double; NaN for null, absent or anything else.
double jsonNumber(const QJsonValue& value);

}  // namespace h3p::ui
