#pragma once
// `bundle`: one self-contained, publishable directory of evidence for a runs directory:
//   report.md, report.json   the evidence report (compare/evidence_report.h) plus one table per
//                            gate: preflight, numerical gate, generation, quality, noise floor
//   bundle.json              provenance per run (h3parity commit, model identity, contract
//                            digest, gate file, plugin or imported), figures, tests, layout
//   redaction.json           what was replaced, by which placeholder, under which rule, counts
//   tests.json               the test results of the build (or why there are none)
//   figures/*.png            per-frame PSNR/SSIM, per-step drift, ablation bars (when rendered)
//   runs/<contract>/<spec>/seed-<n>/manifest.json (+ segments.json), runs/<contract>/*.json|md,
//   runs/report/comparisons/...   redacted copies, laid out as a runs directory
//   preflight/*.json, gates/*.json, logs/...   redacted copies of the other inputs
//   SHA256SUMS               every file, paths relative to the bundle, written last
// Every text file is redacted (redaction.h) before any checksum is taken. The bundle is built
// in a temporary sibling of the output directory and renamed into place at the end, so a
// failure leaves nothing half-written. Qt-free: figures come from an external tool.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/metrics/compare/run_compare.h"

namespace h3p::evidence {

struct BundleParams {
  std::filesystem::path runs_root;
  std::filesystem::path out_dir;                       // must not exist, or be empty
  std::filesystem::path tests_file;                    // tests.json; empty: none found
  std::string tests_note;                              // where tests_file came from / why none
  std::vector<std::filesystem::path> preflight_files;  // --preflight; plus RUNS/*/preflight*.json
  std::filesystem::path figures_tool;                  // h3parity-figures; empty: not rendered
  std::string figures_note;                            // why the tool is absent, when it is
  int figure_width = 1200, figure_height = 800;        // pixels of every PNG
  compare::CompareParams compare;                      // candidate/provider are set per pair
  std::function<void(double, const std::string&)> progress;
};

struct BundleResult {
  std::filesystem::path dir;  // out_dir, complete
  std::size_t runs = 0, comparisons = 0, figures = 0, files = 0;
  std::optional<bool> passed;  // the report's verdict; nullopt without bounds
  bool figures_rendered = false;
  std::string figures_note;
};

// Writes the bundle. Throws InputError naming the path for a missing runs directory, an output
// directory inside it or existing and not empty, an unreadable --tests or --preflight file.
BundleResult write_bundle(const BundleParams& params);

}  // namespace h3p::evidence
