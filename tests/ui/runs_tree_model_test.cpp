// RunsTreeModel: the contract -> impl spec -> seed tree built from a runs directory on disk.
#include "ui/models/runs_tree_model.h"

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include "run_tree_fixture.h"

using h3p::ui::RunsTreeModel;
using h3p::ui::test::manifestFor;
using h3p::ui::test::writeRun;

namespace {

int kindOf(const QStandardItem* item) { return item->data(RunsTreeModel::KindRole).toInt(); }

constexpr int kContract = static_cast<int>(RunsTreeModel::Kind::Contract);
constexpr int kImpl = static_cast<int>(RunsTreeModel::Kind::Impl);
constexpr int kSeed = static_cast<int>(RunsTreeModel::Kind::Seed);

}  // namespace

class RunsTreeModelTest : public QObject {
  Q_OBJECT

 private slots:
  void twoManifestsGiveContractImplSeedRows();
  void implSpecComesFromManifestNotDirectoryName();
  void seedsSortNumericallyAndNonRunsAreSkipped();
  void brokenManifestFallsBackToDirectoryNames();
  void missingDirectoryGivesEmptyModel();
  void rescanPicksUpNewRuns();
};

void RunsTreeModelTest::twoManifestsGiveContractImplSeedRows() {
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
  QCOMPARE(contract->rowCount(), 2);

  // Impl directories in name order: candidate before provider.
  const QStandardItem* candidate = contract->child(0);
  const QStandardItem* provider = contract->child(1);
  QCOMPARE(candidate->text(), QString("candidate"));
  QCOMPARE(provider->text(), QString("provider"));
  QCOMPARE(kindOf(candidate), kImpl);
  QCOMPARE(candidate->rowCount(), 1);
  QCOMPARE(provider->rowCount(), 1);

  const QStandardItem* seedRowB = candidate->child(0);
  const QStandardItem* seedRowA = provider->child(0);
  QCOMPARE(kindOf(seedRowA), kSeed);
  QCOMPARE(seedRowA->text(), QString("seed %1").arg(seedA));
  QCOMPARE(seedRowA->data(RunsTreeModel::SeedRole).toLongLong(), seedA);
  QCOMPARE(seedRowA->data(RunsTreeModel::ImplSpecRole).toString(), QString("provider"));
  QCOMPARE(seedRowA->data(RunsTreeModel::PathRole).toString(), QDir(runA).absolutePath());
  QVERIFY(seedRowA->data(RunsTreeModel::ManifestErrorRole).toString().isEmpty());
  QCOMPARE(seedRowB->data(RunsTreeModel::SeedRole).toLongLong(), seedB);
  QCOMPARE(seedRowB->data(RunsTreeModel::ImplSpecRole).toString(), QString("candidate"));
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
  const QStandardItem* impl = model.item(0)->child(0);
  QCOMPARE(impl->text(), QString("candidate:attention=provider"));
  QCOMPARE(impl->data(RunsTreeModel::ImplSpecRole).toString(),
           QString("candidate:attention=provider"));
  QCOMPARE(impl->child(0)->data(RunsTreeModel::ImplSpecRole).toString(),
           QString("candidate:attention=provider"));
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
  const QStandardItem* impl = model.item(0)->child(0);
  QCOMPARE(impl->rowCount(), 3);
  QCOMPARE(impl->child(0)->data(RunsTreeModel::SeedRole).toLongLong(), 1);
  QCOMPARE(impl->child(1)->data(RunsTreeModel::SeedRole).toLongLong(), 2);
  QCOMPARE(impl->child(2)->data(RunsTreeModel::SeedRole).toLongLong(), 10);
}

void RunsTreeModelTest::brokenManifestFallsBackToDirectoryNames() {
  QTemporaryDir runs;
  QVERIFY(runs.isValid());
  QVERIFY(!writeRun(runs.path(), "c", "provider", 42, "{ not json").isEmpty());
  RunsTreeModel model;
  QCOMPARE(model.scan(runs.path()), 1);
  const QStandardItem* impl = model.item(0)->child(0);
  QCOMPARE(impl->text(), QString("provider"));
  const QStandardItem* seed = impl->child(0);
  QCOMPARE(seed->data(RunsTreeModel::SeedRole).toLongLong(), 42);
  const QString error = seed->data(RunsTreeModel::ManifestErrorRole).toString();
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
