#include "core/metrics/compare/run_compare.h"

#include <algorithm>
#include <cstdlib>
#include <future>
#include <map>
#include <stdexcept>
#include <tuple>
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

// A side opened: its info and its clip, read from a directory (`decoded`) or being decoded
// from a video file (`decoding`).
struct OpenSide {
  SideInfo info;
  std::optional<runs::Manifest> manifest;
  fs::path decoded;
  std::optional<runs::DecodedClip> clip;
  std::unique_ptr<runs::DecodingClip> decoding;
  const runs::FramesHeader& header() const { return clip ? clip->header() : decoding->header(); }
  std::string where() const { return clip ? clip->dir().string() : info.path.string(); }
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

// The geometry and 8-bit frames of a clip.
metrics::ClipView frames_view(const runs::FramesHeader& h, const std::uint8_t* rgb) {
  metrics::ClipView v;
  v.width = h.width;
  v.height = h.height;
  v.frames = h.frames;
  v.fps = h.fps;
  v.rgb = rgb;
  return v;
}

metrics::ClipView view_of(const runs::DecodedClip& clip) {
  metrics::ClipView v = frames_view(clip.header(), clip.rgb());
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

// The frames of a clip still being decoded, read as they arrive from their slots, each
// released once read so that its slot takes a later frame.
metrics::ClipView view_of(const runs::DecodingClip& clip) {
  metrics::ClipView v = frames_view(clip.header(), clip.rgb());
  v.yuv420 = clip.yuv420();
  v.frame_slots = clip.frame_slots();
  v.wait_for = [&clip](int frame) { clip.wait_for(frame); };
  v.frame_done = [&clip](int frame) { clip.release(frame); };
  return v;
}

// Writes a decoded video file (its decode ended with `audio`, every frame kept) into `dir` in
// the raw-frame form.
void keep_decoded(const runs::DecodingClip& clip, const runs::ClipAudio& audio, const fs::path& dir) {
  if (clip.frame_slots() != clip.header().frames) {
    throw std::logic_error("keep_decoded: the clip was decoded into a ring of frame slots");
  }
  runs::create_decoded_dir(dir);
  if (audio.channels > 0) {
    runs::write_decoded_audio(dir, audio.planar.data(), audio.channels, audio.samples,
                              audio.sample_rate);
  }
  runs::write_raw_frames(dir, clip.header(), clip.rgb());
}

// Throws InputError when the candidate's `field` (x, in `c`) differs from the provider's.
void require_same(const std::string& c, const std::string& p, const char* field, double x,
                  double y) {
  if (x == y) return;
  std::ostringstream m;
  m << c << ": " << field << " " << x << " differs from " << y << " in " << p
    << "; the clips are not comparable";
  throw InputError(m.str());
}

// Frame geometry must agree before any metric is computed.
void check_frames(const OpenSide& c, const OpenSide& p) {
  const runs::FramesHeader& a = c.header();
  const runs::FramesHeader& b = p.header();
  for (auto [field, x, y] : {std::tuple{"width", a.width, b.width},
                             std::tuple{"height", a.height, b.height},
                             std::tuple{"frames", a.frames, b.frames}}) {
    require_same(c.where(), p.where(), field, x, y);
  }
}

// Audio shapes of two clips read from directories must agree.
void check_audio(const runs::DecodedClip& c, const runs::DecodedClip& p) {
  auto same = [&](const char* field, double x, double y) {
    require_same(c.dir().string(), p.dir().string(), field, x, y);
  };
  if (!c.audio().empty() && !p.audio().empty()) {
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

  // 2. Video files start decoding, each on a thread of its own; the others are mapped.
  auto rate_of = [](const OpenSide& side) {
    if (!side.clip || side.clip->audio().empty()) return 0;
    return side.clip->sample_rate();
  };
  for (OpenSide* side : {&cand, &prov}) {
    if (side->info.kind != "video") side->clip.emplace(runs::DecodedClip::open(side->decoded));
  }
  // Opening a file (its packets counted before decoding starts) takes tens of milliseconds:
  // the candidate's is opened on another thread meanwhile. Decoded frames are kept only to be
  // written into the work directory.
  const bool keep = !params.work_dir.empty();
  auto start_decode = [&](OpenSide& side, int rate) {
    if (!params.decode_video) {
      throw InputError(side.info.path.string() + ": comparing a video file needs FFmpeg; this "
                       "build has no media support (H3P_WITH_MEDIA=OFF)");
    }
    return params.decode_video(side.info.path, rate, keep);
  };
  if (params.progress && (prov.info.kind == "video" || cand.info.kind == "video")) {
    params.progress(0.0, "decoding");
  }
  std::future<std::unique_ptr<runs::DecodingClip>> cand_decoding;
  if (cand.info.kind == "video") {
    cand_decoding = std::async(std::launch::async, start_decode, std::ref(cand), rate_of(prov));
  }
  if (prov.info.kind == "video") prov.decoding = start_decode(prov, rate_of(cand));
  if (cand_decoding.valid()) cand.decoding = cand_decoding.get();
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
  check_frames(cand, prov);
  const bool from_file = cand.decoding || prov.decoding;
  if (!from_file) check_audio(*cand.clip, *prov.clip);

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
  if (params.progress) params.progress(0.5, from_file ? "decoding and pixels" : "pixels");
  auto view = [&](const OpenSide& side) {
    return side.clip ? view_of(*side.clip) : view_of(*side.decoding);
  };
  metrics::ClipView cview = view(cand), pview = view(prov);
  auto pixels_only = [](metrics::ClipView v) {
    v.audio = nullptr;
    return v;
  };
  out.clip = metrics::compare_clips(pixels_only(cview), pixels_only(pview), params.clip);
  // Audio once both decodes have ended. Audio decoded from a file may carry encoder padding:
  // compared over the common length.
  for (auto [side, v] : {std::pair{&cand, &cview}, std::pair{&prov, &pview}}) {
    if (!side->decoding) continue;
    const runs::ClipAudio& audio = side->decoding->finish();
    if (audio.channels > 0) {
      v->audio = audio.planar.data();
      v->audio_channels = audio.channels;
      v->audio_samples = audio.samples;
      v->sample_rate = audio.sample_rate;
    }
    if (keep) {
      keep_decoded(*side->decoding, audio,
                   params.work_dir / (side == &cand ? "candidate" : "provider"));
    }
  }
  if (from_file && cview.audio && pview.audio && cview.audio_samples != pview.audio_samples) {
    const std::int64_t common = std::min(cview.audio_samples, pview.audio_samples);
    out.notes.push_back("audio lengths differ (candidate " + std::to_string(cview.audio_samples) +
                        ", provider " + std::to_string(pview.audio_samples) +
                        " samples): compared over the first " + std::to_string(common));
    cview.audio_stride = cview.audio_samples;
    pview.audio_stride = pview.audio_samples;
    cview.audio_samples = pview.audio_samples = common;
  }
  out.clip.audio = metrics::compare_clip_audio(cview, pview, params.clip);
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
