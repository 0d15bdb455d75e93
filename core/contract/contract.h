#pragma once
// The generation contract: the pinned request a run is bound to (model, conditioning, seeds,
// geometry, sampling schedule) and the quality bounds fixed before generation. Parsed
// strictly: an unknown key, a wrong type or an out-of-range value is refused with an
// InputError "<file>: field '<name>': <what>". Its digest is what a run manifest records.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/contract/builtin_model.h"
#include "core/contract/calibration.h"

namespace h3p::contract {

// Quality limits a candidate run must meet against the provider run (fixed before generation).
struct Bounds {
  double psnr_db_min = 0.0;        // per-clip mean PSNR in dB, at least this
  double ssim_min = 0.0;           // per-clip mean SSIM in [-1, 1], at least this
  double temporal_rmse_max = 0.0;  // RMSE of frame-to-frame differences, at most this (>= 0)
  double audio_rel_l2_max = 0.0;   // relative L2 error of the waveform, at most this (>= 0)

  // One line: "psnr_db_min=30 ssim_min=0.99 ...".
  std::string describe() const;
  bool operator==(const Bounds&) const = default;
};

// A parsed, validated contract. Path-valued fields hold the text as written in the file;
// the *_path() accessors resolve relative paths against the contract file's directory.
struct Contract {
  std::string name;                  // directory-safe: [A-Za-z0-9._-]+, not starting with '.'
  std::string model;                 // a built-in model (builtin_model.h) or a model directory
  std::string prompt;                // synthetic conditioning from this text (exclusive with
                                     // conditioning_file); empty when conditioning_file is set
  std::int64_t text_tokens = 0;      // rows of synthetic text conditioning; 0 with a file
  std::string conditioning_file;     // optional conditioning safetensors (encoder output)
  std::string reference_image;       // optional reference image for the first frame
  std::vector<std::uint64_t> seeds;  // non-empty, unique
  int frames = 0;                    // >= 5 (the pipeline snaps up to 17n+5)
  int width = 0;                     // pixels, multiple of 32
  int height = 0;                    // pixels, multiple of 32
  int fps = 0;                       // > 0
  int audio_sample_rate = 0;         // Hz, > 0
  int sampling_steps = 0;            // sigma grid points including the final 0 (>= 2)
  double video_shift = 0.0;          // > 0
  double audio_shift = 0.0;          // > 0
  Bounds bounds;
  bool require_gate = false;     // generation refuses to start without a passed gate
  // How the bounds were derived from the provider's own spread (`calibrate`); absent in a
  // contract whose bounds were written by hand. Part of the digest only when present.
  std::optional<Calibration> calibration;
  std::filesystem::path source;  // the file it was read from; not part of the digest

  // True when `model` names a built-in model ("preset:tiny", "seeded:full-shape?layers=50").
  bool model_is_builtin() const;
  // The built-in model (validated when the contract was parsed); nullopt for a directory.
  std::optional<BuiltinModel> builtin_model() const;
  // The model directory, resolved against the contract's directory; empty for a preset.
  std::filesystem::path model_path() const;
  // The conditioning file, resolved; empty when the contract uses a prompt.
  std::filesystem::path conditioning_path() const;
  // The reference image, resolved; empty when none.
  std::filesystem::path reference_image_path() const;

  // Multi-line "key: value" listing of every field (for logs and manifests).
  std::string describe() const;
  bool operator==(const Contract&) const = default;
};


// Reads and validates a contract file. Throws InputError naming the file and the field.
// Duplicate keys in the file are refused.
Contract load_contract(const std::filesystem::path& path);

// Validates an already parsed JSON value; `source` names the file in messages and anchors
// relative paths (it may be empty for an in-memory contract).
Contract parse_contract(const nlohmann::json& json, const std::filesystem::path& source);

// The canonical JSON form (keys sorted, optional fields omitted when empty, no `source`);
// parse_contract(to_json(c), c.source) == c.
nlohmann::json to_json(const Contract& contract);

// SHA-256 (lower-case hex) of to_json(contract).dump(): what a run manifest records.
// Independent of key order, whitespace and the file's location.
std::string contract_digest(const Contract& contract);

}  // namespace h3p::contract
