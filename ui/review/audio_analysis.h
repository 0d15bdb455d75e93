#pragma once
// What the audio lane draws, computed from interleaved stereo float tracks. Pure; any thread.
#include <QImage>
#include <utility>
#include <vector>

namespace h3p::ui {

// The mean of the two channels of interleaved stereo `stereo`.
std::vector<float> monoMix(const std::vector<float>& stereo);

// Min and max of `mono` over each of `columns` equal spans of its first `samples` samples
// (samples past the end count as 0). columns > 0.
std::vector<std::pair<float, float>> envelope(const std::vector<float>& mono, long long samples,
                                              int columns);

// Spectrogram of (a - b) (mono, the shorter one zero-padded): Hann windows of `window`
// samples every `hop`, magnitude in dB (0 dB = a full-scale sine) from `floorDb` to 0 through
// the inferno colour map; x = time, y = frequency, low at the bottom. Null when both are empty.
QImage differenceSpectrogram(const std::vector<float>& a, const std::vector<float>& b,
                             int window = 512, int hop = 256, double floorDb = -120);

}  // namespace h3p::ui
