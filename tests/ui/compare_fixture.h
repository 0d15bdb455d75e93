#pragma once

#include <QJsonObject>
#include <QString>

namespace h3p::ui::test {

// Figures of one synthetic comparison, as `h3parity compare --json` writes them.
struct CompareFigures {
  QString contract = QStringLiteral("c");
  QString implSpec = QStringLiteral("candidate");
  qint64 seed = 1;
  double psnrDb = 50;
  double ssim = 0.999;
  double temporalRmse = 1e-3;
  double audioRelL2 = 1e-3;
  bool withBounds = true;           // psnr >= 30, ssim >= 0.99, temporal <= 0.01, audio <= 0.05
  int frames = 5;                   // per-frame rows: psnr_db = psnrDb + index, ssim = ssim
  int steps = 4;                    // per-step rows: rel L2 = 1e-3 * 2^step
  bool infiniteFirstFrame = false;  // frame 0's PSNR as the string "inf"
};

// The comparison object (candidate, provider, summary, bounds, failures, frames, steps).
// "passed" follows the bounds as the CLI would judge them.
QJsonObject compareObject(const CompareFigures& figures);

// Writes `object` as JSON to `file` (directories created); false on failure.
bool writeJson(const QString& file, const QJsonObject& object);

}  // namespace h3p::ui::test
