#pragma once

#include <QList>
#include <QString>

namespace h3p::ui {

// One step of a teacher-forced drift file (`h3parity ablate --all-steps --json`, or the demo's
// RUNS/<contract>/drift-seed-<n>.json); NaN where a value is absent.
struct DriftPoint {
  int step = 0;
  double teacherVideo, teacherAudio;  // candidate on the provider's saved inputs (one-step error)
  double freeVideo, freeAudio;        // candidate run against provider run (accumulated)
};

// A teacher-forced drift file read back.
struct DriftSeries {
  QString file;
  QList<DriftPoint> points;

  // First step whose teacher-forced video or audio relative L2 exceeds threshold; -1: none.
  int firstOver(double threshold) const;
};

// Reads a drift JSON file ({"steps": [{"step", "teacher_forced": {...}, "free_running": {...}}]}).
// Throws h3p::InputError naming the file and field when it cannot be read.
DriftSeries readDriftFile(const QString& file);

// RUNS/<contract>/drift-seed-<seed>.json (the path the demo and the studio write).
QString driftFilePath(const QString& runsDir, const QString& contract, qint64 seed);

}  // namespace h3p::ui
