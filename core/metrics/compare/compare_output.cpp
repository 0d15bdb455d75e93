#include "core/metrics/compare/compare_output.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace h3p::compare {
namespace {

std::string fixed(double v, int digits) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

std::string label(const SideInfo& side) {
  if (side.kind == "run") return side.impl_spec;
  return side.path.filename().string();
}

std::string seed_text(const Comparison& c) {
  const auto& seed = c.candidate.seed ? c.candidate.seed : c.provider.seed;
  return seed ? std::to_string(*seed) : "-";
}

nlohmann::json side_json(const SideInfo& s) {
  nlohmann::json j = {{"path", s.path.string()}, {"kind", s.kind}};
  if (s.kind == "run") {
    j["impl_spec"] = s.impl_spec;
    j["seed"] = *s.seed;
    j["contract"] = s.contract_name;
    j["contract_digest"] = s.contract_digest;
    j["mixed"] = s.mixed;
    j["numerics_segments"] = s.segment_count;
    if (s.segment_count > 1) j["segments"] = s.segments;
  }
  return j;
}

nlohmann::json diff_json(const metrics::TensorDiff& d) {
  return {{"rel_l2", number_json(d.rel_l2)}, {"max_abs", number_json(d.max_abs)},
          {"bitwise_equal", d.bitwise_equal}, {"finite", d.finite}};
}

nlohmann::json range_json(const FigureRange& r) {
  return {{"min", number_json(r.min)}, {"max", number_json(r.max)}};
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? number_json(*v) : nlohmann::json();
}

std::string range_text(const FigureRange& r, bool scientific) {
  return scientific ? sci(r.min) + ".." + sci(r.max) : fixed(r.min, 3) + ".." + fixed(r.max, 3);
}

std::string ssim_range_text(const FigureRange& r) { return fixed(r.min, 6) + ".." + fixed(r.max, 6); }

// The calibration a contract's bounds follow, in one sentence.
std::string calibration_text(const contract::Calibration& c) {
  std::string text = "calibrated by rule `" + c.rule + "` on seeds";
  for (std::size_t i = 0; i < c.seeds.size(); ++i) text += (i ? ", " : " ") + std::to_string(c.seeds[i]);
  text += " with variants";
  for (std::size_t i = 0; i < c.variants.size(); ++i) text += (i ? ", `" : " `") + c.variants[i] + "`";
  return text;
}

// Comparisons with a noise floor, grouped by the provider's contract and the seed.
std::vector<std::vector<const Comparison*>> noise_floor_groups(const std::vector<Comparison>& all) {
  std::map<std::pair<std::string, std::string>, std::vector<const Comparison*>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const Comparison& c : all) {
    if (!c.noise_floor) continue;
    const std::pair<std::string, std::string> key = {c.provider.path.string(), seed_text(c)};
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(&c);
  }
  std::vector<std::vector<const Comparison*>> out;
  for (const auto& key : order) out.push_back(groups[key]);
  return out;
}

nlohmann::json variant_json(const VariantFigures& v) {
  std::optional<double> video_max, audio_max;
  nlohmann::json steps = nlohmann::json::array();
  for (const VariantFigures::Step& s : v.steps) {
    video_max = std::max(video_max.value_or(0.0), s.video_rel_l2);
    audio_max = std::max(audio_max.value_or(0.0), s.audio_rel_l2);
    steps.push_back({{"step", s.step},
                     {"video_rel_l2", number_json(s.video_rel_l2)},
                     {"audio_rel_l2", number_json(s.audio_rel_l2)}});
  }
  return {{"spec", v.spec},
          {"run", v.run.string()},
          {"psnr_db", number_json(v.psnr_db)},
          {"ssim", number_json(v.ssim)},
          {"temporal_rmse", number_json(v.temporal_rmse)},
          {"audio_rel_l2", optional_json(v.audio_rel_l2)},
          {"step_video_rel_l2_max", optional_json(video_max)},
          {"step_audio_rel_l2_max", optional_json(audio_max)},
          {"steps", steps}};
}

nlohmann::json range_object_json(const NoiseFloor& nf) {
  return {{"psnr_db", range_json(nf.psnr_db)},
          {"ssim", range_json(nf.ssim)},
          {"temporal_rmse", range_json(nf.temporal_rmse)},
          {"audio_rel_l2", nf.audio_rel_l2 ? range_json(*nf.audio_rel_l2) : nlohmann::json()}};
}

}  // namespace

std::string spread_verdict(const Comparison& c) {
  if (!c.noise_floor) return "-";
  return c.noise_floor->within_spread() ? "within" : "OUTSIDE";
}

nlohmann::json to_json(const NoiseFloor& nf) {
  nlohmann::json variants = nlohmann::json::array();
  for (const VariantFigures& v : nf.variants) variants.push_back(variant_json(v));
  return {{"variants", variants},
          {"range", range_object_json(nf)},
          {"within_spread", nf.within_spread()},
          {"outside", nf.outside},
          {"skipped", nf.skipped}};
}

nlohmann::json noise_floor_table_json(const std::vector<Comparison>& comparisons) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& group : noise_floor_groups(comparisons)) {
    const Comparison& first = *group.front();
    nlohmann::json variants = nlohmann::json::array();
    for (const VariantFigures& v : first.noise_floor->variants) variants.push_back(variant_json(v));
    nlohmann::json candidates = nlohmann::json::array();
    for (const Comparison* c : group) {
      candidates.push_back(
          {{"candidate", label(c->candidate)},
           {"run", c->candidate.path.string()},
           {"psnr_db", number_json(c->clip.psnr_db)},
           {"ssim", number_json(c->clip.ssim)},
           {"temporal_rmse", number_json(c->clip.temporal_rmse)},
           {"audio_rel_l2", c->clip.audio ? number_json(c->clip.audio->rel_l2) : nlohmann::json()},
           {"within_spread", c->noise_floor->within_spread()},
           {"outside", c->noise_floor->outside},
           {"passed", c->passed() ? nlohmann::json(*c->passed()) : nlohmann::json()}});
    }
    out.push_back({{"contract", first.provider.contract_name},
                   {"provider", first.provider.path.string()},
                   {"seed", first.provider.seed ? nlohmann::json(*first.provider.seed) : nlohmann::json()},
                   {"variants", variants},
                   {"range", range_object_json(*first.noise_floor)},
                   {"candidates", candidates}});
  }
  return out;
}

std::string noise_floor_markdown(const std::vector<Comparison>& comparisons) {
  const auto groups = noise_floor_groups(comparisons);
  if (groups.empty()) return {};
  std::ostringstream out;
  out << "## Noise floor: the provider's own spread\n\n"
      << "Each provider variant run (the provider with a backend forced) against the provider "
         "run of the same seed, and each candidate beside the variants' range. \"Within "
         "spread\" means no worse than the worst variant on every metric; it is a second "
         "verdict next to the bounds, which alone decide pass or fail.\n";
  for (const auto& group : groups) {
    const Comparison& first = *group.front();
    const NoiseFloor& nf = *first.noise_floor;
    out << "\n### Seed " << seed_text(first) << " (" << first.provider.contract_name << ")\n\n"
        << "| run | PSNR dB | SSIM | temporal RMSE | audio L2 | max step velocity L2 | within "
           "spread | bounds |\n|---|---|---|---|---|---|---|---|\n";
    for (const VariantFigures& v : nf.variants) {
      double step_max = 0;
      for (const auto& s : v.steps) step_max = std::max(step_max, s.video_rel_l2);
      out << "| variant `" << v.spec << "` | " << fixed(v.psnr_db, 3) << " | " << fixed(v.ssim, 6)
          << " | " << sci(v.temporal_rmse) << " | " << (v.audio_rel_l2 ? sci(*v.audio_rel_l2) : "-")
          << " | " << (v.steps.empty() ? "-" : sci(step_max)) << " | | |\n";
    }
    out << "| **variants min..max** | " << range_text(nf.psnr_db, false) << " | "
        << ssim_range_text(nf.ssim) << " | " << range_text(nf.temporal_rmse, true) << " | "
        << (nf.audio_rel_l2 ? range_text(*nf.audio_rel_l2, true) : "-") << " | | | |\n";
    for (const Comparison* c : group) {
      double step_max = 0;
      for (const StepRow& s : c->steps) step_max = std::max(step_max, s.video.rel_l2);
      out << "| candidate `" << label(c->candidate) << "` | " << fixed(c->clip.psnr_db, 3) << " | "
          << fixed(c->clip.ssim, 6) << " | " << sci(c->clip.temporal_rmse) << " | "
          << (c->clip.audio ? sci(c->clip.audio->rel_l2) : "-") << " | "
          << (c->steps.empty() ? "-" : sci(step_max)) << " | " << spread_verdict(*c) << " | "
          << verdict(*c) << " |\n";
    }
    for (const Comparison* c : group) {
      for (const std::string& o : c->noise_floor->outside) {
        out << "- `" << label(c->candidate) << "` outside the spread: " << o << "\n";
      }
    }
    for (const std::string& s : nf.skipped) out << "- variant run not measured: " << s << "\n";
  }
  return out.str();
}

nlohmann::json number_json(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return nullptr;
  return v;
}

std::string verdict(const Comparison& c) {
  const auto p = c.passed();
  return !p ? "-" : (*p ? "pass" : "FAIL");
}

nlohmann::json to_json(const Comparison& c) {
  const metrics::ClipComparison& clip = c.clip;
  nlohmann::json summary = {
      {"psnr_db", number_json(clip.psnr_db)},
      {"ssim", number_json(clip.ssim)},
      {"temporal_rmse", number_json(clip.temporal_rmse)},
      {"audio_rel_l2", clip.audio ? number_json(clip.audio->rel_l2) : nlohmann::json()},
      {"psnr_db_ffmpeg", number_json(clip.psnr_db_ffmpeg)},
      {"ssim_ffmpeg", number_json(clip.ssim_ffmpeg)},
      {"passed", c.passed() ? nlohmann::json(*c.passed()) : nlohmann::json()},
      {"psnr_db_min_frame", number_json(clip.psnr_db_min)},
      {"ssim_min_frame", number_json(clip.ssim_min)},
      {"audio_max_abs", clip.audio ? number_json(clip.audio->max_abs) : nlohmann::json()},
      {"frames", clip.frames.size()},
      {"pixel_source", clip.pixel_source},
      {"yuv_conversion", clip.yuv_conversion},
      {"first_step_over_threshold", c.first_step_over}};
  nlohmann::json bounds;  // null without bounds
  if (c.bounds.bounds) {
    const contract::Bounds& b = *c.bounds.bounds;
    bounds = {{"psnr_db_min", b.psnr_db_min},
              {"ssim_min", b.ssim_min},
              {"temporal_rmse_max", b.temporal_rmse_max},
              {"audio_rel_l2_max", b.audio_rel_l2_max},
              {"source", c.bounds.source},
              {"post_hoc", c.bounds.post_hoc}};
    if (c.bounds.calibration) {
      const contract::Calibration& cal = *c.bounds.calibration;
      bounds["calibration"] = {{"rule", cal.rule},
                               {"rule_text", cal.rule_text},
                               {"seeds", cal.seeds},
                               {"variants", cal.variants},
                               {"runs_contract_digest", cal.runs_contract_digest}};
    }
  }
  nlohmann::json frames = nlohmann::json::array();
  for (const metrics::FrameRow& f : clip.frames) {
    frames.push_back({{"index", f.index},
                      {"psnr_db", number_json(f.psnr_db)},
                      {"ssim", number_json(f.ssim)},
                      {"psnr_db_ffmpeg", number_json(f.psnr_db_ffmpeg)},
                      {"ssim_ffmpeg", number_json(f.ssim_ffmpeg)},
                      {"mse", number_json(f.mse)},
                      {"temporal_rmse",
                       f.temporal_rmse ? number_json(*f.temporal_rmse) : nlohmann::json()}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepRow& s : c.steps) {
    steps.push_back({{"step", s.step},
                     {"video_rel_l2", number_json(s.video.rel_l2)},
                     {"audio_rel_l2", number_json(s.audio.rel_l2)},
                     {"video_latent_rel_l2", number_json(s.video_latent.rel_l2)},
                     {"audio_latent_rel_l2", number_json(s.audio_latent.rel_l2)},
                     {"bitwise_equal", s.video.bitwise_equal && s.audio.bitwise_equal}});
  }
  nlohmann::json out = {{"candidate", side_json(c.candidate)},
                        {"provider", side_json(c.provider)},
                        {"summary", summary},
                        {"bounds", bounds},
                        {"failures", c.failures},
                        {"frames", frames},
                        {"steps", steps},
                        {"step_threshold", c.step_threshold},
                        {"notes", c.notes},
                        {"noise_floor", c.noise_floor ? to_json(*c.noise_floor) : nlohmann::json()}};
  if (clip.audio) {
    nlohmann::json windows = nlohmann::json::array();
    for (double w : clip.audio->windows) windows.push_back(number_json(w));
    out["audio_windows"] = {{"window_samples", clip.audio->window_samples},
                            {"rel_l2", windows}};
  }
  if (c.final_video_latents) {
    out["final_latents"] = {{"video", diff_json(*c.final_video_latents)},
                            {"audio", diff_json(*c.final_audio_latents)}};
  }
  return out;
}

nlohmann::json to_json(const std::vector<Comparison>& comparisons) {
  if (comparisons.size() == 1) return to_json(comparisons.front());
  nlohmann::json all = nlohmann::json::array();
  bool any_bounds = false, passed = true;
  for (const Comparison& c : comparisons) {
    all.push_back(to_json(c));
    if (c.passed()) {
      any_bounds = true;
      passed = passed && *c.passed();
    }
  }
  return {{"comparisons", all}, {"passed", any_bounds ? nlohmann::json(passed) : nlohmann::json()}};
}

std::string terminal_table(const std::vector<Comparison>& comparisons) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-32s %6s %10s %9s %12s %11s %11s %10s %6s\n", "candidate",
                "seed", "PSNR dB", "SSIM", "temporal", "audio L2", "PSNR ffm", "SSIM ffm",
                "passed");
  out << line;
  for (const Comparison& c : comparisons) {
    std::snprintf(line, sizeof line, "%-32s %6s %10s %9s %12s %11s %11s %10s %6s\n",
                  label(c.candidate).c_str(), seed_text(c).c_str(),
                  fixed(c.clip.psnr_db, 3).c_str(), fixed(c.clip.ssim, 6).c_str(),
                  sci(c.clip.temporal_rmse).c_str(),
                  c.clip.audio ? sci(c.clip.audio->rel_l2).c_str() : "-",
                  fixed(c.clip.psnr_db_ffmpeg, 3).c_str(), fixed(c.clip.ssim_ffmpeg, 6).c_str(),
                  verdict(c).c_str());
    out << line;
  }
  for (const Comparison& c : comparisons) {
    const std::string who = label(c.candidate) + " seed " + seed_text(c);
    for (const std::string& f : c.failures) out << who << ": " << f << "\n";
    for (const std::string& n : c.notes) out << who << ": note: " << n << "\n";
    if (!c.steps.empty()) {
      out << who << ": first step whose velocity rel L2 exceeds " << sci(c.step_threshold)
          << ": " << (c.first_step_over < 0 ? "none" : std::to_string(c.first_step_over)) << "\n";
    }
  }
  // The noise floor: each candidate figure beside the provider variants' range.
  for (const Comparison& c : comparisons) {
    if (!c.noise_floor) continue;
    const NoiseFloor& nf = *c.noise_floor;
    out << "noise floor, seed " << seed_text(c) << ", " << nf.variants.size()
        << " provider variant run(s):";
    for (const VariantFigures& v : nf.variants) out << " " << v.spec;
    out << "\n";
    std::snprintf(line, sizeof line, "  %-16s %-20s %-28s\n", "metric", label(c.candidate).c_str(),
                  "variants min..max");
    out << line;
    auto row = [&](const char* metric, const std::string& value, const std::string& range) {
      std::snprintf(line, sizeof line, "  %-16s %-20s %-28s\n", metric, value.c_str(), range.c_str());
      out << line;
    };
    row("PSNR dB", fixed(c.clip.psnr_db, 3), range_text(nf.psnr_db, false));
    row("SSIM", fixed(c.clip.ssim, 6), ssim_range_text(nf.ssim));
    row("temporal RMSE", sci(c.clip.temporal_rmse), range_text(nf.temporal_rmse, true));
    row("audio L2", c.clip.audio ? sci(c.clip.audio->rel_l2) : "-",
        nf.audio_rel_l2 ? range_text(*nf.audio_rel_l2, true) : "-");
    out << label(c.candidate) << " seed " << seed_text(c) << ": bounds " << verdict(c)
        << "; within the provider's own spread: " << (nf.within_spread() ? "yes" : "no");
    for (std::size_t i = 0; i < nf.outside.size(); ++i) out << (i ? "; " : " (") << nf.outside[i];
    out << (nf.outside.empty() ? "" : ")") << "\n";
    for (const std::string& s : nf.skipped) out << "  variant run not measured: " << s << "\n";
  }
  if (!comparisons.empty()) {
    const Comparison& c = comparisons.front();
    if (c.bounds.calibration) out << "bounds " << calibration_text(*c.bounds.calibration) << "\n";
    out << "pixels: " << c.clip.pixel_source << "; ffmpeg figures via " << c.clip.yuv_conversion
        << "; bounds: " << (c.bounds.bounds ? c.bounds.source : "none") << "\n";
  }
  return out.str();
}

std::string to_markdown(const std::vector<Comparison>& comparisons) {
  std::ostringstream out;
  out << "## Candidate against provider\n\n"
      << "PSNR and SSIM on the decoded frames before quantisation (SSIM: Gaussian 11x11 window, "
         "sigma 1.5, per channel, as in Wang et al. 2004; clip PSNR pooled over frame MSEs); "
         "`ffmpeg` columns as FFmpeg's psnr (`average:`) and ssim (`All:`) filters on yuv420p; "
         "temporal RMSE of frame-to-frame differences; audio relative L2 over the whole "
         "waveform.\n\n"
      << "| candidate | provider | seed | PSNR dB | SSIM | temporal RMSE | audio L2 | PSNR dB "
         "(ffmpeg) | SSIM (ffmpeg) | passed |\n"
      << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Comparison& c : comparisons) {
    out << "| `" << label(c.candidate) << "` | `" << label(c.provider) << "` | " << seed_text(c)
        << " | " << fixed(c.clip.psnr_db, 3) << " | " << fixed(c.clip.ssim, 6) << " | "
        << sci(c.clip.temporal_rmse) << " | " << (c.clip.audio ? sci(c.clip.audio->rel_l2) : "-")
        << " | " << fixed(c.clip.psnr_db_ffmpeg, 3) << " | " << fixed(c.clip.ssim_ffmpeg, 6)
        << " | " << verdict(c) << " |\n";
  }
  const std::string floor = noise_floor_markdown(comparisons);
  if (!floor.empty()) out << "\n" << floor;
  for (const Comparison& c : comparisons) {
    out << "\n### `" << label(c.candidate) << "` seed " << seed_text(c) << "\n\n"
        << "Candidate `" << c.candidate.path.string() << "`, provider `"
        << c.provider.path.string() << "`. Pixels: " << c.clip.pixel_source
        << ". Bounds: " << (c.bounds.bounds ? c.bounds.bounds->describe() + " (" + c.bounds.source + ")"
                                            : std::string("none"))
        << (c.bounds.calibration ? "; " + calibration_text(*c.bounds.calibration) : std::string())
        << ".\n\n";
    for (const std::string& f : c.failures) out << "- failed: " << f << "\n";
    for (const std::string& n : c.notes) out << "- note: " << n << "\n";
    if (!c.steps.empty()) {
      out << "\nFirst step whose velocity relative L2 exceeds " << sci(c.step_threshold) << ": "
          << (c.first_step_over < 0 ? "none" : std::to_string(c.first_step_over)) << ".\n\n"
          << "| step | video velocity | audio velocity | video latent | audio latent |\n"
          << "|---|---|---|---|---|\n";
      for (const StepRow& s : c.steps) {
        out << "| " << s.step << " | " << sci(s.video.rel_l2) << " | " << sci(s.audio.rel_l2)
            << " | " << sci(s.video_latent.rel_l2) << " | " << sci(s.audio_latent.rel_l2)
            << " |\n";
      }
    }
    out << "\n| frame | PSNR dB | SSIM | PSNR dB (ffmpeg) | SSIM (ffmpeg) | temporal RMSE |\n"
        << "|---|---|---|---|---|---|\n";
    for (const metrics::FrameRow& f : c.clip.frames) {
      out << "| " << f.index << " | " << fixed(f.psnr_db, 3) << " | " << fixed(f.ssim, 6) << " | "
          << fixed(f.psnr_db_ffmpeg, 3) << " | " << fixed(f.ssim_ffmpeg, 6) << " | "
          << (f.temporal_rmse ? sci(*f.temporal_rmse) : "-") << " |\n";
    }
  }
  return out.str();
}

}  // namespace h3p::compare
