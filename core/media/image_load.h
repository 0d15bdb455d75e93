#pragma once
// Reference images through OpenCV: read (any format imgcodecs reads), converted to RGB, scaled
// to cover the target size (area interpolation when shrinking, cubic when enlarging) and
// centre-cropped, as fp32 planes in [0, 1].
#include <filesystem>
#include <vector>

namespace h3p::media {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<float> planes;  // (3, height, width), R G B, in [0, 1]
};

// Throws InputError naming the file when it cannot be read or a size is not positive.
RgbImage load_reference_image(const std::filesystem::path& file, int width, int height);

}  // namespace h3p::media
