#pragma once
// `report`: Markdown and JSON evidence for a runs directory. Every run other than the plain
// provider (candidates and provider variants) is compared with the provider run of the same
// contract and seed; the result is one qualification table for all seeds and variants, a
// noise-floor table per seed with provider-variant runs (each candidate beside the variants'
// range, noise_floor.h), the calibration of every calibrated contract cited, a section per
// comparison, and SHA256SUMS of every file the report cites (manifests, latents,
// step sidecars, decoded outputs, per-comparison JSON, analysis files beside the runs, and the
// report itself), with paths relative to the runs directory so that
// `cd RUNS && sha256sum -c <out>/SHA256SUMS` checks them.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/metrics/compare/run_compare.h"

namespace h3p::compare {

struct ReportParams {
  std::filesystem::path runs_root;
  std::filesystem::path out_dir;      // default: <runs_root>/report
  CompareParams compare;              // candidate/provider are set per pair
  std::function<void(double, const std::string&)> progress;
};

struct ReportResult {
  std::vector<Comparison> comparisons;
  std::vector<std::string> skipped;   // "<run>: <why>" for runs that could not be compared
  std::filesystem::path markdown, json, sums;
  // nullopt when no comparison has bounds.
  std::optional<bool> passed() const;
};

// Writes report.md, report.json, comparisons/*.json and SHA256SUMS into out_dir. Throws
// InputError when runs_root holds no runs.
ReportResult write_report(const ReportParams& params);

}  // namespace h3p::compare
