// RunsTreeModel: the contract -> seed -> run (impl spec) tree built from a runs directory on disk.
#include "ui/models/runs_tree_model.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include "run_tree_fixture.h"
#include "ui/controllers/ablation_controller.h"
#include "ui/controllers/job.h"

using h3p::ui::RunsTreeModel;
using h3p::ui::test::manifestFor;
using h3p::ui::test::writeRun;

namespace {

int kindOf(const QStandardItem* item) { return item->data(RunsTreeModel::KindRole).toInt(); }

constexpr int kContract = static_cast<int>(RunsTreeModel::Kind::Contract);
constexpr int kSeed = static_cast<int>(RunsTreeModel::Kind::Seed);
constexpr int kRun = static_cast<int>(RunsTreeModel::Kind::Run);

}  // namespace

class RunsTreeModelTest : public QObject {
  Q_OBJECT

 private slots:
  void twoManifestsGiveContractSeedRunRows();
  void runsOfOneSeedSitTogetherProviderFirst();
  void implSpecComesFromManifestNotDirectoryName();
  void pluginRunsShowTheirSpecAndPlugin();
  void seedsSortNumericallyAndNonRunsAreSkipped();
  void brokenManifestFallsBackToDirectoryNames();
  void missingDirectoryGivesEmptyModel();
  void rescanPicksUpNewRuns();
};

void RunsTreeModelTest::twoManifestsGiveContractSeedRunRows() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  // Fresh random seeds each time, so the seed rows cannot come from constants.
  const qint64 seedA = QRandomGenerator::global()->bounded(1, 1000000);
  const qint64 seedB = seedA + 1 + QRandomGenerator::global()->bounded(1000);
  const QString runA =
      writeRun(runs.path(), "demo-tiny", "provider", seedA, manifestFor("provider", seedA));
  const QString runB =
      writeRun(runs.path(), "demo-tiny", "candidate", seedB, manifestFor("candidate", seedB));
  QVERIFY(!runA.isEmpty());
  QVERIFY(!runB.isEmpty());

  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 2);
  QCOMPARE(model.runCount(), 2);
  QCOMPARE(model.runsDirectory(), QDir(runs.path()).absolutePath());

  QCOMPARE(model.rowCount(), 1);
  const QStandardItem* contract = model.item(0);
  QCOMPARE(contract->text(), QString("demo-tiny"));
  QCOMPARE(kindOf(contract), kContract);
  QCOMPARE(contract->rowCount(), 2);  // two seeds

  // Seeds in numeric order, one run each.
  const QStandardItem* seedRowA = contract->child(0);
  const QStandardItem* seedRowB = contract->child(1);
  QCOMPARE(kindOf(seedRowA), kSeed);
  QCOMPARE(seedRowA->text(), QString("seed %1").arg(seedA));
  QCOMPARE(seedRowA->data(RunsTreeModel::SeedRole).toLongLong(), seedA);
  QCOMPARE(seedRowA->data(RunsTreeModel::ContractRole).toString(), QString("demo-tiny"));
  QCOMPARE(seedRowA->rowCount(), 1);
  QCOMPARE(seedRowB->rowCount(), 1);

  const QStandardItem* runRowA = seedRowA->child(0);
  const QStandardItem* runRowB = seedRowB->child(0);
  QCOMPARE(kindOf(runRowA), kRun);
  QCOMPARE(runRowA->text(), QString("provider"));
  QCOMPARE(runRowA->data(RunsTreeModel::SeedRole).toLongLong(), seedA);
  QCOMPARE(runRowA->data(RunsTreeModel::ImplSpecRole).toString(), QString("provider"));
  QCOMPARE(runRowA->data(RunsTreeModel::PathRole).toString(), QDir(runA).absolutePath());
  QVERIFY(runRowA->data(RunsTreeModel::ManifestErrorRole).toString().isEmpty());
  QCOMPARE(runRowB->data(RunsTreeModel::SeedRole).toLongLong(), seedB);
  QCOMPARE(runRowB->data(RunsTreeModel::ImplSpecRole).toString(), QString("candidate"));
  QCOMPARE(model.runDirectories(),
           (QStringList{QDir(runA).absolutePath(), QDir(runB).absolutePath()}));
}

void RunsTreeModelTest::runsOfOneSeedSitTogetherProviderFirst() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  for (const char* spec :
       {"candidate", "provider:attention=math", "provider", "candidate:norm=provider"}) {
    QString dir = spec;
    dir.replace(':', '@');
    QVERIFY(!writeRun(runs.path(), "c", dir, 3, manifestFor(spec, 3)).isEmpty());
  }
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 4);
  const QStandardItem* seed = model.item(0)->child(0);
  QCOMPARE(model.item(0)->rowCount(), 1);
  QCOMPARE(seed->rowCount(), 4);
  QStringList specs;
  for (int r = 0; r < seed->rowCount(); ++r) specs << seed->child(r)->text();
  QCOMPARE(specs, (QStringList{"provider", "candidate", "candidate:norm=provider",
                               "provider:attention=math"}));
}

void RunsTreeModelTest::implSpecComesFromManifestNotDirectoryName() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  // Specs carry ':' and '='; the directory holds an escaped form, the manifest the spec verbatim.
  QVERIFY(!writeRun(runs.path(), "c1", "candidate_attention-provider", 7,
                    manifestFor("candidate:attention=provider", 7))
               .isEmpty());
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 1);
  const QStandardItem* run = model.item(0)->child(0)->child(0);
  QCOMPARE(run->text(), QString("candidate:attention=provider"));
  QCOMPARE(run->data(RunsTreeModel::ImplSpecRole).toString(),
           QString("candidate:attention=provider"));
}

void RunsTreeModelTest::pluginRunsShowTheirSpecAndPlugin() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  QJsonObject manifest = QJsonDocument::fromJson(manifestFor("plugin:/opt/acme/libacme.so", 3)).object();
  manifest.insert("plugin", QJsonObject{{"kind", "library"},
                                        {"library", "/opt/acme/libacme.so"},
                                        {"library_sha256", QString(64, 'a')},
                                        {"argument", ""},
                                        {"name", "acme-kernels"},
                                        {"version", "0.3"}});
  QVERIFY(!writeRun(runs.path(), "c", "plugin@libacme.so", 3, QJsonDocument(manifest).toJson()).isEmpty());
  QVERIFY(!writeRun(runs.path(), "c", "provider", 3, manifestFor("provider", 3)).isEmpty());
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 2);
  const QStandardItem* run = model.item(0)->child(0)->child(1);
  QCOMPARE(run->text(), QString("plugin:/opt/acme/libacme.so"));
  QCOMPARE(run->data(RunsTreeModel::PluginRole).toString(),
           QString("C plugin acme-kernels 0.3, libacme.so sha256 aaaaaaaaaaaa"));
  QVERIFY(run->toolTip().contains("acme-kernels 0.3"));
  // The ablation launcher pairs it with the provider run of its seed, under its own spec.
  const QList<h3p::ui::AblationPair> pairs = h3p::ui::AblationController::pairsOf(model);
  QCOMPARE(pairs.size(), 1);
  QVERIFY(pairs.front().label.contains("plugin:/opt/acme/libacme.so"));
}

void RunsTreeModelTest::seedsSortNumericallyAndNonRunsAreSkipped() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  for (qint64 seed : {10, 2, 1}) {
    QVERIFY(!writeRun(runs.path(), "c", "provider", seed, manifestFor("provider", seed)).isEmpty());
  }
  // A seed directory without manifest, a non-seed directory, and a contract with no runs.
  QVERIFY(QDir().mkpath(runs.path() + "/c/provider/seed-3"));
  QVERIFY(QDir().mkpath(runs.path() + "/c/provider/notes"));
  QVERIFY(QDir().mkpath(runs.path() + "/empty-contract/provider"));

  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 3);
  QCOMPARE(model.rowCount(), 1);
  const QStandardItem* contract = model.item(0);
  QCOMPARE(contract->rowCount(), 3);
  QCOMPARE(contract->child(0)->data(RunsTreeModel::SeedRole).toLongLong(), 1);
  QCOMPARE(contract->child(1)->data(RunsTreeModel::SeedRole).toLongLong(), 2);
  QCOMPARE(contract->child(2)->data(RunsTreeModel::SeedRole).toLongLong(), 10);
}

void RunsTreeModelTest::brokenManifestFallsBackToDirectoryNames() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  QVERIFY(!writeRun(runs.path(), "c", "provider", 42, "{ not json").isEmpty());
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 1);
  const QStandardItem* seed = model.item(0)->child(0);
  QCOMPARE(seed->data(RunsTreeModel::SeedRole).toLongLong(), 42);
  const QStandardItem* run = seed->child(0);
  QCOMPARE(run->text(), QString("provider"));
  QCOMPARE(run->data(RunsTreeModel::SeedRole).toLongLong(), 42);
  const QString error = run->data(RunsTreeModel::ManifestErrorRole).toString();
  QVERIFY2(error.contains("manifest.json"), qPrintable(error));
}

void RunsTreeModelTest::missingDirectoryGivesEmptyModel() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path() + "/does-not-exist"), 0);
  QCOMPARE(model.rowCount(), 0);
  QCOMPARE(model.scan(runs.path()), 0);
  QCOMPARE(model.rowCount(), 0);
}

void RunsTreeModelTest::rescanPicksUpNewRuns() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  QVERIFY(!writeRun(runs.path(), "c", "provider", 1, manifestFor("provider", 1)).isEmpty());
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 1);
  QVERIFY(!writeRun(runs.path(), "d", "provider", 5, manifestFor("provider", 5)).isEmpty());
  QCOMPARE(model.rescan(), 2);
  QCOMPARE(model.rowCount(), 2);
  QCOMPARE(model.item(1)->text(), QString("d"));
}

QTEST_MAIN(RunsTreeModelTest)
#include "runs_tree_model_test.moc"
