#include "core/runs/comparable.h"

#include <string>

#include "core/common/error.h"

namespace h3p::runs {

void check_comparable(const Manifest& p, const std::filesystem::path& provider_manifest,
                      const Manifest& c, const std::filesystem::path& candidate_manifest) {
  auto same = [&](bool ok, const std::string& field, const std::string& what) {
    if (!ok) {
      throw InputError(candidate_manifest.string() + ": field '" + field + "': " + what +
                       " differs from " + provider_manifest.string() +
                       "; the runs are not comparable");
    }
  };
  same(c.contract_digest == p.contract_digest, "contract_digest", "the contract");
  same(c.seed == p.seed, "seed", "the seed");
  same(c.identity.weights_digest == p.identity.weights_digest, "identity.weights_digest",
       "the model weights");
  same(c.identity.config_digest == p.identity.config_digest, "identity.config_digest",
       "the model config");
  same(c.noise_digest == p.noise_digest, "noise_digest", "the initial noise");
  same(c.conditioning_digest == p.conditioning_digest, "conditioning_digest", "the conditioning");
}

}  // namespace h3p::runs
