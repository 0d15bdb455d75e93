// Ablation: sweep files read back, the launcher offering candidate/provider pairs with their
// saved steps, a run as an `ablate` job (fake CLI) with the chosen step and groups, and the
// result shown as a table and a bar chart, kept as one file per sweep.
#include <qcustomplot.h>

#include <QCheckBox>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/common/error.h"
#include "run_tree_fixture.h"
#include "ui/ablation/ablation_result.h"
#include "ui/ablation/ablation_view.h"
#include "ui/controllers/ablation_controller.h"
#include "ui/controllers/job.h"
#include "ui/controllers/jobs_controller.h"
#include "ui/models/runs_tree_model.h"

using namespace h3p::ui;

namespace {

const QString kFakeCli = QStringLiteral(H3P_SOURCE_DIR "/tests/ui/fake_cli.sh");

bool touch(const QString& file) {
  QFile out(file);
  return out.open(QIODevice::WriteOnly) && out.write("{}") == 2;
}

// RUNS/c/{provider,candidate}/seed-5 with `steps` saved provider steps.
QString makeRuns(const QTemporaryDir& dir, int steps) {
  using h3p::ui::test::manifestFor;
  using h3p::ui::test::writeRun;
  const QString provider = writeRun(dir.path(), "c", "provider", 5, manifestFor("provider", 5));
  writeRun(dir.path(), "c", "candidate", 5, manifestFor("candidate", 5));
  writeRun(dir.path(), "c", "candidate@attention=provider", 6,
           manifestFor("candidate:attention=provider", 6));  // no provider run for seed 6
  QDir().mkpath(provider + "/steps");
  for (int s = 0; s < steps; ++s)
    touch(provider + QStringLiteral("/steps/%1.json").arg(s, 3, 10, QChar('0')));
  return dir.path();
}

}  // namespace

class AblationTest : public QObject {
  Q_OBJECT

 private slots:
  void readsSweepFileAndRejectsBrokenOnes();
  void pairsNeedAProviderRunOfTheSameSeed();
  void runStartsAblateJobAndShowsTheSweep();
  void variantRowsAreMarkedAndBanded();
};

void AblationTest::readsSweepFileAndRejectsBrokenOnes() {
  QTemporaryDir dir;
  const QString file = dir.filePath("c/ablation-seed-5-step2.json");
  QDir().mkpath(dir.filePath("c"));
  // The fake CLI writes a sweep in the CLI's format.
  Job job(Job::Kind::Ablate, kFakeCli, {"ablate", "--json", file});
  QSignalSpy finished(&job, &Job::finished);
  job.start();
  QVERIFY(finished.wait(30000));
  const AblationResult result = readAblationFile(file);
  QCOMPARE(result.step, 2);
  QCOMPARE(result.rows.size(), 3);
  QCOMPARE(result.rows.at(2).implSpec, QString("candidate:attention=provider"));
  QCOMPARE(result.rows.at(1).video.relL2, 0.004);
  QVERIFY(result.rows.at(0).video.bitwiseEqual);
  QVERIFY(result.hasFreeRunning);
  QCOMPARE(result.freeAudio.relL2, 0.004);
  QVERIFY(result.label().contains("seed 5, step 2"));
  QCOMPARE(findAblationFiles(dir.path()), QStringList{file});

  QFile broken(dir.filePath("c/ablation-broken.json"));
  QVERIFY(broken.open(QIODevice::WriteOnly));
  broken.write("{\"rows\": 3}");
  broken.close();
  try {
    readAblationFile(broken.fileName());
    QFAIL("no exception");
  } catch (const h3p::InputError& e) {
    QVERIFY2(QString(e.what()).contains("ablation-broken.json: rows"), e.what());
  }
  QCOMPARE(findAblationFiles(dir.path()).size(), 2);
  QCOMPARE(ablationGroups().size(), 10);
}

void AblationTest::pairsNeedAProviderRunOfTheSameSeed() {
  QTemporaryDir dir;
  const int steps = 2 + QRandomGenerator::global()->bounded(6);
  RunsTreeModel runs;
  QCOMPARE(runs.scan(makeRuns(dir, steps)), 3);
  const QList<AblationPair> pairs = AblationController::pairsOf(runs);
  QCOMPARE(pairs.size(), 1);
  QVERIFY(pairs.front().candidateRun.endsWith("/c/candidate/seed-5"));
  QVERIFY(pairs.front().providerRun.endsWith("/c/provider/seed-5"));
  QCOMPARE(pairs.front().savedSteps, steps);
  QCOMPARE(pairs.front().label, QString("c seed 5: candidate"));
}

void AblationTest::runStartsAblateJobAndShowsTheSweep() {
  QTemporaryDir dir;
  RunsTreeModel runs;
  runs.scan(makeRuns(dir, 4));
  AblationView view;
  JobsController jobs;
  jobs.setCliPath(kFakeCli);
  AblationController controller(&view, &jobs);
  controller.setRuns(&runs);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));

  auto* stepBox = view.findChild<QSpinBox*>("ablationStepBox");
  QCOMPARE(stepBox->maximum(), 3);
  stepBox->setValue(2);
  view.findChild<QCheckBox*>("ablationGroup_attention")->setChecked(true);
  view.findChild<QCheckBox*>("ablationGroup_rope")->setChecked(true);
  QCOMPARE(view.sweepList()->count(), 0);

  QSignalSpy finished(&jobs, &JobsController::jobFinished);
  QTest::mouseClick(view.findChild<QPushButton*>("ablationRunButton"), Qt::LeftButton);
  Job* job = controller.currentJob();
  QVERIFY(job != nullptr);
  QVERIFY(!view.findChild<QPushButton*>("ablationRunButton")->isEnabled());
  QVERIFY(view.findChild<QPushButton*>("ablationCancelButton")->isEnabled());
  const QStringList args = job->processArguments();
  QVERIFY2(args.join(' ').contains("ablate --candidate " + dir.path() + "/c/candidate/seed-5"),
           qPrintable(args.join(' ')));
  QCOMPARE(args.at(args.indexOf("--step") + 1), QString("2"));
  QCOMPARE(args.at(args.indexOf("--groups") + 1), QString("attention,rope"));
  QCOMPARE(args.at(args.indexOf("--device") + 1), QString("cpu"));
  const QString out = args.at(args.indexOf("--json") + 1);
  QVERIFY2(QFileInfo(out).fileName().startsWith("ablation-seed-5-step2-"), qPrintable(out));
  QCOMPARE(QFileInfo(out).absolutePath(), QDir(dir.path() + "/c").canonicalPath());

  QVERIFY(finished.wait(30000));
  QCOMPARE(job->state(), Job::State::Succeeded);
  QVERIFY(controller.currentJob() == nullptr);
  QVERIFY(view.findChild<QPushButton*>("ablationRunButton")->isEnabled());
  QCOMPARE(view.sweepList()->count(), 1);
  QCOMPARE(view.sweepList()->currentRow(), 0);
  QCOMPARE(view.table()->rowCount(), 4);  // three rows and the free-running candidate
  QCOMPARE(view.table()->item(1, 0)->text(), QString("candidate"));
  QCOMPARE(view.table()->item(1, 1)->text(), QString("4.000e-03"));
  QCOMPARE(view.table()->item(0, 5)->text(), QString("yes"));
  QCOMPARE(view.chart()->plottableCount(), 2);  // video and audio bars
  auto* bars = qobject_cast<QCPBars*>(view.chart()->plottable(0));
  QVERIFY(bars != nullptr);
  QCOMPARE(bars->data()->size(), 4);
  QCOMPARE(view.chart()->itemCount(), 1);  // the bitwise-equal provider replay is marked

  // A broken sweep shows its error instead of a table.
  controller.showSweep(dir.filePath("nope.json"));
  QCOMPARE(view.table()->rowCount(), 0);
  QVERIFY(view.findChild<QLabel*>("ablationResultTitle")->text().contains("nope.json"));
}

void AblationTest::variantRowsAreMarkedAndBanded() {
  QTemporaryDir dir;
  const QString file = dir.filePath("ablation-variants.json");
  QFile out(file);
  QVERIFY(out.open(QIODevice::WriteOnly));
  out.write(R"({"step": 0, "candidate_spec": "candidate", "provider_spec": "provider", "rows": [
    {"impl_spec": "provider", "variant": false,
     "video": {"rel_l2": 0, "max_abs": 0, "bitwise_equal": true},
     "audio": {"rel_l2": 0, "max_abs": 0, "bitwise_equal": true}},
    {"impl_spec": "candidate", "variant": false,
     "video": {"rel_l2": 0.004, "max_abs": 0.02, "bitwise_equal": false},
     "audio": {"rel_l2": 0.004, "max_abs": 0.02, "bitwise_equal": false}},
    {"impl_spec": "provider:attention=flash", "variant": true,
     "video": {"rel_l2": 0.005, "max_abs": 0.03, "bitwise_equal": false},
     "audio": {"rel_l2": 0.005, "max_abs": 0.03, "bitwise_equal": false}},
    {"impl_spec": "provider:attention=efficient", "variant": true,
     "video": {"rel_l2": 0.0045, "max_abs": 0.03, "bitwise_equal": false},
     "audio": {"rel_l2": 0.005, "max_abs": 0.03, "bitwise_equal": false}},
    {"impl_spec": "provider:attention=math", "variant": true, "error": "out of memory"}]})");
  out.close();
  const AblationResult result = readAblationFile(file);
  QVERIFY(result.rows.at(2).variant && !result.rows.at(1).variant);
  QCOMPARE(result.rows.at(4).error, QString("out of memory"));
  QVERIFY(std::isnan(result.rows.at(4).video.relL2));

  AblationView view;
  view.showSweep(result);
  QCOMPARE(view.table()->item(2, 0)->text(), QString("provider:attention=flash (variant)"));
  QVERIFY(view.table()->item(2, 0)->font().italic());
  QCOMPARE(view.table()->item(4, 5)->text(), QString("not run"));
  QCOMPARE(view.table()->item(4, 0)->toolTip(), QString("out of memory"));
  // The variants' video range (4.5e-3 .. 5e-3) as a band behind the bars, inside the y range.
  QCPItemRect* band = nullptr;
  for (int i = 0; i < view.chart()->itemCount(); ++i) {
    if (auto* rect = qobject_cast<QCPItemRect*>(view.chart()->item(i))) band = rect;
  }
  QVERIFY(band != nullptr);
  QCOMPARE(band->topLeft->coords().y(), 0.005);
  QCOMPARE(band->bottomRight->coords().y(), 0.0045);
  QVERIFY(view.chart()->yAxis->range().upper > 0.005);
}

QTEST_MAIN(AblationTest)
#include "ablation_test.moc"
