#pragma once
// The review: two sources of one seed (two runs, or a run and a video file) played in sync,
// frame-accurate, with audio (the heard side switchable and marked), in four modes (side by
// side, wipe, flicker, difference), with linked zoom and pan, a pixel readout of both sides,
// an audio lane and a shortcut help overlay. Composes dumb widgets around ReviewController.
#include <QPointF>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QToolButton;

namespace h3p::ui {

class AudioLane;
class HelpOverlay;
class ReviewCanvas;
class ReviewController;
struct ViewState;

class ReviewView : public QWidget {  // two sources of one seed, played in sync with audio
  Q_OBJECT

 public:
  explicit ReviewView(QWidget* parent = nullptr);
  ~ReviewView() override;

  // Opens left (A) and right (B): run directories (their decoded/), decoded directories or video
  // files; pauses at frame 0. Throws h3p::InputError naming the path and what is wrong (nothing
  // decoded, sizes that differ); the previous pair stays open then.
  void openPair(const QString& left, const QString& right);
  // Opens the pair `runDir` belongs in (pairOfRun(): the run against the provider's same seed,
  // or the candidate's when `runDir` is the provider's). Throws like openPair().
  void openRun(const QString& runDir);
  // Frames of the pair (the shorter side's count); 0 before a pair is open.
  int frameCount() const;
  // The frame shown.
  int currentFrame() const;

  ReviewController* controller() const { return m_controller; }
  ReviewCanvas* canvas() const { return m_canvas; }
  AudioLane* audioLane() const { return m_lane; }
  HelpOverlay* helpOverlay() const { return m_help; }
  // The pixel readout line as shown ("" while the pointer is off the image).
  QString readoutText() const;
  // Shows the readout of image point `point` of the current frame (what hovering does).
  void showReadout(QPointF point);

 public slots:
  void seek(int frame);
  void play();
  void pause();
  // Shows or hides the shortcut overlay.
  void toggleHelp();

 signals:
  // The shown frame changed.
  void frameChanged(int frame);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  // A hidden review (another tab) stops playing.
  void hideEvent(QHideEvent* event) override;

 private:
  QWidget* createControls();
  void createShortcuts();
  void onFrameReady();
  void onStateChanged(const ViewState& state);
  void updateReadout();
  void updateFrameLabel();

  ReviewController* m_controller;
  ReviewCanvas* m_canvas;
  AudioLane* m_lane;
  HelpOverlay* m_help;
  QToolButton* m_playButton = nullptr;
  QSlider* m_slider = nullptr;
  QLabel* m_frameLabel = nullptr;
  QComboBox* m_mode = nullptr;
  QDoubleSpinBox* m_gain = nullptr;
  QCheckBox* m_loop = nullptr;
  QToolButton* m_audioButton = nullptr;
  QLabel* m_heardLabel = nullptr;
  QLabel* m_readout = nullptr;
  QPointF m_hover{-1, -1};
};

}  // namespace h3p::ui
