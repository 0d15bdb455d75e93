#pragma once

#include <QStandardItemModel>
#include <QString>

namespace h3p::ui {

// Tree of the runs under a runs directory laid out as
// RUNS/<contract>/<impl-dir>/seed-<n>/manifest.json: contract -> seed -> run (one per impl
// spec; the provider first, then the others by spec), so that the candidate and every provider
// variant of a seed sit side by side. Only seed directories holding a manifest.json count as
// runs; empty branches are left out. A mixed run (segments.json holds an accepted segment, see
// run_details.h) is labelled "<impl spec> (mixed)" and its tooltip names the segments. Scanning
// reads each manifest (and segments.json where there is one) once, on the calling (UI) thread.
// An evidence bundle (`h3parity bundle`: bundle.json beside runs/) opens as its runs/ directory,
// read-only: redacted manifests without step files, comparisons under runs/report/comparisons.
class RunsTreeModel : public QStandardItemModel {
  Q_OBJECT

 public:
  // What a row stands for; stored under KindRole.
  enum class Kind {
    Contract,  // a contract directory
    Seed,      // the runs of one seed of a contract
    Run,       // one run: RUNS/<contract>/<impl-dir>/seed-<n> with a manifest
  };

  // Extra item data roles.
  enum Role {
    KindRole = Qt::UserRole + 1,  // Kind, as int
    PathRole,           // absolute directory: the contract's or the run's; empty for seeds
    ImplSpecRole,       // impl spec string (run rows)
    SeedRole,           // seed number (seed and run rows, qint64)
    ManifestErrorRole,  // non-empty when the run's manifest could not be read (QString)
    ContractRole,       // contract directory name (every row)
    VerdictRole,        // Verdict, as int (set by applyVerdicts)
    PluginRole,         // "plugin <name> <version>, <library file> sha256 <12 hex>" (plugin runs)
    MixedRole,          // bool: the run's segments.json has an "accepted" segment (run rows)
    SegmentsRole,       // the run's segments, one line each, or why segments.json could not be
                        // read; empty without segments.json (QString, run rows)
  };

  // Pass/fail badge of a row from compare results. A run row is judged by the comparison whose
  // candidate it is; seed and contract rows aggregate their children (any Fail -> Fail).
  enum class Verdict {
    None,  // no comparison with bounds found
    Pass,  // compared and within the bounds
    Fail,  // compared and outside the bounds
  };

  explicit RunsTreeModel(QObject* parent = nullptr);

  // Replaces the contents with the runs found under runsDir (a bundle's runs/ for a bundle);
  // returns the number of runs found. A missing or unreadable directory leaves the model empty
  // and returns 0.
  int scan(const QString& runsDir);

  // `dir`/runs when `dir` is an evidence bundle (holds bundle.json and runs/), else `dir`.
  static QString bundleRunsDirectory(const QString& dir);

  // Sets VerdictRole, a coloured badge icon and the tooltip of every row from `index`.
  void applyVerdicts(const class CompareIndex& index);

  // Absolute paths of every run row (run directory), in tree order.
  QStringList runDirectories() const;

  // Re-scans the directory given to the last scan().
  int rescan();

  // The runs directory of the last scan() (absolute; a bundle's runs/), empty before the first.
  QString runsDirectory() const;

  // Number of runs (run rows) found by the last scan.
  int runCount() const;

 private:
  QString m_runsDir;
  int m_runCount = 0;
};

}  // namespace h3p::ui
