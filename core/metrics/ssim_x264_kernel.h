#pragma once
// Private to ffmpeg_compat.cpp and ssim_x264_kernel_*.cpp: the x264-style SSIM of one 8-bit
// plane (ffmpeg_compat.h) per ISA, with plain arguments only (the per-ISA files are compiled
// with their own -m flags and must not include headers with inline library code).
#include <cstddef>

namespace h3p::metrics::ssim_kernel {

// Scratch one plane of this width needs: ints of block sums, floats of window values.
inline std::size_t sum_ints(int width) { return 8 * (static_cast<std::size_t>(width >> 2) + 16); }
inline std::size_t window_floats(int width) { return static_cast<std::size_t>(width >> 2) + 16; }

// Mean SSIM over the 8x8 windows at stride 4 of a plane with at least 2x2 blocks of 4x4.
double plane_scalar(const unsigned char* a, const unsigned char* b, int width, int height,
                    int* sums, float* windows);
double plane_avx2(const unsigned char* a, const unsigned char* b, int width, int height, int* sums,
                  float* windows);
double plane_avx512(const unsigned char* a, const unsigned char* b, int width, int height,
                    int* sums, float* windows);

}  // namespace h3p::metrics::ssim_kernel
