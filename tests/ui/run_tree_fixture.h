#pragma once

#include <QString>

namespace h3p::ui::test {

// Writes RUNS/<contract>/<implDir>/seed-<seed>/manifest.json holding manifestJson (written as
// given, so broken JSON can be tested); returns the seed directory, or an empty string when it
// could not be written.
QString writeRun(const QString& runsDir, const QString& contract, const QString& implDir,
                 qint64 seed, const QByteArray& manifestJson);

// A well-formed manifest naming implSpec and seed.
QByteArray manifestFor(const QString& implSpec, qint64 seed);

}  // namespace h3p::ui::test
