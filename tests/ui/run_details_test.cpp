// Run details: a run's numerics environment (manifest.json environment.numerics) as dotted rows,
// its segments (segments.json) with their step ranges and the mixed flag, the errors of
// unreadable or malformed files, the details pane, the " (mixed)" label in the runs tree, and
// the pane following the tree's selection in the main window.
#include "ui/models/run_details.h"

#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QRandomGenerator>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "run_tree_fixture.h"
#include "ui/models/runs_tree_model.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/run_details_view.h"

using h3p::ui::readRunDetails;
using h3p::ui::RunDetails;
using h3p::ui::RunDetailsRow;
using h3p::ui::RunDetailsView;
using h3p::ui::RunsTreeModel;
using h3p::ui::SegmentCheck;
using h3p::ui::test::manifestFor;
using h3p::ui::test::writeRun;

namespace {

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

// steps/000.json .. steps/<count-1>.json, plus a file that is not a sidecar.
bool writeSteps(const QString& runDir, int count) {
  if (!QDir().mkpath(runDir + "/steps")) return false;
  for (int step = 0; step < count; ++step) {
    if (!writeFile(runDir + QString("/steps/%1.json").arg(step, 3, 10, QChar('0')), "{}")) {
      return false;
    }
  }
  return writeFile(runDir + "/steps/notes.json", "{}");
}

// A CPU environment.numerics object; `threads` and `core` vary so rows cannot be constants.
QJsonObject cpuNumerics(int threads, const QString& core) {
  return QJsonObject{
      {"cpu", QJsonObject{{"model", "AMD EPYC 9654"},
                          {"isa", QJsonArray{"avx2", "avx512f", "avx512_bf16"}},
                          {"aten_capability", "AVX512"},
                          {"openblas_core", core},
                          {"onednn", "3.4.2"},
                          {"threads", threads}}},
      {"torch", QJsonObject{{"version", "2.4.1+cpu"},
                            {"build_sha256", QString(64, 'e')},
                            {"cuda", QJsonValue::Null}}},
      {"device", "cpu"},
      {"attention", QJsonObject{{"requested", "auto"}, {"selected", "math"}}},
      {"kernels", QJsonObject{{"candidate", "kernels/cpu"}, {"provider", "aten"}}},
      {"env", QJsonObject{{"OPENBLAS_CORETYPE", core}}},
  };
}

QJsonObject gpuNumerics() {
  QJsonObject numerics = cpuNumerics(16, "SkylakeX");
  numerics.insert("device", "cuda");
  numerics.insert("cuda", QJsonObject{{"name", "NVIDIA H200"},
                                      {"compute_capability", "9.0"},
                                      {"sm_count", 132},
                                      {"memory_bytes", 150754820096.0},
                                      {"driver", "550.54"},
                                      {"runtime", "12.4"},
                                      {"cublas", "12.4.5"},
                                      {"cublaslt", "12.4.5"},
                                      {"cudnn", "9.1.0"}});
  numerics.remove("env");
  return numerics;
}

QByteArray manifestWithNumerics(const QString& implSpec, qint64 seed, const QJsonObject& numerics) {
  QJsonObject root = QJsonDocument::fromJson(manifestFor(implSpec, seed)).object();
  root.insert("environment", QJsonObject{{"python", "3.11"}, {"numerics", numerics}});
  return QJsonDocument(root).toJson();
}

QJsonObject segment(int index, int firstStep, const QString& check, const QString& host,
                    const QJsonObject& numerics) {
  QJsonObject object{{"segment", index},
                     {"first_step", firstStep},
                     {"check", check},
                     {"numerics", numerics},
                     {"host", host}};
  return object;
}

// segments.json as the recorder writes it (core/runs/numerics_segments.h) for a run that started
// under core `before` and resumed at `resumeAt` under `after` with the given check: steps 0 and
// resumeAt - 1 recomputed, the last one differing when `differs`.
QByteArray twoSegments(int resumeAt, const QString& check, bool differs, const QString& before,
                       const QString& after) {
  QJsonObject first = segment(0, 0, "initial", "host-a", cpuNumerics(8, before));
  QJsonObject second = segment(1, resumeAt, check, "host-b", cpuNumerics(8, after));
  second.insert("changed", QJsonArray{"cpu.openblas_core", "env.OPENBLAS_CORETYPE"});
  second.insert("recomputed_steps", QJsonArray{0, resumeAt - 1});
  const QJsonObject difference{
      {"step", resumeAt - 1}, {"output", "sample"}, {"rel_l2", 1.2e-7}, {"max_abs", 3e-6}};
  second.insert("difference", differs ? QJsonValue(difference) : QJsonValue(QJsonValue::Null));
  return QJsonDocument(QJsonObject{{"format_version", 1}, {"segments", QJsonArray{first, second}}})
      .toJson();
}

QStringList fields(const RunDetails& details) {
  QStringList names;
  for (const RunDetailsRow& row : details.numerics) names.append(row.field);
  return names;
}

const QStandardItem* onlyRun(const RunsTreeModel& model) {
  return model.item(0)->child(0)->child(0);
}

}  // namespace

class RunDetailsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_settings;

 private slots:
  void initTestCase();
  void numericsAreDottedRowsWithArraysJoined();
  void gpuRunShowsItsDevice();
  void oldManifestSaysNotRecorded();
  void acceptedSegmentMakesTheRunMixed();
  void verifiedSegmentsAreNotMixed();
  void threeSegmentsSplitTheSavedSteps();
  void malformedSegmentsNameFileAndField();
  void malformedManifestNamesFileAndField();
  void viewShowsFieldsSegmentsAndMixed();
  void viewSaysNotRecordedForOldRuns();
  void mainWindowShowsTheSelectedRunsDetails();
};

void RunDetailsTest::initTestCase() {
  // Keep the main window's recent list away from the user's settings.
  QCoreApplication::setOrganizationName(QStringLiteral("h3parity-test"));
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settings.path());
}

void RunDetailsTest::numericsAreDottedRowsWithArraysJoined() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const int threads = QRandomGenerator::global()->bounded(1, 512);
  const QString core = QString("Core%1").arg(QRandomGenerator::global()->bounded(1000));
  const QString run = writeRun(runs.path(), "c", "candidate", 1,
                               manifestWithNumerics("candidate", 1, cpuNumerics(threads, core)));
  QVERIFY(!run.isEmpty());
  QVERIFY(writeSteps(run, 5));

  const RunDetails details = readRunDetails(run);
  QVERIFY2(details.manifestErrors.isEmpty(), qPrintable(details.manifestErrors.join('\n')));
  QVERIFY(details.numericsRecorded);
  QCOMPARE(details.runDir, QDir(run).absolutePath());
  QCOMPARE(details.value("cpu.model"), QString("AMD EPYC 9654"));
  QCOMPARE(details.value("cpu.isa"), QString("avx2, avx512f, avx512_bf16"));
  QCOMPARE(details.value("cpu.threads"), QString::number(threads));
  QCOMPARE(details.value("cpu.openblas_core"), core);
  QCOMPARE(details.value("torch.cuda"), QString("null"));
  QCOMPARE(details.value("torch.build_sha256"), QString(64, 'e'));
  QCOMPARE(details.value("attention.selected"), QString("math"));
  QCOMPARE(details.value("kernels.candidate"), QString("kernels/cpu"));
  QCOMPARE(details.value("env.OPENBLAS_CORETYPE"), core);
  // The groups in the format's order, the known fields of a group in its order; only leaves.
  QCOMPARE(fields(details),
           (QStringList{"cpu.model", "cpu.isa", "cpu.aten_capability", "cpu.openblas_core",
                        "cpu.onednn", "cpu.threads", "torch.version", "torch.build_sha256",
                        "torch.cuda", "device", "attention.requested", "attention.selected",
                        "kernels.candidate", "kernels.provider", "env.OPENBLAS_CORETYPE"}));
  QCOMPARE(details.savedSteps, 5);
  QVERIFY(!details.hasSegments);
  QVERIFY(details.segments.isEmpty());
  QVERIFY(!details.mixed);
  QVERIFY(details.segmentsError.isEmpty());
}

void RunDetailsTest::gpuRunShowsItsDevice() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString run =
      writeRun(runs.path(), "c", "provider", 2, manifestWithNumerics("provider", 2, gpuNumerics()));
  const RunDetails details = readRunDetails(run);
  QVERIFY2(details.manifestErrors.isEmpty(), qPrintable(details.manifestErrors.join('\n')));
  QCOMPARE(details.value("device"), QString("cuda"));
  QCOMPARE(details.value("cuda.name"), QString("NVIDIA H200"));
  QCOMPARE(details.value("cuda.sm_count"), QString("132"));
  QCOMPARE(details.value("cuda.memory_bytes"), QString("150754820096"));
  QCOMPARE(details.value("cuda.compute_capability"), QString("9.0"));
  QVERIFY(fields(details).indexOf("device") < fields(details).indexOf("cuda.name"));
  QVERIFY(fields(details).indexOf("cuda.cudnn") < fields(details).indexOf("attention.requested"));
  QVERIFY(!fields(details).contains("env.OPENBLAS_CORETYPE"));

  // Fields a recorder leaves out are no errors (torch.cuda, cpu.onednn; cuda in a build
  // without c10 CUDA); a field of the wrong type is.
  QJsonObject sparse = gpuNumerics();
  sparse.remove("cuda");
  QJsonObject torch = sparse.value("torch").toObject();
  torch.remove("cuda");
  sparse.insert("torch", torch);
  QJsonObject cpu = sparse.value("cpu").toObject();
  cpu.remove("onednn");
  sparse.insert("cpu", cpu);
  QVERIFY(writeFile(run + "/manifest.json", manifestWithNumerics("provider", 2, sparse)));
  QVERIFY2(readRunDetails(run).manifestErrors.isEmpty(),
           qPrintable(readRunDetails(run).manifestErrors.join('\n')));
  sparse.insert("cuda", "H200");
  QVERIFY(writeFile(run + "/manifest.json", manifestWithNumerics("provider", 2, sparse)));
  QCOMPARE(readRunDetails(run).manifestErrors,
           QStringList{QDir(run).absolutePath() +
                       "/manifest.json: environment.numerics.cuda: H200 is not an object"});
  QCOMPARE(readRunDetails(run).value("cuda"), QString("H200"));
}

void RunDetailsTest::oldManifestSaysNotRecorded() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString run = writeRun(runs.path(), "c", "provider", 3, manifestFor("provider", 3));
  QVERIFY(writeSteps(run, 4));
  const RunDetails details = readRunDetails(run);
  QVERIFY(!details.numericsRecorded);
  QVERIFY(details.numerics.isEmpty());
  QVERIFY2(details.manifestErrors.isEmpty(), qPrintable(details.manifestErrors.join('\n')));
  QCOMPARE(details.savedSteps, 4);

  // An environment without numerics is an older run too.
  QJsonObject root = QJsonDocument::fromJson(manifestFor("provider", 3)).object();
  root.insert("environment", QJsonObject{{"python", "3.11"}});
  QVERIFY(writeFile(run + "/manifest.json", QJsonDocument(root).toJson()));
  const RunDetails older = readRunDetails(run);
  QVERIFY(!older.numericsRecorded);
  QVERIFY(older.manifestErrors.isEmpty());
}

void RunDetailsTest::acceptedSegmentMakesTheRunMixed() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  // Random resume step and length, so the ranges cannot come from constants.
  const int resumeAt = QRandomGenerator::global()->bounded(2, 60);
  const int saved = resumeAt + QRandomGenerator::global()->bounded(1, 40);
  QVERIFY(!writeRun(runs.path(), "c", "provider", 4, manifestFor("provider", 4)).isEmpty());
  const QString run = writeRun(runs.path(), "c", "candidate", 4,
                               manifestWithNumerics("candidate", 4, cpuNumerics(8, "SkylakeX")));
  QVERIFY(writeSteps(run, saved));
  QVERIFY(writeFile(run + "/segments.json",
                    twoSegments(resumeAt, "accepted", true, "Haswell", "SkylakeX")));

  const RunDetails details = readRunDetails(run);
  QVERIFY2(details.segmentsError.isEmpty(), qPrintable(details.segmentsError));
  QVERIFY(details.hasSegments);
  QVERIFY(details.mixed);
  QCOMPARE(details.savedSteps, saved);
  QCOMPARE(details.segments.size(), 2);
  const auto& first = details.segments.at(0);
  const auto& second = details.segments.at(1);
  QCOMPARE(first.index, 0);
  QCOMPARE(first.firstStep, 0);
  QCOMPARE(first.lastStep, resumeAt - 1);
  QCOMPARE(first.check, SegmentCheck::Initial);
  QCOMPARE(first.host, QString("host-a"));
  QCOMPARE(second.firstStep, resumeAt);
  QCOMPARE(second.lastStep, saved - 1);
  QCOMPARE(second.check, SegmentCheck::Accepted);
  QCOMPARE(second.changed, (QStringList{"cpu.openblas_core", "env.OPENBLAS_CORETYPE"}));
  QCOMPARE(second.recomputedSteps, (QList<qint64>{0, resumeAt - 1}));
  QVERIFY(second.difference.has_value());
  QCOMPARE(second.difference->step.value_or(-1), resumeAt - 1);
  QCOMPARE(second.difference->output, QString("sample"));
  QCOMPARE(second.difference->relL2, 1.2e-7);
  QCOMPARE(second.difference->maxAbs, 3e-6);
  // Each segment's own environment, flattened like the manifest's.
  QCOMPARE(second.numerics.size(), 15);
  QVERIFY(second.numerics.contains(RunDetailsRow{"cpu.openblas_core", "SkylakeX"}));
  QVERIFY(first.numerics.contains(RunDetailsRow{"env.OPENBLAS_CORETYPE", "Haswell"}));

  const QString firstLine =
      QString("steps 0-%1: segment 0 (initial, host host-a)").arg(resumeAt - 1);
  const QString secondLine =
      (saved - 1 == resumeAt ? QString("step %1").arg(resumeAt)
                             : QString("steps %1-%2").arg(resumeAt).arg(saved - 1)) +
      QString(
          ": segment 1, accepted: changed cpu.openblas_core, env.OPENBLAS_CORETYPE; step %1 "
          "differs in sample, rel L2 1.2e-07, max abs 3e-06; host host-b")
          .arg(resumeAt - 1);
  QCOMPARE(first.describe(), firstLine);
  QCOMPARE(second.describe(), secondLine);

  // The tree: the mixed run's label and tooltip; the provider beside it is not mixed.
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 2);
  const QStandardItem* seed = model.item(0)->child(0);
  const QStandardItem* provider = seed->child(0);
  const QStandardItem* candidate = seed->child(1);
  QCOMPARE(provider->text(), QString("provider"));
  QVERIFY(!provider->data(RunsTreeModel::MixedRole).toBool());
  QVERIFY(!provider->toolTip().contains("segment"));
  QCOMPARE(candidate->text(), QString("candidate (mixed)"));
  QCOMPARE(candidate->data(RunsTreeModel::ImplSpecRole).toString(), QString("candidate"));
  QVERIFY(candidate->data(RunsTreeModel::MixedRole).toBool());
  QVERIFY2(candidate->toolTip().contains(firstLine), qPrintable(candidate->toolTip()));
  QVERIFY2(candidate->toolTip().contains(secondLine), qPrintable(candidate->toolTip()));
  QVERIFY(candidate->toolTip().contains("mixed: 2 segments"));
}

void RunDetailsTest::verifiedSegmentsAreNotMixed() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString run = writeRun(runs.path(), "c", "candidate", 5,
                               manifestWithNumerics("candidate", 5, cpuNumerics(8, "SkylakeX")));
  QVERIFY(writeSteps(run, 49));
  QVERIFY(
      writeFile(run + "/segments.json", twoSegments(30, "verified", false, "Haswell", "SkylakeX")));
  const RunDetails details = readRunDetails(run);
  QVERIFY2(details.segmentsError.isEmpty(), qPrintable(details.segmentsError));
  QVERIFY(!details.mixed);
  QCOMPARE(details.segments.size(), 2);
  QCOMPARE(details.segments.at(1).describe(),
           QString("steps 30-48: segment 1, verified: changed cpu.openblas_core, "
                   "env.OPENBLAS_CORETYPE; steps 0, 29 recomputed bitwise equal; host host-b"));
  QCOMPARE(details.segments.at(1).difference.has_value(), false);

  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 1);
  const QStandardItem* item = onlyRun(model);
  QCOMPARE(item->text(), QString("candidate"));
  QVERIFY(!item->data(RunsTreeModel::MixedRole).toBool());
  QVERIFY(item->toolTip().contains("steps 0-29: segment 0 (initial, host host-a)"));
  QVERIFY(!item->toolTip().contains("mixed"));

  // Segment 0's environment is null where the run did not record one.
  QJsonObject root = QJsonDocument::fromJson(twoSegments(30, "verified", false, "a", "b")).object();
  QJsonArray list = root.value("segments").toArray();
  QJsonObject first = list.at(0).toObject();
  first.insert("numerics", QJsonValue::Null);
  first.insert("host", "");
  list[0] = first;
  root.insert("segments", list);
  QVERIFY(writeFile(run + "/segments.json", QJsonDocument(root).toJson()));
  const RunDetails unrecorded = readRunDetails(run);
  QVERIFY2(unrecorded.segmentsError.isEmpty(), qPrintable(unrecorded.segmentsError));
  QVERIFY(unrecorded.segments.at(0).numerics.isEmpty());
  QCOMPARE(unrecorded.segments.at(0).describe(), QString("steps 0-29: segment 0 (initial)"));
}

void RunDetailsTest::threeSegmentsSplitTheSavedSteps() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString run = writeRun(runs.path(), "c", "candidate", 6,
                               manifestWithNumerics("candidate", 6, cpuNumerics(8, "Zen")));
  QVERIFY(writeSteps(run, 20));
  QJsonObject unchecked = segment(1, 10, "unchecked", "", cpuNumerics(4, "Zen"));
  unchecked.remove("host");
  unchecked.insert("changed", QJsonArray{"cpu.threads"});
  QJsonObject accepted = segment(2, 19, "accepted", "h3", cpuNumerics(8, "Zen"));
  accepted.insert("changed", QJsonArray{"cpu.threads"});
  // One recomputed step, and a difference that does not name its step.
  accepted.insert("recomputed_steps", QJsonArray{18});
  accepted.insert("difference",
                  QJsonObject{{"output", "audio"}, {"rel_l2", 4.56e-3}, {"max_abs", 0.25}});
  QJsonArray list{segment(0, 0, "initial", "h1", cpuNumerics(8, "Zen")), unchecked, accepted};
  QVERIFY(
      writeFile(run + "/segments.json",
                QJsonDocument(QJsonObject{{"format_version", 1}, {"segments", list}}).toJson()));
  const RunDetails details = readRunDetails(run);
  QVERIFY2(details.segmentsError.isEmpty(), qPrintable(details.segmentsError));
  QVERIFY(details.mixed);
  QCOMPARE(details.segments.size(), 3);
  QCOMPARE(details.segments.at(0).lastStep, 9);
  QCOMPARE(details.segments.at(1).lastStep, 18);
  QCOMPARE(details.segments.at(2).lastStep, 19);
  QCOMPARE(details.segments.at(1).describe(),
           QString("steps 10-18: segment 1, unchecked: changed cpu.threads; no step recomputed"));
  QCOMPARE(details.segments.at(2).describe(),
           QString("step 19: segment 2, accepted: changed cpu.threads; step 18 differs in audio, "
                   "rel L2 0.00456, max abs 0.25; host h3"));

  // A resume recorded before any of its steps was saved.
  QVERIFY(QFile::remove(run + "/steps/019.json"));
  const RunDetails shorter = readRunDetails(run);
  QCOMPARE(shorter.segments.at(2).lastStep, 18);
  QVERIFY(shorter.segments.at(2).describe().startsWith("no steps (from step 19): "));

  // A resume that stopped before computing a step, followed by another at the same step.
  unchecked.insert("first_step", 19);
  list[1] = unchecked;
  QVERIFY(
      writeFile(run + "/segments.json",
                QJsonDocument(QJsonObject{{"format_version", 1}, {"segments", list}}).toJson()));
  const RunDetails same = readRunDetails(run);
  QVERIFY2(same.segmentsError.isEmpty(), qPrintable(same.segmentsError));
  QCOMPARE(same.segments.at(0).lastStep, 18);
  QVERIFY(
      same.segments.at(1).describe().startsWith("no steps (from step 19): segment 1, unchecked"));
}

void RunDetailsTest::malformedSegmentsNameFileAndField() {
  const QByteArray good = twoSegments(30, "accepted", true, "Haswell", "SkylakeX");
  QJsonObject root = QJsonDocument::fromJson(good).object();
  const auto withSecond = [&root](const char* key, const QJsonValue& value) {
    QJsonObject copy = root;
    QJsonArray list = copy.value("segments").toArray();
    QJsonObject second = list.at(1).toObject();
    if (value.isUndefined()) {
      second.remove(key);
    } else {
      second.insert(key, value);
    }
    list[1] = second;
    copy.insert("segments", list);
    return QJsonDocument(copy).toJson();
  };
  // A third segment starting at `firstStep` (the second starts at 30).
  const auto withThird = [&root](int firstStep) {
    QJsonObject copy = root;
    QJsonArray list = copy.value("segments").toArray();
    QJsonObject third = list.at(1).toObject();
    third.insert("segment", 2);
    third.insert("first_step", firstStep);
    list.append(third);
    copy.insert("segments", list);
    return QJsonDocument(copy).toJson();
  };
  const auto withRoot = [&root](const char* key, const QJsonValue& value) {
    QJsonObject copy = root;
    copy.insert(key, value);
    return QJsonDocument(copy).toJson();
  };

  struct Case {
    const char* name;
    QByteArray text;
    QString expected;  // after "<file>: "
  };
  const QList<Case> cases{
      {"not json", "{ \"format_version\": 1, \"segments\": [", "offset"},
      {"top level array", "[]", "top level: not an object"},
      {"newer format", withRoot("format_version", 2), "format_version: 2 is not supported"},
      {"segments not array", withRoot("segments", "none"), "segments: not an array"},
      {"empty segments", withRoot("segments", QJsonArray{}), "segments: empty"},
      {"first_step a string", withSecond("first_step", "thirty"),
       "segments[1].first_step: thirty is not an integer >= 0"},
      {"first_step missing", withSecond("first_step", QJsonValue(QJsonValue::Undefined)),
       "segments[1].first_step: missing"},
      {"first_step negative", withSecond("first_step", -1),
       "segments[1].first_step: -1 is not an integer >= 0"},
      {"first_step before", withThird(10), "segments[2].first_step: 10 is before segment 1's"},
      {"unknown check", withSecond("check", "approved"),
       "segments[1].check: \"approved\" is none of"},
      {"initial later", withSecond("check", "initial"), "segments[1].check: \"initial\" on a"},
      {"segment out of order", withSecond("segment", 5), "segments[1].segment: 5, expected 1"},
      {"changed not strings", withSecond("changed", QJsonArray{1}),
       "segments[1].changed[0]: 1 is not a string"},
      {"recomputed_steps a number", withSecond("recomputed_steps", 29),
       "segments[1].recomputed_steps: not an array"},
      {"recomputed_steps not steps", withSecond("recomputed_steps", QJsonArray{0, "last"}),
       "segments[1].recomputed_steps[1]: last is not an integer >= 0"},
      {"numerics a string", withSecond("numerics", "cpu"),
       "segments[1].numerics: not an object or null"},
      {"difference step", withSecond("difference", QJsonObject{{"step", 1.5}}),
       "segments[1].difference.step: 1.5 is not an integer >= 0"},
      {"difference a number", withSecond("difference", 0.5),
       "segments[1].difference: not an object or null"},
      {"rel_l2 missing",
       withSecond("difference", QJsonObject{{"output", "sample"}, {"max_abs", 1}}),
       "segments[1].difference.rel_l2: missing"},
  };
  for (const Case& c : cases) {
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    const QString run = writeRun(runs.path(), "c", "candidate", 7,
                                 manifestWithNumerics("candidate", 7, cpuNumerics(8, "Haswell")));
    QVERIFY(writeSteps(run, 49));
    QVERIFY(writeFile(run + "/segments.json", c.text));
    const RunDetails details = readRunDetails(run);
    const QString file = QDir(run).absolutePath() + "/segments.json";
    QVERIFY2(details.segmentsError.startsWith(file + ": " + c.expected),
             qPrintable(QString("%1: %2").arg(c.name, details.segmentsError)));
    QVERIFY2(details.hasSegments, c.name);
    QVERIFY2(details.segments.isEmpty(), c.name);
    QVERIFY2(!details.mixed, c.name);
    // The manifest's rows are still there.
    QVERIFY2(details.numericsRecorded && details.manifestErrors.isEmpty(), c.name);
    QCOMPARE(details.value("cpu.openblas_core"), QString("Haswell"));

    RunsTreeModel model;
    QCOMPARE(model.scan(runs.path()), 1);
    QCOMPARE(onlyRun(model)->text(), QString("candidate"));
    QVERIFY2(onlyRun(model)->toolTip().contains(details.segmentsError), c.name);
  }
  // The good file parses: the cases above fail for their one change.
  QTemporaryDir runs;
  const QString run = writeRun(runs.path(), "c", "candidate", 7,
                               manifestWithNumerics("candidate", 7, cpuNumerics(8, "Haswell")));
  QVERIFY(writeFile(run + "/segments.json", good));
  QVERIFY(readRunDetails(run).segmentsError.isEmpty());
  QVERIFY(readRunDetails(run).mixed);
}

void RunDetailsTest::malformedManifestNamesFileAndField() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  QJsonObject numerics = cpuNumerics(8, "Haswell");
  QJsonObject cpu = numerics.value("cpu").toObject();
  cpu.insert("threads", "eight");
  cpu.insert("isa", "avx2");
  cpu.insert("model", 123);
  numerics.insert("cpu", cpu);
  numerics.insert("device", "tpu");
  const QString run =
      writeRun(runs.path(), "c", "candidate", 8, manifestWithNumerics("candidate", 8, numerics));
  const QString file = QDir(run).absolutePath() + "/manifest.json";
  const RunDetails details = readRunDetails(run);
  // Every mismatch named; the rows still shown as written.
  QCOMPARE(details.manifestErrors,
           (QStringList{file + ": environment.numerics.cpu.model: 123 is not a string",
                        file + ": environment.numerics.cpu.isa: avx2 is not an array of strings",
                        file + ": environment.numerics.cpu.threads: eight is not an integer",
                        file + ": environment.numerics.device: tpu is not \"cpu\" or \"cuda\""}));
  QVERIFY(details.numericsRecorded);
  QCOMPARE(details.value("cpu.threads"), QString("eight"));

  QJsonObject root = QJsonDocument::fromJson(manifestFor("candidate", 8)).object();
  root.insert("environment", QJsonObject{{"numerics", "cpu"}});
  QVERIFY(writeFile(run + "/manifest.json", QJsonDocument(root).toJson()));
  QCOMPARE(readRunDetails(run).manifestErrors,
           QStringList{file + ": environment.numerics: not an object"});

  QVERIFY(writeFile(run + "/manifest.json", "{ broken"));
  const RunDetails broken = readRunDetails(run);
  QCOMPARE(broken.manifestErrors.size(), 1);
  QVERIFY2(broken.manifestErrors.front().startsWith(file + ": offset"),
           qPrintable(broken.manifestErrors.front()));
  QVERIFY(!broken.numericsRecorded);

  const RunDetails missing = readRunDetails(runs.path() + "/no-such-run");
  QCOMPARE(missing.manifestErrors.size(), 1);
  QVERIFY(missing.manifestErrors.front().contains("no-such-run/manifest.json: open: "));
  QVERIFY(!missing.hasSegments);
}

void RunDetailsTest::viewShowsFieldsSegmentsAndMixed() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString run = writeRun(runs.path(), "c", "candidate", 9,
                               manifestWithNumerics("candidate", 9, cpuNumerics(8, "SkylakeX")));
  QVERIFY(writeSteps(run, 49));
  QVERIFY(
      writeFile(run + "/segments.json", twoSegments(30, "accepted", true, "Haswell", "SkylakeX")));
  const RunDetails details = readRunDetails(run);

  RunDetailsView view;
  view.setDetails(details);
  QVERIFY(!view.mixedLabel()->isHidden());
  QVERIFY(view.mixedLabel()->text().contains("MIXED"));
  QVERIFY(view.errorsLabel()->isHidden());
  QVERIFY(!view.numericsTable()->isHidden());
  QCOMPARE(view.numericsTable()->rowCount(), static_cast<int>(details.numerics.size()));
  for (int row = 0; row < details.numerics.size(); ++row) {
    QCOMPARE(view.numericsTable()->item(row, 0)->text(), details.numerics.at(row).field);
    QCOMPARE(view.numericsTable()->item(row, 1)->text(), details.numerics.at(row).value);
  }
  QCOMPARE(view.segmentsList()->count(), 2);
  QCOMPARE(view.segmentsList()->item(0)->text(),
           QString("steps 0-29: segment 0 (initial, host host-a)"));
  QCOMPARE(view.segmentsList()->item(1)->text(), details.segments.at(1).describe());
  QVERIFY(view.segmentsList()->item(1)->text().startsWith(
      "steps 30-48: segment 1, accepted: changed cpu.openblas_core"));
  QVERIFY(
      view.segmentsList()->item(1)->toolTip().contains("cpu.openblas_core: Haswell -> SkylakeX"));

  // A broken segments.json: the error shows, the mixed banner does not.
  QVERIFY(writeFile(run + "/segments.json", "{"));
  view.setDetails(readRunDetails(run));
  QVERIFY(view.mixedLabel()->isHidden());
  QVERIFY(!view.errorsLabel()->isHidden());
  QVERIFY(view.errorsLabel()->text().contains("segments.json: offset"));
  QCOMPARE(view.segmentsList()->count(), 0);

  // Without segments.json: one environment, no banner.
  QVERIFY(QFile::remove(run + "/segments.json"));
  view.setDetails(readRunDetails(run));
  QVERIFY(view.mixedLabel()->isHidden());
  QVERIFY(view.errorsLabel()->isHidden());
  QVERIFY(view.segmentsLabel()->text().contains("One numerics environment throughout"));

  view.clear("nothing");
  QCOMPARE(view.headingLabel()->text(), QString("nothing"));
  QCOMPARE(view.numericsTable()->rowCount(), 0);
}

void RunDetailsTest::viewSaysNotRecordedForOldRuns() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  const QString run = writeRun(runs.path(), "c", "provider", 10, manifestFor("provider", 10));
  RunDetailsView view;
  view.setDetails(readRunDetails(run));
  QCOMPARE(view.numericsLabel()->text(), QString("Numerics environment: not recorded"));
  QVERIFY(view.numericsTable()->isHidden());
  QCOMPARE(view.numericsTable()->rowCount(), 0);
  QVERIFY(view.mixedLabel()->isHidden());
}

void RunDetailsTest::mainWindowShowsTheSelectedRunsDetails() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  QVERIFY(!writeRun(runs.path(), "c", "provider", 1, manifestFor("provider", 1)).isEmpty());
  const QString run = writeRun(runs.path(), "c", "candidate", 1,
                               manifestWithNumerics("candidate", 1, cpuNumerics(8, "SkylakeX")));
  QVERIFY(writeSteps(run, 49));
  QVERIFY(
      writeFile(run + "/segments.json", twoSegments(30, "accepted", true, "Haswell", "SkylakeX")));

  h3p::ui::MainWindow window;
  window.setRecentListEnabled(false);
  window.openRunsDirectory(runs.path());
  RunDetailsView* view = window.runDetailsView();
  QVERIFY(view != nullptr);
  QVERIFY(window.findChild<QDockWidget*>("runDetailsDock") != nullptr);
  QCOMPARE(window.dockWidgetArea(window.findChild<QDockWidget*>("runDetailsDock")),
           Qt::LeftDockWidgetArea);

  QVERIFY(window.selectFirstSeed());  // the candidate, the first non-provider run
  QCOMPARE(window.runsView()->currentIndex().data().toString(), QString("candidate (mixed)"));
  QCOMPARE(view->headingLabel()->text(), QDir::toNativeSeparators(QDir(run).absolutePath()));
  QVERIFY(!view->mixedLabel()->isHidden());
  QCOMPARE(view->segmentsList()->count(), 2);
  QVERIFY(view->numericsTable()->rowCount() > 10);

  // The provider: an older run, not mixed.
  const QModelIndex provider = window.runsView()->currentIndex().siblingAtRow(0);
  window.runsView()->setCurrentIndex(provider);
  QVERIFY(view->mixedLabel()->isHidden());
  QCOMPARE(view->numericsLabel()->text(), QString("Numerics environment: not recorded"));

  // A seed row: nothing to show.
  window.runsView()->setCurrentIndex(provider.parent());
  QCOMPARE(view->numericsTable()->rowCount(), 0);
  QVERIFY(view->headingLabel()->text().contains("Select a run"));
}

QTEST_MAIN(RunDetailsTest)
#include "run_details_test.moc"
