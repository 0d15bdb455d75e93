#pragma once

#include <QColor>

namespace h3p::ui {

// The colour of series `index` in every plot (candidate first, then provider variants), so a
// run keeps its colour across the frame and step plots.
QColor seriesColor(int index);

}  // namespace h3p::ui
