#pragma once
// Finding a pair to review in a runs directory (RUNS/<contract>/<impl>/seed-<n>/).
#include <QPair>
#include <QString>

namespace h3p::ui {

// The first seed (contracts and seeds in name order) that has both a `candidate` and a
// `provider` run with decoded frames: (candidate run, provider run). Empty strings when none.
QPair<QString, QString> findReviewPair(const QString& runsDir);

// The pair a run belongs in: for RUNS/<contract>/<impl>/seed-<n>, (that run, the provider's
// seed-<n>) unless <impl> is the provider, then (the candidate's seed-<n>, that run). Paths are
// built, not checked.
QPair<QString, QString> pairOfRun(const QString& runDir);

}  // namespace h3p::ui
