#include "core/metrics/compare/run_compare.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/runs/comparable.h"
#include "core/runs/decoded.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"

namespace h3p::compare {
namespace fs = std::filesystem;
namespace {

// A temporary directory removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "h3parity-compare-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw InputError(pattern + ": cannot create a temporary directory");
    }
    path_ = pattern;
  }
  ~TempDir() { io::remove_tree(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A side opened: its info and the directory of its decoded clip.
struct OpenSide {
  SideInfo info;
  std::optional<runs::Manifest> manifest;
  fs::path decoded;
};

OpenSide open_side(const fs::path& path, const char* role) {
  OpenSide side;
  side.info.path = path;
  if (is_run(path)) {
    side.info.kind = "run";
    side.manifest = runs::read_manifest(path / "manifest.json");
    side.info.impl_spec = side.manifest->impl_spec;
    side.info.seed = side.manifest->seed;
    side.info.contract_name = side.manifest->contract_name;
    side.info.contract_digest = side.manifest->contract_digest;
    const runs::RunPaths paths(path);
    side.decoded = runs::decoded_dir(paths);
    const runs::RunSegments segments = runs::read_run_segments(paths, *side.manifest);
    side.info.segments = segments.text;
    side.info.segment_count = static_cast<int>(segments.segments.size());
    side.info.mixed = segments.mixed;
  } else if (fs::is_directory(path) && fs::exists(path / "frames.json")) {
    side.info.kind = "decoded";
    side.decoded = path;
  } else if (fs::is_regular_file(path)) {
    side.info.kind = "video";
  } else {
    throw InputError(std::string("--") + role + " " + path.string() +
                     ": not a run directory, a decoded-frames directory or a video file");
  }
  return side;
}

metrics::ClipView view_of(const runs::DecodedClip& clip) {
  metrics::ClipView v;
  const runs::FramesHeader& h = clip.header();
  v.width = h.width;
  v.height = h.height;
  v.frames = h.frames;
  v.fps = h.fps;
  v.rgb = clip.rgb();
  v.planes = clip.planes();
  v.plane_type = clip.planes_half() ? metrics::PlaneType::f16 : metrics::PlaneType::f32;
  if (!clip.audio().empty()) {
    v.audio = clip.audio().data();
    v.audio_channels = clip.audio_channels();
    v.audio_samples = clip.audio_samples();
    v.sample_rate = clip.sample_rate();
  }
  v.done_with = [&clip](const void* data, std::size_t bytes) { clip.drop_pages(data, bytes); };
  return v;
}

// Frame geometry must agree before any metric is computed.
void check_shapes(const runs::DecodedClip& c, const runs::DecodedClip& p, bool exact_audio) {
  const runs::FramesHeader& a = c.header();
  const runs::FramesHeader& b = p.header();
  auto same = [&](const char* field, double x, double y) {
    if (x != y) {
      std::ostringstream m;
      m << c.dir().string() << ": " << field << " " << x << " differs from " << y << " in "
        << p.dir().string() << "; the clips are not comparable";
      throw InputError(m.str());
    }
  };
  same("width", a.width, b.width);
  same("height", a.height, b.height);
  same("frames", a.frames, b.frames);
  if (!c.audio().empty() && !p.audio().empty() && exact_audio) {
    same("audio channels", c.audio_channels(), p.audio_channels());
    same("audio samples", static_cast<double>(c.audio_samples()),
         static_cast<double>(p.audio_samples()));
    same("audio sample rate", c.sample_rate(), p.sample_rate());
  }
}

}  // namespace

std::string CompareParams::describe() const {
  std::ostringstream out;
  out << "candidate: " << candidate.string() << "\nprovider: " << provider.string()
      << "\nthreads: " << clip.threads << "\nstep_threshold: " << step_threshold
      << "\ncontract: " << (contract ? contract->source.string() : std::string("-"))
      << "\npost_hoc: " << (post_hoc ? "true" : "false") << "\n";
  return out.str();
}

std::optional<bool> Comparison::passed() const {
  if (!bounds.bounds) return std::nullopt;
  return failures.empty();
}

Comparison compare_pair(const CompareParams& params) {
  // 1. Open both sides; runs must answer the same request.
  OpenSide cand = open_side(params.candidate, "candidate");
  OpenSide prov = open_side(params.provider, "provider");
  Comparison out;
  out.candidate = cand.info;
  out.provider = prov.info;
  out.step_threshold = params.step_threshold;
  if (cand.manifest && prov.manifest) {
    runs::check_comparable(*prov.manifest, params.provider / "manifest.json", *cand.manifest,
                           params.candidate / "manifest.json");
  }

  // 2. Video files are decoded once into the raw-frame form.
  std::optional<TempDir> temp;
  auto decode = [&](OpenSide& side, const char* name, int sample_rate) {
    if (side.info.kind != "video") return;
    if (!params.decode_video) {
      throw InputError(side.info.path.string() + ": comparing a video file needs FFmpeg; this "
                       "build has no media support (H3P_WITH_MEDIA=OFF)");
    }
    fs::path root = params.work_dir;
    if (root.empty()) {
      if (!temp) temp.emplace();
      root = temp->path();
    }
    side.decoded = root / name;
    if (params.progress) params.progress(0.0, "decoding " + side.info.path.filename().string());
    params.decode_video(side.info.path, side.decoded, sample_rate);
  };
  auto rate_of = [](const OpenSide& side) {
    if (side.info.kind == "video") return 0;
    const fs::path audio = side.decoded / "audio.safetensors";
    if (!fs::exists(audio)) return 0;
    const io::SafetensorsFile f = io::SafetensorsFile::open(audio);
    const auto it = f.metadata().find("sample_rate");
    return it == f.metadata().end() ? 0 : std::atoi(it->second.c_str());
  };
  if (prov.info.kind == "video") decode(prov, "provider", rate_of(cand));
  if (cand.info.kind == "video") decode(cand, "candidate", rate_of(prov));
  for (const OpenSide* side : {&cand, &prov}) {
    if (side->info.segment_count < 2) continue;
    out.notes.push_back(std::string(side == &cand ? "candidate" : "provider") + " run " +
                        (side->info.mixed ? "is mixed (computed under numerics environments "
                                            "that give different results): "
                                          : "was resumed under another numerics environment, "
                                            "verified: ") +
                        side->info.segments);
  }
  if (cand.info.kind != "run" || prov.info.kind != "run") {
    out.notes.push_back("a side is not a run: only pixel and audio metrics are computed (no "
                        "per-step series, no initial-noise check)");
  }

  const runs::DecodedClip cclip = runs::DecodedClip::open(cand.decoded);
  const runs::DecodedClip pclip = runs::DecodedClip::open(prov.decoded);
  // Audio decoded from a file may carry encoder padding: compared over the common length.
  const bool from_file = cand.info.kind == "video" || prov.info.kind == "video";
  check_shapes(cclip, pclip, !from_file);
  metrics::ClipView cview = view_of(cclip), pview = view_of(pclip);
  if (from_file && cview.audio && pview.audio && cview.audio_samples != pview.audio_samples) {
    const std::int64_t common = std::min(cview.audio_samples, pview.audio_samples);
    out.notes.push_back("audio lengths differ (candidate " + std::to_string(cview.audio_samples) +
                        ", provider " + std::to_string(pview.audio_samples) +
                        " samples): compared over the first " + std::to_string(common));
    cview.audio_stride = cview.audio_samples;
    pview.audio_stride = pview.audio_samples;
    cview.audio_samples = pview.audio_samples = common;
  }

  // 3. Bounds, from the contract the runs were generated under.
  out.bounds = choose_bounds(prov.info.contract_digest,
                             prov.info.kind == "run" ? params.provider : fs::path(),
                             params.contract, params.post_hoc, params.known_contracts);

  // 4. Per-step series, then the pixels and audio.
  if (cand.info.kind == "run" && prov.info.kind == "run") {
    if (params.step_series) {
      params.step_series(out, params);
    } else {
      out.notes.push_back("per-step series not computed: this executable has no LibTorch");
    }
  }
  if (params.progress) params.progress(0.5, "pixels and audio");
  out.clip = metrics::compare_clips(cview, pview, params.clip);
  if (!out.clip.audio) out.notes.push_back("no audio on one side: audio metrics not computed");
  if (out.bounds.bounds) out.failures = bound_failures(out.clip, *out.bounds.bounds);
  if (params.progress) params.progress(1.0, "done");
  return out;
}

bool is_run(const fs::path& path) {
  return fs::is_directory(path) && fs::exists(path / "manifest.json");
}

std::vector<fs::path> expand_runs(const fs::path& path) {
  if (is_run(path) || !fs::is_directory(path)) return {path};
  std::vector<std::pair<std::uint64_t, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("seed-", 0) != 0 || !is_run(entry.path())) continue;
    found.push_back({std::strtoull(name.c_str() + 5, nullptr, 10), entry.path()});
  }
  if (found.empty()) return {path};
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [seed, p] : found) out.push_back(p);
  return out;
}

std::vector<std::pair<fs::path, fs::path>> pair_sides(const std::vector<fs::path>& candidates,
                                                      const std::vector<fs::path>& providers) {
  if (providers.empty() || candidates.empty()) {
    throw InputError("compare: give at least one --candidate and one --provider");
  }
  std::vector<std::pair<fs::path, fs::path>> out;
  if (providers.size() == 1) {
    for (const fs::path& c : candidates) out.push_back({c, providers.front()});
    return out;
  }
  std::map<std::pair<std::string, std::uint64_t>, fs::path> by_seed;
  for (const fs::path& p : providers) {
    if (!is_run(p)) throw InputError(p.string() + ": several providers must all be runs");
    const runs::Manifest m = runs::read_manifest(p / "manifest.json");
    by_seed[{m.contract_digest, m.seed}] = p;
  }
  for (const fs::path& c : candidates) {
    if (!is_run(c)) {
      throw InputError(c.string() + ": with several providers every candidate must be a run");
    }
    const runs::Manifest m = runs::read_manifest(c / "manifest.json");
    const auto it = by_seed.find({m.contract_digest, m.seed});
    if (it == by_seed.end()) {
      throw InputError(c.string() + ": no provider run of seed " + std::to_string(m.seed) +
                       " and the same contract among the providers");
    }
    out.push_back({c, it->second});
  }
  return out;
}

}  // namespace h3p::compare
