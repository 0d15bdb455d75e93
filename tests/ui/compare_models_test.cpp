// Compare results read back from JSON, the comparison index of a runs directory, pass/fail
// badges in the runs tree, the summary table with failing values marked and its Markdown / CSV
// exports, and teacher-forced drift files.
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <functional>

#include "compare_fixture.h"
#include "core/common/error.h"
#include "run_tree_fixture.h"
#include "ui/models/compare_index.h"
#include "ui/models/compare_result.h"
#include "ui/models/drift_series.h"
#include "ui/models/json_file.h"
#include "ui/models/runs_tree_model.h"
#include "ui/models/summary_table_model.h"

using namespace h3p::ui;
using h3p::ui::test::CompareFigures;
using h3p::ui::test::compareObject;
using h3p::ui::test::writeJson;

class CompareModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void parsesSummaryBoundsFramesAndSteps();
  void readsReportListOfComparisons();
  void missingSummaryThrowsNamingFileAndField();
  void brokenJsonThrowsNamingFile();
  void jsonFileErrorsNameFileAndWhere();
  void seriesOfWrongTypeThrowNamingField();
  void indexFindsByContractSpecSeedAndMetricsWin();
  void treeBadgesAggregateFailUpwards();
  void summaryMarksFailingValues();
  void markdownAndCsvExportsCarryValuesAndFailures();
  void driftFileGivesTeacherAndFreeCurves();
};

void CompareModelsTest::parsesSummaryBoundsFramesAndSteps() {
  QTemporaryDir dir;
  CompareFigures figures;
  figures.psnrDb = 31 + QRandomGenerator::global()->bounded(20.0);
  figures.seed = QRandomGenerator::global()->bounded(1, 100000);
  figures.infiniteFirstFrame = true;
  const QString file = dir.filePath("cmp.json");
  QVERIFY(writeJson(file, compareObject(figures)));

  const QList<CompareResult> results = readCompareFile(file);
  QCOMPARE(results.size(), 1);
  const CompareResult& r = results.front();
  QCOMPARE(r.file, file);
  QCOMPARE(r.candidate.seed, figures.seed);
  QCOMPARE(r.candidate.implSpec, QString("candidate"));
  QCOMPARE(r.provider.implSpec, QString("provider"));
  QCOMPARE(r.psnrDb, figures.psnrDb);
  QVERIFY(r.passed.has_value() && *r.passed);
  QVERIFY(r.bounds.present);
  QCOMPARE(r.bounds.psnrDbMin, 30.0);
  QCOMPARE(r.bounds.audioRelL2Max, 0.05);
  QCOMPARE(r.frames.size(), 5);
  QVERIFY(std::isinf(r.frames.at(0).psnrDb) && r.frames.at(0).psnrDb > 0);
  QCOMPARE(r.frames.at(3).psnrDb, figures.psnrDb + 3);
  QCOMPARE(r.steps.size(), 4);
  QCOMPARE(r.steps.at(2).videoRelL2, 4e-3);
  QCOMPARE(r.stepThreshold, 0.01);
  QVERIFY(r.violates("psnr_db", 29.9));
  QVERIFY(!r.violates("psnr_db", 30.1));
  QVERIFY(r.violates("audio_rel_l2", 0.06));
  QVERIFY(!r.violates("psnr_db_ffmpeg", 1.0));
}

void CompareModelsTest::readsReportListOfComparisons() {
  QTemporaryDir dir;
  CompareFigures a, b;
  b.seed = 2;
  b.psnrDb = 20;  // fails
  QJsonObject report{{"comparisons", QJsonArray{compareObject(a), compareObject(b)}},
                     {"passed", false}};
  QVERIFY(writeJson(dir.filePath("report.json"), report));
  const QList<CompareResult> results = readCompareFile(dir.filePath("report.json"));
  QCOMPARE(results.size(), 2);
  QVERIFY(*results.at(0).passed);
  QVERIFY(!*results.at(1).passed);
  QCOMPARE(results.at(1).failures.size(), 1);
}

void CompareModelsTest::missingSummaryThrowsNamingFileAndField() {
  QTemporaryDir dir;
  QJsonObject object = compareObject({});
  object.remove("summary");
  QVERIFY(writeJson(dir.filePath("x.json"), object));
  try {
    readCompareFile(dir.filePath("x.json"));
    QFAIL("no exception");
  } catch (const h3p::InputError& e) {
    const QString what = e.what();
    QVERIFY2(what.contains("x.json") && what.contains("summary"), qPrintable(what));
  }
}

void CompareModelsTest::brokenJsonThrowsNamingFile() {
  QTemporaryDir dir;
  QFile file(dir.filePath("broken.json"));
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("{\"summary\": ");
  file.close();
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, readCompareFile(dir.filePath("broken.json")));
  CompareIndex index;
  index.load(dir.path(), {dir.path()});  // not under comparisons/ or metrics/: ignored
  QCOMPARE(index.size(), 0);
}

void CompareModelsTest::jsonFileErrorsNameFileAndWhere() {
  QTemporaryDir dir;
  const QString missing = dir.filePath("missing.json");
  try {
    readJsonFile(missing);
    QFAIL("no exception for a missing file");
  } catch (const h3p::InputError& e) {
    const QString what = e.what();
    QVERIFY2(what.startsWith(missing + ": open: "), qPrintable(what));
  }
  const QString broken = dir.filePath("broken.json");
  QFile file(broken);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("{\"rows\": [1,");
  file.close();
  for (const auto& read : {std::function<void()>([&] { readCompareFile(broken); }),
                           std::function<void()>([&] { readDriftFile(broken); }),
                           std::function<void()>([&] { readJsonFile(broken); })}) {
    try {
      read();
      QFAIL("no exception for a file that does not parse");
    } catch (const h3p::InputError& e) {
      const QString what = e.what();
      QVERIFY2(what.startsWith(broken + ": offset "), qPrintable(what));
    }
  }
}

void CompareModelsTest::seriesOfWrongTypeThrowNamingField() {
  QTemporaryDir dir;
  const QString file = dir.filePath("x.json");
  for (const QString key : {"frames", "steps"}) {
    QJsonObject object = compareObject({});
    object.insert(key, QJsonValue::Null);
    QVERIFY(writeJson(file, object));
    QCOMPARE(readCompareFile(file).size(), 1);  // null: no series
    object.insert(key, QJsonObject{});
    QVERIFY(writeJson(file, object));
    try {
      readCompareFile(file);
      QFAIL("no exception");
    } catch (const h3p::InputError& e) {
      QCOMPARE(QString(e.what()), file + ": " + key + ": not an array");
    }
  }
}

void CompareModelsTest::indexFindsByContractSpecSeedAndMetricsWin() {
  QTemporaryDir runs;
  CompareFigures report;
  report.seed = 7;
  report.psnrDb = 40;
  QVERIFY(writeJson(runs.filePath("report/comparisons/c/candidate/seed-7.json"),
                    compareObject(report)));
  CompareFigures other = report;
  other.seed = 8;
  QVERIFY(
      writeJson(runs.filePath("report/comparisons/c/candidate/seed-8.json"), compareObject(other)));
  // A later compare in the run's metrics/ replaces the report's figure for seed 7.
  const QString run = runs.filePath("c/candidate/seed-7");
  CompareFigures fresh = report;
  fresh.psnrDb = 44;
  QVERIFY(writeJson(run + "/metrics/compare.json", compareObject(fresh)));
  // An unreadable file is listed, not thrown.
  QVERIFY(writeJson(runs.filePath("report/comparisons/c/bad.json"), QJsonObject{{"x", 1}}));

  CompareIndex index;
  QCOMPARE(index.load(runs.path(), {run}), 2);
  QCOMPARE(index.errors().size(), 1);
  QVERIFY(index.errors().front().contains("bad.json"));
  const CompareResult* found = index.find("c", "candidate", 7);
  QVERIFY(found != nullptr);
  QCOMPARE(found->psnrDb, 44.0);
  QVERIFY(index.find("c", "candidate", 9) == nullptr);
  QVERIFY(index.find("d", "candidate", 7) == nullptr);
  QCOMPARE(index.forSeed("c", 8).size(), 1);
  QCOMPARE(index.all().size(), 2);
  QCOMPARE(index.all().front().candidate.seed, 7);
}

void CompareModelsTest::treeBadgesAggregateFailUpwards() {
  QTemporaryDir runs;
  using h3p::ui::test::manifestFor;
  using h3p::ui::test::writeRun;
  for (qint64 seed : {1, 2}) {
    QVERIFY(!writeRun(runs.path(), "c", "provider", seed, manifestFor("provider", seed)).isEmpty());
    QVERIFY(
        !writeRun(runs.path(), "c", "candidate", seed, manifestFor("candidate", seed)).isEmpty());
  }
  CompareFigures pass, fail;
  pass.seed = 1;
  fail.seed = 2;
  fail.ssim = 0.5;
  QVERIFY(
      writeJson(runs.filePath("report/comparisons/c/candidate/seed-1.json"), compareObject(pass)));
  QVERIFY(
      writeJson(runs.filePath("report/comparisons/c/candidate/seed-2.json"), compareObject(fail)));

  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 4);
  CompareIndex index;
  index.load(runs.path(), model.runDirectories());
  model.applyVerdicts(index);

  auto verdict = [](const QStandardItem* item) {
    return static_cast<RunsTreeModel::Verdict>(item->data(RunsTreeModel::VerdictRole).toInt());
  };
  const QStandardItem* contract = model.item(0);
  const QStandardItem* seed1 = contract->child(0);
  const QStandardItem* seed2 = contract->child(1);
  QCOMPARE(seed1->child(0)->text(), QString("provider"));
  QCOMPARE(seed1->child(1)->text(), QString("candidate"));
  QCOMPARE(verdict(seed1->child(1)), RunsTreeModel::Verdict::Pass);
  QCOMPARE(verdict(seed2->child(1)), RunsTreeModel::Verdict::Fail);
  QCOMPARE(verdict(seed1), RunsTreeModel::Verdict::Pass);
  QCOMPARE(verdict(seed2), RunsTreeModel::Verdict::Fail);
  QCOMPARE(verdict(contract), RunsTreeModel::Verdict::Fail);
  QCOMPARE(verdict(seed1->child(0)), RunsTreeModel::Verdict::None);  // the provider itself
  QVERIFY(!seed1->child(1)->icon().isNull());
  QVERIFY(seed1->child(0)->icon().isNull());
  QVERIFY(seed2->child(1)->toolTip().contains("FAIL"));
  QVERIFY(seed2->child(1)->toolTip().contains("ssim"));
  QVERIFY(seed2->toolTip().startsWith("c, seed 2"));
}

void CompareModelsTest::summaryMarksFailingValues() {
  CompareFigures good, bad;
  bad.implSpec = "candidate:attention=provider";
  bad.psnrDb = 12.5;
  bad.audioRelL2 = 0.2;
  SummaryTableModel model;
  QList<CompareResult> results{parseCompareObject("a", compareObject(good)),
                               parseCompareObject("b", compareObject(bad))};
  model.setResults(results);
  QCOMPARE(model.rowCount(), 2);
  QCOMPARE(model.columnCount(), int(SummaryTableModel::ColumnCount));
  auto failing = [&](int row, int column) {
    return model.index(row, column).data(SummaryTableModel::FailingRole).toBool();
  };
  for (int column = 0; column < SummaryTableModel::ColumnCount; ++column) {
    QVERIFY2(!failing(0, column), qPrintable(QString::number(column)));
  }
  QVERIFY(failing(1, SummaryTableModel::PsnrColumn));
  QVERIFY(failing(1, SummaryTableModel::AudioRelL2Column));
  QVERIFY(failing(1, SummaryTableModel::VerdictColumn));
  QVERIFY(!failing(1, SummaryTableModel::SsimColumn));
  QVERIFY(model.index(1, SummaryTableModel::PsnrColumn).data(Qt::ForegroundRole).isValid());
  QVERIFY(!model.index(0, SummaryTableModel::PsnrColumn).data(Qt::ForegroundRole).isValid());
  QCOMPARE(model.index(1, SummaryTableModel::PsnrColumn).data().toString(), QString("12.500"));
  QCOMPARE(model.index(1, SummaryTableModel::VerdictColumn).data().toString(), QString("FAIL"));
  QVERIFY(model.boundsText().contains("PSNR >= 30"));
}

void CompareModelsTest::markdownAndCsvExportsCarryValuesAndFailures() {
  CompareFigures good, bad;
  good.psnrDb = 30 + QRandomGenerator::global()->generateDouble() * 30;
  bad.implSpec = "candidate:gemm=provider";
  bad.temporalRmse = 0.5;
  SummaryTableModel model;
  model.setResults(
      {parseCompareObject("a", compareObject(good)), parseCompareObject("b", compareObject(bad))});

  const QString markdown = model.toMarkdown();
  QVERIFY2(markdown.startsWith("Bounds: PSNR >= 30 dB"), qPrintable(markdown));
  QVERIFY(markdown.contains("| `candidate:gemm=provider` |"));
  QVERIFY2(markdown.contains("**5.000e-01 (fail)**"), qPrintable(markdown));
  QVERIFY(markdown.contains("**FAIL**"));
  QVERIFY(markdown.contains(QString::number(good.psnrDb, 'f', 3)));
  QCOMPARE(markdown.count('\n'), 2 + 2 + 2);  // bounds, blank, header, rule, two rows

  const QStringList lines = model.toCsv().split("\r\n", Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 3);
  QCOMPARE(lines.at(0), QString("candidate,seed,psnr_db,ssim,temporal_rmse,audio_rel_l2,"
                                "psnr_db_ffmpeg,ssim_ffmpeg,passed,failing"));
  const QStringList first = lines.at(1).split(',');
  QCOMPARE(first.at(2).toDouble(), good.psnrDb);  // full precision round trip
  QCOMPARE(first.at(8), QString("true"));
  QCOMPARE(first.at(9), QString());
  const QStringList second = lines.at(2).split(',');
  QCOMPARE(second.at(8), QString("false"));
  QCOMPARE(second.at(9), QString("temporal_rmse"));
}

void CompareModelsTest::driftFileGivesTeacherAndFreeCurves() {
  QTemporaryDir runs;
  QJsonArray steps;
  for (int s = 0; s < 6; ++s) {
    QJsonObject step{
        {"step", s},
        {"teacher_forced", QJsonObject{{"video_rel_l2", 1e-3 * (s + 1)}, {"audio_rel_l2", 2e-3}}}};
    if (s < 5) {
      step.insert("free_running",
                  QJsonObject{{"video_rel_l2", 2e-3 * (s + 1)}, {"audio_rel_l2", 1e-3}});
    }
    steps.append(step);
  }
  const QString file = driftFilePath(runs.path(), "c", 4);
  QVERIFY(file.endsWith("/c/drift-seed-4.json"));
  QVERIFY(writeJson(file, QJsonObject{{"steps", steps}}));
  const DriftSeries series = readDriftFile(file);
  QCOMPARE(series.points.size(), 6);
  QCOMPARE(series.points.at(2).teacherVideo, 3e-3);
  QCOMPARE(series.points.at(2).freeVideo, 6e-3);
  QVERIFY(std::isnan(series.points.at(5).freeVideo));
  QCOMPARE(series.firstOver(3.5e-3), 3);
  QCOMPARE(series.firstOver(1.0), -1);
  QVERIFY(writeJson(file, QJsonObject{{"rows", 1}}));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, readDriftFile(file));
}

QTEST_MAIN(CompareModelsTest)
#include "compare_models_test.moc"
