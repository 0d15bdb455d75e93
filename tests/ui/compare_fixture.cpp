#include "compare_fixture.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <cmath>

namespace h3p::ui::test {

QJsonObject compareObject(const CompareFigures& f) {
  QJsonObject candidate{
      {"contract", f.contract},
      {"impl_spec", f.implSpec},
      {"seed", f.seed},
      {"kind", "run"},
      {"path", QStringLiteral("/runs/%1/%2/seed-%3").arg(f.contract, f.implSpec).arg(f.seed)}};
  QJsonObject provider{
      {"contract", f.contract},
      {"impl_spec", "provider"},
      {"seed", f.seed},
      {"kind", "run"},
      {"path", QStringLiteral("/runs/%1/provider/seed-%2").arg(f.contract).arg(f.seed)}};
  QJsonArray failures;
  if (f.withBounds) {
    if (f.psnrDb < 30) failures.append(QStringLiteral("psnr_db %1 < 30").arg(f.psnrDb));
    if (f.ssim < 0.99) failures.append(QStringLiteral("ssim %1 < 0.99").arg(f.ssim));
    if (f.temporalRmse > 0.01) failures.append(QStringLiteral("temporal_rmse > 0.01"));
    if (f.audioRelL2 > 0.05) failures.append(QStringLiteral("audio_rel_l2 > 0.05"));
  }
  QJsonObject summary{{"psnr_db", f.psnrDb},
                      {"ssim", f.ssim},
                      {"temporal_rmse", f.temporalRmse},
                      {"audio_rel_l2", f.audioRelL2},
                      {"psnr_db_ffmpeg", f.psnrDb - 5},
                      {"ssim_ffmpeg", f.ssim - 1e-4},
                      {"frames", f.frames}};
  summary.insert("passed", f.withBounds ? QJsonValue(failures.isEmpty()) : QJsonValue());
  QJsonArray frames;
  for (int i = 0; i < f.frames; ++i) {
    QJsonObject frame{{"index", i},
                      {"ssim", f.ssim},
                      {"psnr_db_ffmpeg", f.psnrDb - 5 + i},
                      {"ssim_ffmpeg", f.ssim}};
    frame.insert("psnr_db",
                 i == 0 && f.infiniteFirstFrame ? QJsonValue("inf") : QJsonValue(f.psnrDb + i));
    frames.append(frame);
  }
  QJsonArray steps;
  for (int s = 0; s < f.steps; ++s) {
    steps.append(QJsonObject{{"step", s},
                             {"video_rel_l2", 1e-3 * std::pow(2.0, s)},
                             {"audio_rel_l2", 0.5e-3 * std::pow(2.0, s)}});
  }
  QJsonObject object{{"candidate", candidate}, {"provider", provider}, {"summary", summary},
                     {"failures", failures},   {"frames", frames},     {"steps", steps},
                     {"step_threshold", 0.01}, {"notes", QJsonArray()}};
  if (f.withBounds) {
    object.insert("bounds", QJsonObject{{"psnr_db_min", 30.0},
                                        {"ssim_min", 0.99},
                                        {"temporal_rmse_max", 0.01},
                                        {"audio_rel_l2_max", 0.05},
                                        {"post_hoc", false}});
  } else {
    object.insert("bounds", QJsonValue());
  }
  return object;
}

bool writeJson(const QString& file, const QJsonObject& object) {
  if (!QDir().mkpath(QFileInfo(file).absolutePath())) {
    return false;
  }
  QFile out(file);
  const QByteArray bytes = QJsonDocument(object).toJson();
  return out.open(QIODevice::WriteOnly | QIODevice::Truncate) && out.write(bytes) == bytes.size();
}

}  // namespace h3p::ui::test
