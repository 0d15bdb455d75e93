#include "core/sampling/layout.h"

#include <ATen/ATen.h>

#include <cmath>

#include "core/common/error.h"

namespace h3p::sampling {

namespace {

constexpr double kFrameRescale = 5.0 / 3.0;                // rotary units per pixel frame
constexpr int kFramesPerLatent[5] = {1, 4, 4, 4, 4};       // pixel frames behind each latent
constexpr int kSpanPeriod = 5;
constexpr double kSpatialScale = 32.0;                     // rotary units across the unit axis
constexpr int64_t kPatchH = 2;
constexpr int64_t kPatchW = 2;

double frame_span(int64_t index) { return kFrameRescale * kFramesPerLatent[index % kSpanPeriod]; }

// One aspect-normalised spatial axis: dim/patch coordinates centred on the unit interval,
// right end excluded, scaled by 32 (float64 as the reference builds it with numpy).
std::vector<double> spatial_grid(int64_t dim, int64_t patch, double sqrt_area) {
  const double ratio = static_cast<double>(dim) / sqrt_area;
  const double left = (1.0 - ratio) / 2.0;
  std::vector<double> grid = numpy_linspace_open(left, left + ratio, dim / patch);
  for (double& v : grid) v = v * kSpatialScale;
  return grid;
}

}  // namespace

double numpy_pairwise_sum(const double* a, int64_t n) {
  if (n < 8) {
    double res = -0.0;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(a, n2) + numpy_pairwise_sum(a + n2, n - n2);
}

std::vector<double> numpy_linspace_open(double start, double stop, int64_t num) {
  std::vector<double> out(static_cast<std::size_t>(num < 0 ? 0 : num));
  if (num <= 0) return out;
  const double delta = stop - start;
  const double step = delta / static_cast<double>(num);
  for (int64_t i = 0; i < num; ++i) {
    // numpy: y = arange(num) * step (or /num * delta for a zero step), then y += start.
    const double y = step == 0.0 ? static_cast<double>(i) / static_cast<double>(num) * delta
                                 : static_cast<double>(i) * step;
    out[static_cast<std::size_t>(i)] = y + start;
  }
  return out;
}

std::vector<double> temporal_position_grid(int64_t num_latent_frames, double origin) {
  std::vector<double> out(static_cast<std::size_t>(num_latent_frames));
  double cumulative = 0.0;
  for (int64_t i = 0; i < num_latent_frames; ++i) {
    // origin + cat([0], cumsum(spans[:-1])): the cumsum is sequential in float64.
    out[static_cast<std::size_t>(i)] = origin + cumulative;
    cumulative += frame_span(i);
  }
  return out;
}

double keyframe_anchor_time(const std::string& anchor, int64_t num_text_tokens,
                            int64_t num_latent_frames) {
  if (anchor == "first") return static_cast<double>(num_text_tokens);
  if (anchor == "last") {
    std::vector<double> spans(static_cast<std::size_t>(num_latent_frames));
    for (int64_t i = 0; i < num_latent_frames; ++i) {
      // np.ones * 5/3, then every fifth element from `offset` times its pattern entry.
      spans[static_cast<std::size_t>(i)] = kFrameRescale * kFramesPerLatent[i % kSpanPeriod];
    }
    const double total = numpy_pairwise_sum(spans.data(), num_latent_frames);
    return static_cast<double>(num_text_tokens) + total - kFrameRescale;
  }
  throw_input("keyframe anchors", "an anchor must be 'first' or 'last', got '" + anchor + "'");
}

PackedLayout build_packed_layout(const at::Tensor& text_token_tags, const Geometry& geometry,
                                 const std::vector<std::string>& keyframe_anchors) {
  if (text_token_tags.dim() != 1 || text_token_tags.size(0) < 1) {
    throw_input("text_token_tags", "must be a non-empty 1-D tensor");
  }
  if (at::isFloatingType(text_token_tags.scalar_type()) ||
      text_token_tags.scalar_type() == at::kBool) {
    throw_input("text_token_tags", "must hold integers");
  }
  const int64_t latent_h = geometry.latent_height;
  const int64_t latent_w = geometry.latent_width;
  const int64_t num_frames = geometry.num_latent_frames;
  if (latent_h <= 0 || latent_w <= 0 || latent_h % kPatchH || latent_w % kPatchW ||
      num_frames <= 0 || geometry.num_audio_latents < 0) {
    throw_input("layout", "latent shape " + std::to_string(num_frames) + "x" +
                              std::to_string(latent_h) + "x" + std::to_string(latent_w) +
                              " is not divisible by the (1, 2, 2) patch");
  }
  const at::Tensor tags = text_token_tags.to(at::kLong).contiguous();

  const int64_t grid_h = latent_h / kPatchH;
  const int64_t grid_w = latent_w / kPatchW;
  const int64_t rows_per_frame = grid_h * grid_w;
  const int64_t num_text = tags.size(0);
  const int64_t num_condition = static_cast<int64_t>(keyframe_anchors.size()) * rows_per_frame;
  const int64_t num_audio_latents = geometry.num_audio_latents;
  const int64_t num_audio = num_audio_latents * kAudioChannels;
  const int64_t num_video = num_frames * rows_per_frame;
  const int64_t length = num_text + num_condition + num_audio + num_video;
  const int64_t condition_start = num_text;
  const int64_t audio_start = condition_start + num_condition;
  const int64_t video_start = audio_start + num_audio;

  // 1. The spatial grid of one frame (h-major), shared by keyframes and generated frames.
  const double sqrt_area = std::sqrt(static_cast<double>(latent_h * latent_w));
  const std::vector<double> height_grid = spatial_grid(latent_h, kPatchH, sqrt_area);
  const std::vector<double> width_grid = spatial_grid(latent_w, kPatchW, sqrt_area);

  at::Tensor positions = at::zeros({length, 3}, at::TensorOptions().dtype(at::kDouble));
  double* pos = positions.data_ptr<double>();
  auto set_row = [pos](int64_t row, double t, double h, double w) {
    pos[row * 3 + 0] = t;
    pos[row * 3 + 1] = h;
    pos[row * 3 + 2] = w;
  };
  auto fill_frame = [&](int64_t first_row, double t) {
    for (int64_t i = 0; i < grid_h; ++i) {
      for (int64_t j = 0; j < grid_w; ++j) {
        set_row(first_row + i * grid_w + j, t, height_grid[i], width_grid[j]);
      }
    }
  };

  // 2. Text rows sit on the time axis at their index.
  for (int64_t i = 0; i < num_text; ++i) set_row(i, static_cast<double>(i), 0.0, 0.0);

  // 3. Keyframe blocks, one frame each, at their anchor time.
  for (std::size_t k = 0; k < keyframe_anchors.size(); ++k) {
    const double anchor = keyframe_anchor_time(keyframe_anchors[k], num_text, num_frames);
    fill_frame(condition_start + static_cast<int64_t>(k) * rows_per_frame, anchor);
  }

  // 4. Audio rows, channel-major: time L + k, no height, pinned to the width grid's two ends.
  for (int64_t c = 0; c < kAudioChannels; ++c) {
    const double w = c == 0 ? width_grid.front() : width_grid.back();
    for (int64_t k = 0; k < num_audio_latents; ++k) {
      set_row(audio_start + c * num_audio_latents + k,
              static_cast<double>(num_text) + static_cast<double>(k), 0.0, w);
    }
  }

  // 5. Generated video rows, frame-major, on the non-uniform temporal grid.
  const std::vector<double> frame_times =
      temporal_position_grid(num_frames, static_cast<double>(num_text));
  for (int64_t f = 0; f < num_frames; ++f) {
    fill_frame(video_start + f * rows_per_frame, frame_times[static_cast<std::size_t>(f)]);
  }

  // 6. Row indices and tags.
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  PackedLayout layout;
  layout.position_ids = positions;
  layout.video_indices = at::cat({at::arange(condition_start, audio_start, long_options),
                                  at::arange(video_start, length, long_options)});
  layout.audio_indices = at::arange(audio_start, video_start, long_options);
  layout.text_indices = at::arange(num_text, long_options);
  layout.token_tags = at::empty({length}, long_options);
  layout.token_tags.slice(0, 0, num_text).copy_(tags);
  layout.token_tags.slice(0, audio_start, video_start).fill_(kAudioTag);
  layout.token_tags.slice(0, condition_start, audio_start).fill_(kVideoTag);
  layout.token_tags.slice(0, video_start, length).fill_(kVideoTag);
  layout.num_condition_video_rows = num_condition;
  layout.sequence_length = length;
  return layout;
}

}  // namespace h3p::sampling
