#pragma once
// The difference view of two frames: per pixel the largest channel of |a - b|, times a gain,
// clamped to 255 and shown through the turbo colour map (OpenCV). Pure; any thread.
#include <QImage>

namespace h3p::ui {

// a and b: RGB888 images of one size. Returns an RGB888 image of that size (black where equal
// under the colour map's zero). gain >= 0. A size mismatch returns a null image.
QImage differenceImage(const QImage& a, const QImage& b, double gain);

// The magnitude differenceImage() colours at a pixel: min(255, gain * max_c |a_c - b_c|).
int differenceMagnitude(QRgb a, QRgb b, double gain);

}  // namespace h3p::ui
