// h3parity-figures: the workbench's plots rendered headlessly as PNG, for the evidence bundle.
// Thin: reads a runs directory as the workbench does (RunsTreeModel, CompareIndex, drift and
// ablation files) and saves the same widgets (FrameMetricsPlot, StepDriftPlot, AblationView's
// bar chart) at a stated size. Runs on the offscreen platform whatever the environment says.
//   h3parity-figures --runs DIR --out DIR [--width 1200] [--height 800] [--json FILE]
// Per contract and seed with comparisons: frames-<contract>-seed-<n>.png (per-frame PSNR/SSIM
// with the bounds) and drift-<contract>-seed-<n>.png (per-step drift, first-drift markers);
// per ablation file: ablation-<contract>-<stem>.png. --json lists them:
// {"figures": [{"file", "kind", "title", "contract", "seed", "width", "height", ...}]}.
// Exit 0 written, 2 bad arguments or an unreadable input, 1 a PNG that could not be written.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTextStream>
#include <qcustomplot.h>

#include "core/common/error.h"
#include "ui/ablation/ablation_result.h"
#include "ui/ablation/ablation_view.h"
#include "ui/models/compare_index.h"
#include "ui/models/drift_series.h"
#include "ui/models/runs_tree_model.h"
#include "ui/plots/frame_metrics_plot.h"
#include "ui/plots/step_drift_plot.h"

namespace {

int fail(const QString& what, int code = 2) {
  QTextStream(stderr) << "error: " << what << "\n";
  return code;
}

}  // namespace

int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("h3parity-figures"));
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Render the workbench's plots of a runs directory as PNG files."));
  parser.addHelpOption();
  const QCommandLineOption runsOpt(QStringLiteral("runs"), QStringLiteral("Runs directory."),
                                   QStringLiteral("DIR"));
  const QCommandLineOption outOpt(QStringLiteral("out"), QStringLiteral("Output directory."),
                                  QStringLiteral("DIR"));
  const QCommandLineOption widthOpt(QStringLiteral("width"), QStringLiteral("PNG width (px)."),
                                    QStringLiteral("N"), QStringLiteral("1200"));
  const QCommandLineOption heightOpt(QStringLiteral("height"), QStringLiteral("PNG height (px)."),
                                     QStringLiteral("N"), QStringLiteral("800"));
  const QCommandLineOption jsonOpt(QStringLiteral("json"), QStringLiteral("List of figures."),
                                   QStringLiteral("FILE"));
  parser.addOptions({runsOpt, outOpt, widthOpt, heightOpt, jsonOpt});
  parser.process(app);
  bool okW = false, okH = false;
  const int width = parser.value(widthOpt).toInt(&okW);
  const int height = parser.value(heightOpt).toInt(&okH);
  if (!okW || !okH || width < 64 || height < 64 || width > 8192 || height > 8192) {
    return fail(QStringLiteral("--width/--height: integers in [64, 8192]"));
  }
  const QString runs = parser.value(runsOpt);
  const QString out = parser.value(outOpt);
  if (runs.isEmpty() || !QFileInfo(runs).isDir()) return fail(runs + QStringLiteral(": --runs: not a directory"));
  if (out.isEmpty() || !QDir().mkpath(out)) return fail(out + QStringLiteral(": --out: cannot create"));

  // The runs as the workbench reads them.
  h3p::ui::RunsTreeModel tree;
  tree.scan(runs);
  h3p::ui::CompareIndex index;
  index.load(tree.runsDirectory(), tree.runDirectories());
  if (!index.errors().isEmpty()) return fail(index.errors().join(QStringLiteral("; ")));

  QJsonArray figures;
  auto record = [&](const QString& file, const QString& kind, const QString& title,
                    const QJsonObject& extra) {
    QJsonObject o{{QStringLiteral("file"), file}, {QStringLiteral("kind"), kind},
                  {QStringLiteral("title"), title}, {QStringLiteral("width"), width},
                  {QStringLiteral("height"), height}};
    for (auto it = extra.begin(); it != extra.end(); ++it) o.insert(it.key(), it.value());
    figures.append(o);
  };
  try {
    QSet<QString> seeds;
    for (const h3p::ui::CompareResult& r : index.all()) {
      const QString contract = r.candidate.contract;
      const qint64 seed = r.candidate.seed;
      const QString key = contract + QLatin1Char('/') + QString::number(seed);
      if (seeds.contains(key)) continue;
      seeds.insert(key);
      const QList<h3p::ui::CompareResult> results = index.forSeed(contract, seed);
      const QString stem = QStringLiteral("%1-seed-%2.png").arg(contract).arg(seed);
      h3p::ui::FrameMetricsPlot frames;
      frames.resize(width, height);
      frames.setResults(results);
      if (!frames.savePng(out + QStringLiteral("/frames-") + stem, width, height)) {
        return fail(out + QStringLiteral("/frames-") + stem + QStringLiteral(": cannot write"), 1);
      }
      record(QStringLiteral("frames-") + stem, QStringLiteral("frame_metrics"),
             QStringLiteral("%1 seed %2: per-frame PSNR and SSIM with the bounds").arg(contract).arg(seed),
             {{QStringLiteral("contract"), contract}, {QStringLiteral("seed"), seed}});
      std::optional<h3p::ui::DriftSeries> teacher;
      const QString driftFile = h3p::ui::driftFilePath(tree.runsDirectory(), contract, seed);
      if (QFileInfo::exists(driftFile)) teacher = h3p::ui::readDriftFile(driftFile);
      h3p::ui::StepDriftPlot drift;
      drift.resize(width, height);
      drift.setData(results, teacher);
      if (!drift.savePng(out + QStringLiteral("/drift-") + stem, width, height)) {
        return fail(out + QStringLiteral("/drift-") + stem + QStringLiteral(": cannot write"), 1);
      }
      QJsonArray markers;
      for (int m : drift.firstDriftMarkers()) markers.append(m);
      record(QStringLiteral("drift-") + stem, QStringLiteral("step_drift"),
             QStringLiteral("%1 seed %2: per-step drift, first drifting step marked").arg(contract).arg(seed),
             {{QStringLiteral("contract"), contract}, {QStringLiteral("seed"), seed},
              {QStringLiteral("first_drift_steps"), markers}});
    }
    for (const QString& file : h3p::ui::findAblationFiles(tree.runsDirectory())) {
      const h3p::ui::AblationResult result = h3p::ui::readAblationFile(file);
      const QFileInfo info(file);
      const QString name = QStringLiteral("ablation-%1-%2.png")
                               .arg(info.dir().dirName(), info.completeBaseName());
      h3p::ui::AblationView view;
      view.resize(width, height);
      view.showSweep(result);
      if (!view.chart()->savePng(out + QLatin1Char('/') + name, width, height)) {
        return fail(out + QLatin1Char('/') + name + QStringLiteral(": cannot write"), 1);
      }
      record(name, QStringLiteral("ablation"),
             QStringLiteral("%1: relative L2 per impl spec, step %2").arg(info.dir().dirName()).arg(result.step),
             {{QStringLiteral("contract"), info.dir().dirName()}, {QStringLiteral("step"), result.step}});
    }
  } catch (const h3p::Error& e) {
    return fail(QString::fromUtf8(e.what()));
  }
  if (parser.isSet(jsonOpt)) {
    QSaveFile json(parser.value(jsonOpt));
    if (!json.open(QIODevice::WriteOnly)) return fail(parser.value(jsonOpt) + QStringLiteral(": cannot write"), 1);
    json.write(QJsonDocument(QJsonObject{{QStringLiteral("figures"), figures}}).toJson());
    if (!json.commit()) return fail(parser.value(jsonOpt) + QStringLiteral(": cannot write"), 1);
  }
  QTextStream(stdout) << figures.size() << " figures written to " << out << "\n";
  return 0;
}
