#include "ui/plots/plot_palette.h"

#include <array>

namespace h3p::ui {

QColor seriesColor(int index) {
  // Colour-blind-safe qualitative palette (Okabe-Ito order, black left out).
  static const std::array<QColor, 7> colors = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00),
                                               QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7),
                                               QColor(0x56, 0xb4, 0xe9), QColor(0xd5, 0x5e, 0x00),
                                               QColor(0xf0, 0xe4, 0x42)};
  return colors[static_cast<std::size_t>(index < 0 ? 0 : index) % colors.size()];
}

}  // namespace h3p::ui
