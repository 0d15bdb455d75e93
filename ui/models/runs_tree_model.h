#pragma once

#include <QStandardItemModel>
#include <QString>

namespace h3p::ui {

// Tree of the runs under a runs directory laid out as
// RUNS/<contract>/<impl-dir>/seed-<n>/manifest.json: contract -> impl spec -> seed.
// Only seed directories holding a manifest.json count as runs; empty branches are left out.
// Scanning reads each manifest once, on the calling (UI) thread.
class RunsTreeModel : public QStandardItemModel {
  Q_OBJECT

 public:
  // What a row stands for; stored under KindRole.
  enum class Kind {
    Contract,  // a contract directory
    Impl,      // an impl-spec directory inside a contract
    Seed,      // one run: a seed directory with a manifest
  };

  // Extra item data roles.
  enum Role {
    KindRole = Qt::UserRole + 1,  // Kind, as int
    PathRole,                     // absolute directory path of the row (QString)
    ImplSpecRole,                 // impl spec string (impl and seed rows)
    SeedRole,                     // seed number (seed rows, qint64)
    ManifestErrorRole,            // non-empty when the seed's manifest could not be read (QString)
  };

  explicit RunsTreeModel(QObject* parent = nullptr);

  // Replaces the contents with the runs found under runsDir; returns the number of runs found.
  // A missing or unreadable directory leaves the model empty and returns 0.
  int scan(const QString& runsDir);

  // Re-scans the directory given to the last scan().
  int rescan();

  // The directory given to the last scan() (absolute), empty before the first scan.
  QString runsDirectory() const;

  // Number of runs (seed rows) found by the last scan.
  int runCount() const;

 private:
  QString m_runsDir;
  int m_runCount = 0;
};

}  // namespace h3p::ui
