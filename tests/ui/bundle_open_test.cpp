// The workbench opens an evidence bundle (`h3parity bundle`, here the committed example
// docs/example-bundle) as it opens a runs directory: the redacted runs (manifests, no step
// files) are listed without errors, the comparisons and ablation sweeps in the bundle are found,
// and opening it writes nothing (every file still matches SHA256SUMS).
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/ablation/ablation_result.h"
#include "ui/models/compare_index.h"
#include "ui/models/runs_tree_model.h"
#include "ui/widgets/main_window.h"

using h3p::ui::CompareIndex;
using h3p::ui::RunsTreeModel;

namespace {

const QString kBundle = QStringLiteral(H3P_SOURCE_DIR "/docs/example-bundle");

// Runs listed in bundle.json.
int bundledRuns() {
  QFile file(kBundle + QStringLiteral("/bundle.json"));
  if (!file.open(QIODevice::ReadOnly)) return -1;
  return static_cast<int>(
      QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("runs")).toArray().size());
}

// "<file>: <why>" for every SHA256SUMS line that does not verify.
QStringList checksumFailures(const QString& dir) {
  QStringList failures;
  QFile sums(dir + QStringLiteral("/SHA256SUMS"));
  if (!sums.open(QIODevice::ReadOnly)) return {QStringLiteral("SHA256SUMS: cannot open")};
  for (const QByteArray& line : sums.readAll().split('\n')) {
    if (line.isEmpty()) continue;
    const QString digest = QString::fromLatin1(line.left(64));
    const QString name = QString::fromUtf8(line.mid(66));
    QFile f(dir + QLatin1Char('/') + name);
    if (!f.open(QIODevice::ReadOnly)) {
      failures << name + QStringLiteral(": cannot open");
      continue;
    }
    if (QString::fromLatin1(QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex()) != digest) {
      failures << name + QStringLiteral(": digest differs");
    }
  }
  return failures;
}

}  // namespace

class BundleOpenTest : public QObject {
  Q_OBJECT

 private slots:
  void treeListsTheRedactedRuns();
  void comparisonsAndSweepsAreFound();
  void mainWindowOpensItWithoutWriting();
};

void BundleOpenTest::treeListsTheRedactedRuns() {
  const int expected = bundledRuns();
  QVERIFY2(expected > 0, "docs/example-bundle/bundle.json lists no runs");
  RunsTreeModel model;
  QCOMPARE(model.scan(kBundle), expected);
  QCOMPARE(model.runsDirectory(), QFileInfo(kBundle + QStringLiteral("/runs")).absoluteFilePath());
  for (const QString& dir : model.runDirectories()) {
    QVERIFY2(QFileInfo(dir + QStringLiteral("/manifest.json")).isFile(), qPrintable(dir));
    QVERIFY2(!QFileInfo(dir + QStringLiteral("/steps")).exists(), qPrintable(dir));
  }
  for (int c = 0; c < model.rowCount(); ++c) {
    const QStandardItem* contract = model.item(c);
    for (int s = 0; s < contract->rowCount(); ++s) {
      const QStandardItem* seed = contract->child(s);
      for (int r = 0; r < seed->rowCount(); ++r) {
        const QString error = seed->child(r)->data(RunsTreeModel::ManifestErrorRole).toString();
        QVERIFY2(error.isEmpty(), qPrintable(error));
      }
    }
  }
  // A plain runs directory is not taken for a bundle.
  QTemporaryDir plain;
  QVERIFY(QDir(plain.path()).mkpath(QStringLiteral("runs")));
  QCOMPARE(RunsTreeModel::bundleRunsDirectory(plain.path()), plain.path());
}

void BundleOpenTest::comparisonsAndSweepsAreFound() {
  RunsTreeModel model;
  model.scan(kBundle);
  CompareIndex index;
  const int found = index.load(model.runsDirectory(), model.runDirectories());
  QVERIFY2(index.errors().isEmpty(), qPrintable(index.errors().join(QLatin1Char('\n'))));
  QVERIFY2(found > 0, "no comparison found in the bundle");
  // Every non-provider run is judged by a comparison of the bundle.
  model.applyVerdicts(index);
  int judged = 0;
  for (int c = 0; c < model.rowCount(); ++c) {
    const QStandardItem* contract = model.item(c);
    for (int s = 0; s < contract->rowCount(); ++s) {
      const QStandardItem* seed = contract->child(s);
      for (int r = 0; r < seed->rowCount(); ++r) {
        const QStandardItem* run = seed->child(r);
        if (run->data(RunsTreeModel::ImplSpecRole).toString() == QLatin1String("provider")) continue;
        QVERIFY(index.find(run->data(RunsTreeModel::ContractRole).toString(),
                           run->data(RunsTreeModel::ImplSpecRole).toString(),
                           run->data(RunsTreeModel::SeedRole).toLongLong()) != nullptr);
        ++judged;
      }
    }
  }
  QCOMPARE(judged, found);
  const QStringList sweeps = h3p::ui::findAblationFiles(model.runsDirectory());
  QVERIFY2(!sweeps.isEmpty(), "no ablation sweep found in the bundle");
  for (const QString& file : sweeps) QVERIFY(!h3p::ui::readAblationFile(file).rows.isEmpty());
}

void BundleOpenTest::mainWindowOpensItWithoutWriting() {
  QVERIFY2(checksumFailures(kBundle).isEmpty(), qPrintable(checksumFailures(kBundle).join(QLatin1Char('\n'))));
  {
    h3p::ui::MainWindow window;
    window.setRecentListEnabled(false);
    window.openRunsDirectory(kBundle);
    window.selectFirstSeed();
    window.show();
    QCoreApplication::processEvents();
  }
  const QStringList failures = checksumFailures(kBundle);
  QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
}

QTEST_MAIN(BundleOpenTest)
#include "bundle_open_test.moc"
