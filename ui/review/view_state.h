#pragma once
// What the review canvas shows besides the frames: mode, linked zoom and pan, wipe split,
// flicker phase, difference gain and which side is heard. Plain value; ReviewController owns
// the live copy, the canvas only paints it.
#include <QPointF>
#include <QString>

namespace h3p::ui {

enum class ReviewMode {
  SideBySide,  // A left, B right
  Wipe,        // A left of a draggable split, B right of it, one image area
  Flicker,     // A and B alternate in one area
  Difference,  // |A - B| x gain through a colour map
};

// "side by side", "wipe", "flicker", "difference".
QString reviewModeName(ReviewMode mode);

struct ViewState {
  ReviewMode mode = ReviewMode::SideBySide;
  double zoom = 1;             // 1 = fit the image to its area; both sides share it
  QPointF center{-1, -1};      // image point at the area centre; negative = image centre
  double wipe = 0.5;           // split position as a fraction of the image width
  bool flickerShowsB = false;  // the flicker mode's current side
  double gain = 4;             // difference gain
  int heardSide = 0;           // 0 = A, 1 = B
  QString labelA, labelB;      // side names
};

}  // namespace h3p::ui
