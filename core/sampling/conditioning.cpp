#include "core/sampling/conditioning.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <set>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "core/sampling/geometry.h"

namespace h3p::sampling {

namespace {

constexpr const char* kHiddenStates = "encoder_hidden_states";
constexpr const char* kTokenTags = "text_token_tags";
constexpr const char* kKeyframes = "keyframe_latents";

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& field,
                       const std::string& what) {
  throw InputError(path.string() + ": " + field + ": " + what);
}

void expect_dtype(const std::filesystem::path& path, const io::TensorInfo& info,
                  io::DType dtype) {
  if (info.dtype != dtype) {
    fail(path, info.name,
         "dtype must be " + std::string(io::dtype_name(dtype)) + ", got " +
             std::string(io::dtype_name(info.dtype)));
  }
}

void expect_finite(const std::filesystem::path& path, const std::string& field,
                   const at::Tensor& t) {
  if (t.numel() > 0 && !at::isfinite(t.to(at::kFloat)).all().item<bool>()) {
    fail(path, field, "holds a NaN or infinite value");
  }
}

}  // namespace

Conditioning load_conditioning(const std::filesystem::path& path, int64_t text_dim) {
  if (text_dim < 1) fail(path, "text_dim", "must be positive");
  const io::SafetensorsFile file = io::SafetensorsFile::open(path);
  const std::set<std::string> known = {kHiddenStates, kTokenTags, kKeyframes};
  for (const io::TensorInfo& info : file.tensors()) {
    if (!known.count(info.name)) fail(path, info.name, "unknown tensor in a conditioning file");
  }

  // 1. Prompt embeddings.
  const io::TensorInfo* states = file.find(kHiddenStates);
  if (!states) fail(path, kHiddenStates, "missing");
  expect_dtype(path, *states, io::DType::BF16);
  if (states->shape.size() != 3 || states->shape[0] != 1 || states->shape[1] < 1 ||
      states->shape[2] != text_dim) {
    fail(path, kHiddenStates,
         "shape must be (1, L, " + std::to_string(text_dim) + ") with L >= 1, got " +
             shape_text(states->shape));
  }
  Conditioning c;
  c.encoder_hidden_states = io::load_tensor(file, *states);
  expect_finite(path, kHiddenStates, c.encoder_hidden_states);
  const int64_t length = states->shape[1];

  // 2. Modality tags of the text stream (all text when absent).
  if (const io::TensorInfo* tags = file.find(kTokenTags)) {
    expect_dtype(path, *tags, io::DType::I64);
    if (tags->shape != std::vector<int64_t>{length}) {
      fail(path, kTokenTags,
           "shape must be (" + std::to_string(length) + ",), got " + shape_text(tags->shape));
    }
    c.text_token_tags = io::load_tensor(file, *tags);
    const at::Tensor valid = at::logical_or(at::eq(c.text_token_tags, 0),
                                            at::eq(c.text_token_tags, 1));
    if (!valid.all().item<bool>()) fail(path, kTokenTags, "values must be 0 (vision) or 1 (text)");
  } else {
    c.text_token_tags = at::ones({length}, at::kLong);
  }

  // 3. Keyframe latents, one single-frame tensor per keyframe.
  if (const io::TensorInfo* frames = file.find(kKeyframes)) {
    expect_dtype(path, *frames, io::DType::F32);
    const auto& s = frames->shape;
    if (s.size() != 5 || s[0] != 1 || s[1] != kLatentChannels || s[2] < 1 || s[3] < 2 ||
        s[4] < 2 || s[3] % 2 || s[4] % 2) {
      fail(path, kKeyframes,
           "shape must be (1, 24, K, h, w) with K >= 1 and even h, w, got " + shape_text(s));
    }
    const at::Tensor all = io::load_tensor(file, *frames);
    expect_finite(path, kKeyframes, all);
    for (int64_t k = 0; k < s[2]; ++k) {
      c.keyframe_latents.push_back(all.slice(2, k, k + 1).contiguous());
    }
  }
  c.source = path.string();
  return c;
}

uint64_t prompt_seed(const std::string& prompt) {
  const std::string digest = io::sha256_hex(std::string_view(prompt));
  return std::stoull(digest.substr(0, 16), nullptr, 16);
}

Conditioning synthesize_conditioning(const std::string& prompt, int64_t text_tokens,
                                     int64_t text_dim) {
  if (text_tokens < 1) {
    throw_input("synthetic conditioning", "text tokens must be >= 1, got " +
                                              std::to_string(text_tokens));
  }
  if (text_dim < 1) {
    throw_input("synthetic conditioning", "text dim must be >= 1, got " + std::to_string(text_dim));
  }
  at::Generator generator = at::detail::createCPUGenerator(prompt_seed(prompt));
  Conditioning c;
  c.encoder_hidden_states =
      at::randn({1, text_tokens, text_dim}, generator, at::TensorOptions().dtype(at::kFloat))
          .to(at::kBFloat16);
  c.text_token_tags = at::ones({text_tokens}, at::kLong);
  c.source = "synthetic:sha256=" + io::sha256_hex(std::string_view(prompt));
  return c;
}

}  // namespace h3p::sampling
