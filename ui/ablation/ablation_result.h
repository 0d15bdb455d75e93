#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace h3p::ui {

// One tensor difference of an ablation row (relative L2, max |a-b|, bitwise equality).
struct AblationDiff {
  double relL2;
  double maxAbs;
  bool bitwiseEqual = false;
};

// One replay of the step with one impl spec (a row of `h3parity ablate --json`).
struct AblationRow {
  QString implSpec;
  QString what;
  AblationDiff video, audio;
  double seconds;
  bool variant = false;  // a provider variant: the provider's own spread
  QString error;         // a variant that could not run (then no figures)
};

// One ablation sweep read back from its JSON file.
struct AblationResult {
  QString file;
  QString candidateRun, providerRun, candidateSpec, providerSpec;
  int step = 0;
  QList<AblationRow> rows;
  bool hasFreeRunning = false;
  AblationDiff freeVideo, freeAudio;  // the candidate run's own saved step (accumulated drift)

  // "seed 42, step 3: candidate vs provider (…/ablation-….json)"-style label for lists.
  QString label() const;
};

// Reads an ablation JSON file. Throws h3p::InputError naming the file and field.
AblationResult readAblationFile(const QString& file);

// The ablation sweep files under a runs directory (RUNS/<contract>/ablation-*.json), newest
// first.
QStringList findAblationFiles(const QString& runsDir);

// The operator groups an ablation can swap, in the CLI's order.
QStringList ablationGroups();

}  // namespace h3p::ui
