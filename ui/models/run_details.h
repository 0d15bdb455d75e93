#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace h3p::ui {

// One shown field: a dotted path under environment.numerics ("cpu.isa", "env.OMP_NUM_THREADS")
// and its value as text (arrays joined with ", ").
struct RunDetailsRow {
  QString field;
  QString value;
  bool operator==(const RunDetailsRow& other) const = default;
};

// How a resume under a different numerics environment was checked (segments.json "check").
enum class SegmentCheck {
  Initial,    // the segment the run started with
  Verified,   // saved steps were recomputed under the new environment and were bitwise equal
  Accepted,   // a recomputed step differed and the resume was told to continue: the run is mixed
  Unchecked,  // no step had been saved, so nothing was recomputed
};

// The recomputed step's difference from the saved one (segments.json "difference").
struct SegmentDifference {
  std::optional<qint64> step;  // the recomputed step that differed; empty when not recorded
  QString output;              // which output differed ("sample", "audio_sample")
  double relL2 = 0;            // relative L2 of that output
  double maxAbs = 0;           // largest absolute difference
};

// One stretch of steps run under one numerics environment (RUN/segments.json).
struct RunSegment {
  int index = 0;         // "segment"
  qint64 firstStep = 0;  // first step of the segment
  // Last step in it: the step before the next segment's first; for the last segment the last
  // saved step (steps/NNN.json count - 1). Below firstStep when it holds no step.
  qint64 lastStep = -1;
  SegmentCheck check = SegmentCheck::Initial;
  QStringList changed;  // numerics fields that differ from the segment before (dotted)
  // The saved steps recomputed to check the resume ("recomputed_steps": the previous segment's
  // first step and the last saved one).
  QList<qint64> recomputedSteps;
  std::optional<SegmentDifference> difference;  // empty: no difference (or none recorded)
  QString host;                                 // host name; empty when not recorded
  // The segment's environment, flattened like RunDetails::numerics; empty where it is null.
  QList<RunDetailsRow> numerics;

  // One line: "steps 0-29: segment 0 (initial, host a)", "steps 30-48: segment 1, accepted:
  // changed cpu.openblas_core; step 29 differs in sample, rel L2 1.2e-07, max abs 3e-06; host b",
  // "...; steps 0, 29 recomputed bitwise equal", "...; no step recomputed".
  QString describe() const;
};

// What the run-details view shows of one run directory, read by readRunDetails.
struct RunDetails {
  QString runDir;  // absolute
  // Whether manifest.json records environment.numerics (older runs do not).
  bool numericsRecorded = false;
  QList<RunDetailsRow> numerics;  // environment.numerics flattened; empty when not recorded
  int savedSteps = 0;             // steps/NNN.json files
  bool hasSegments = false;       // segments.json exists (it may still be unreadable)
  QList<RunSegment> segments;     // empty without (or with an unreadable) segments.json
  bool mixed = false;             // some segment's check is "accepted"
  // "<file>: <field>: <what>" for whatever could not be read or does not fit the format: the
  // rest is still filled in.
  QStringList manifestErrors;
  QString segmentsError;

  // The value of `field` among `numerics`, empty when absent.
  QString value(const QString& field) const;
};

// The segments of a run read from RUN/segments.json (empty when it does not exist).
struct RunSegments {
  bool present = false;  // the file exists
  QList<RunSegment> segments;
  bool mixed = false;
  QString error;  // "<file>: <field>: <what>"; segments is empty then
  int savedSteps = 0;
};

// Reads RUN/segments.json and counts RUN/steps/NNN.json (the last segment ends at the last
// saved step). Never throws: a file that cannot be read or does not fit the format is named in
// `error`. Reads on the calling thread.
RunSegments readRunSegments(const QString& runDir);

// Reads RUN/manifest.json's environment.numerics and RUN/segments.json. Never throws; problems
// are named in manifestErrors / segmentsError. Reads on the calling thread.
RunDetails readRunDetails(const QString& runDir);

// "initial", "verified", "accepted", "unchecked".
QString segmentCheckName(SegmentCheck check);

}  // namespace h3p::ui
