#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include "ui/models/compare_result.h"

namespace h3p::ui {

// Every comparison found for a runs directory, looked up by the candidate side's contract,
// impl spec and seed (so a runs directory that was moved still matches). Sources, later ones
// winning for the same key: RUNS/*/comparisons/**/*.json (what `h3parity report` writes),
// then each run's metrics/*.json (what `h3parity compare --json` writes there). Files that do
// not parse are listed in errors(), not thrown. Plain value type; reads on the calling thread.
class CompareIndex {
 public:
  // Replaces the contents with the comparisons under runsDir and in runDirs' metrics/;
  // returns the number of comparisons kept.
  int load(const QString& runsDir, const QStringList& runDirs);

  // Adds the comparisons of one file (replacing those of the same key); returns how many.
  // Throws h3p::InputError naming the file when it cannot be read.
  int addFile(const QString& file);

  // The comparison whose candidate is (contract, implSpec, seed), or null.
  const CompareResult* find(const QString& contract, const QString& implSpec, qint64 seed) const;

  // Every comparison of one contract and seed, ordered by candidate impl spec.
  QList<CompareResult> forSeed(const QString& contract, qint64 seed) const;

  // Every comparison, ordered by contract, seed, candidate impl spec.
  QList<CompareResult> all() const;

  // "<file>: <what>" for each file that could not be read by load().
  QStringList errors() const { return m_errors; }

  int size() const { return static_cast<int>(m_byKey.size()); }

 private:
  static QString key(const QString& contract, const QString& implSpec, qint64 seed);
  QHash<QString, CompareResult> m_byKey;
  QStringList m_errors;
};

}  // namespace h3p::ui
