#include "core/metrics/compare/bounds_check.h"

#include <cstdio>

#include "core/common/error.h"

namespace h3p::compare {
namespace fs = std::filesystem;

BoundsChoice choose_bounds(const std::string& contract_digest, const fs::path& run_dir,
                           const std::optional<contract::Contract>& given, bool allow_post_hoc,
                           const std::vector<contract::Contract>& known) {
  BoundsChoice choice;
  if (given) {
    const std::string digest = contract::contract_digest(*given);
    if (contract_digest.empty() || digest == contract_digest) {
      choice.bounds = given->bounds;
      choice.calibration = given->calibration;
      choice.source = "contract " + given->source.string();
      return choice;
    }
    if (!allow_post_hoc) {
      throw InputError(given->source.string() + ": contract digest " + digest +
                       " differs from the runs' contract_digest " + contract_digest +
                       ": its bounds were not fixed before generation (pass --post-hoc to report "
                       "them as a second, post-hoc rule)");
    }
    choice.bounds = given->bounds;
    choice.calibration = given->calibration;
    choice.source = "contract " + given->source.string() + " (post-hoc)";
    choice.post_hoc = true;
    return choice;
  }
  if (contract_digest.empty()) return choice;
  if (!run_dir.empty()) {
    for (const fs::path& file :
         {run_dir / "contract.json", run_dir / ".." / ".." / "contract.json"}) {
      if (!fs::exists(file)) continue;
      const contract::Contract c = contract::load_contract(file);
      if (contract::contract_digest(c) == contract_digest) {
        choice.bounds = c.bounds;
        choice.calibration = c.calibration;
        choice.source = "contract " + file.lexically_normal().string();
        return choice;
      }
    }
  }
  for (const contract::Contract& c : known) {
    if (contract::contract_digest(c) == contract_digest) {
      choice.bounds = c.bounds;
      choice.calibration = c.calibration;
      choice.source = "contract '" + c.name + "' (built in)";
      return choice;
    }
  }
  return choice;
}

std::vector<std::string> bound_failures(const metrics::ClipComparison& clip,
                                        const contract::Bounds& b) {
  std::vector<std::string> out;
  if (!(clip.psnr_db >= b.psnr_db_min)) {
    out.push_back("psnr_db " + figure_text(clip.psnr_db) + " < psnr_db_min " +
                  figure_text(b.psnr_db_min));
  }
  if (!(clip.ssim >= b.ssim_min)) {
    out.push_back("ssim " + figure_text(clip.ssim) + " < ssim_min " + figure_text(b.ssim_min));
  }
  if (!(clip.temporal_rmse <= b.temporal_rmse_max)) {
    out.push_back("temporal_rmse " + figure_text(clip.temporal_rmse) + " > temporal_rmse_max " +
                  figure_text(b.temporal_rmse_max));
  }
  if (!clip.audio) {
    out.push_back("audio_rel_l2: no audio to compare (audio_rel_l2_max " +
                  figure_text(b.audio_rel_l2_max) + ")");
  } else if (!(clip.audio->rel_l2 <= b.audio_rel_l2_max)) {
    out.push_back("audio_rel_l2 " + figure_text(clip.audio->rel_l2) + " > audio_rel_l2_max " +
                  figure_text(b.audio_rel_l2_max));
  }
  return out;
}

std::string figure_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace h3p::compare
