#include "ui/review/review_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "core/common/error.h"
#include "ui/playback/audio_clock.h"
#include "ui/playback/frame_difference.h"
#include "ui/playback/frame_source.h"
#include "ui/playback/playback_controller.h"
#include "ui/review/audio_analysis.h"
#include "ui/review/audio_lane.h"
#include "ui/review/help_overlay.h"
#include "ui/review/review_canvas.h"
#include "ui/review/review_controller.h"
#include "ui/review/review_pair.h"

namespace h3p::ui {

namespace {

QString sideText(const QImage& image, QPoint p) {
  const QRgb c = image.pixel(p);
  return QStringLiteral("%1 %2 %3").arg(qRed(c), 3).arg(qGreen(c), 3).arg(qBlue(c), 3);
}

}  // namespace

ReviewView::ReviewView(QWidget* parent)
    : QWidget(parent),
      m_controller(new ReviewController(this)),
      m_canvas(new ReviewCanvas(this)),
      m_lane(new AudioLane(this)),
      m_help(new HelpOverlay(this)) {
  setObjectName(QStringLiteral("reviewView"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(m_canvas, 1);
  layout->addWidget(m_lane);
  layout->addWidget(createControls());

  PlaybackController* playback = m_controller->playback();
  connect(playback, &PlaybackController::frameReady, this, &ReviewView::onFrameReady);
  connect(playback, &PlaybackController::frameChanged, this, &ReviewView::frameChanged);
  connect(playback, &PlaybackController::playingChanged, this,
          [this](bool playing) { m_playButton->setText(playing ? tr("Pause") : tr("Play")); });
  connect(playback, &PlaybackController::loopChanged, m_loop, &QCheckBox::setChecked);
  connect(playback, &PlaybackController::failed, this, [this](const QString& message) {
    m_frameLabel->setText(tr("error: %1").arg(message));
    m_frameLabel->setToolTip(message);
  });
  connect(m_controller, &ReviewController::stateChanged, this, &ReviewView::onStateChanged);
  connect(m_canvas, &ReviewCanvas::zoomRequested, m_controller, &ReviewController::zoomBy);
  connect(m_canvas, &ReviewCanvas::panRequested, m_controller, &ReviewController::panBy);
  connect(m_canvas, &ReviewCanvas::zoomResetRequested, m_controller, &ReviewController::resetZoom);
  connect(m_canvas, &ReviewCanvas::wipeRequested, m_controller, &ReviewController::setWipe);
  connect(m_canvas, &ReviewCanvas::hovered, this, &ReviewView::showReadout);
  connect(m_canvas, &ReviewCanvas::painted, playback, &PlaybackController::notePainted);
  connect(m_lane, &AudioLane::seekRequested, this, [this](double seconds) {
    const PlaybackController* p = m_controller->playback();
    if (p->fps() > 0) seek(static_cast<int>(std::floor(seconds * p->fps())));
  });

  m_help->setShortcuts({
      {QStringLiteral("Space"), tr("play / pause")},
      {QStringLiteral("Left / Right"), tr("previous / next frame")},
      {QStringLiteral("Shift+Left / Shift+Right"), tr("back / forward one second")},
      {QStringLiteral("Home / End"), tr("first / last frame")},
      {QStringLiteral("L"), tr("loop on / off")},
      {QStringLiteral("A"), tr("switch the heard audio between A and B")},
      {QStringLiteral("1 2 3 4"), tr("side by side, wipe, flicker, difference")},
      {QStringLiteral("F"), tr("flip the flicker side now")},
      {QStringLiteral("G / Shift+G"), tr("difference gain x2 / /2")},
      {QStringLiteral("+ / - / 0"), tr("zoom in / out / fit (wheel zooms, drag pans)")},
      {QStringLiteral("Shift+drag"), tr("pan in the wipe mode (a plain drag moves the split)")},
      {QStringLiteral("? / F1"), tr("this help")},
  });
  createShortcuts();
  onStateChanged(m_controller->state());
  updateFrameLabel();
}

ReviewView::~ReviewView() {
  // Close the audio sink while every widget is still whole: closing runs the event loop.
  m_controller->playback()->shutdown();
}

QWidget* ReviewView::createControls() {
  auto* bar = new QWidget(this);
  auto* rows = new QVBoxLayout(bar);
  rows->setContentsMargins(6, 2, 6, 4);
  auto* top = new QHBoxLayout;
  auto* bottom = new QHBoxLayout;
  rows->addLayout(top);
  rows->addLayout(bottom);
  PlaybackController* playback = m_controller->playback();

  auto* back = new QToolButton(bar);
  back->setText(QStringLiteral("\u25C0|"));
  back->setToolTip(tr("Previous frame (Left)"));
  connect(back, &QToolButton::clicked, playback, [playback] { playback->step(-1); });
  m_playButton = new QToolButton(bar);
  m_playButton->setObjectName(QStringLiteral("playButton"));
  m_playButton->setText(tr("Play"));
  m_playButton->setToolTip(tr("Play / pause (Space)"));
  connect(m_playButton, &QToolButton::clicked, playback, &PlaybackController::togglePlay);
  auto* forward = new QToolButton(bar);
  forward->setText(QStringLiteral("|\u25B6"));
  forward->setToolTip(tr("Next frame (Right)"));
  connect(forward, &QToolButton::clicked, playback, [playback] { playback->step(1); });
  m_slider = new QSlider(Qt::Horizontal, bar);
  m_slider->setObjectName(QStringLiteral("frameSlider"));
  m_slider->setRange(0, 0);
  connect(m_slider, &QSlider::valueChanged, this, [this](int value) {
    if (value != currentFrame()) seek(value);
  });
  m_frameLabel = new QLabel(bar);
  m_frameLabel->setObjectName(QStringLiteral("frameLabel"));
  m_frameLabel->setMinimumWidth(180);
  top->addWidget(back);
  top->addWidget(m_playButton);
  top->addWidget(forward);
  top->addWidget(m_slider, 1);
  top->addWidget(m_frameLabel);

  m_mode = new QComboBox(bar);
  m_mode->setObjectName(QStringLiteral("modeCombo"));
  for (ReviewMode mode :
       {ReviewMode::SideBySide, ReviewMode::Wipe, ReviewMode::Flicker, ReviewMode::Difference}) {
    m_mode->addItem(reviewModeName(mode), static_cast<int>(mode));
  }
  connect(m_mode, &QComboBox::currentIndexChanged, this, [this](int index) {
    m_controller->setMode(static_cast<ReviewMode>(m_mode->itemData(index).toInt()));
  });
  m_gain = new QDoubleSpinBox(bar);
  m_gain->setObjectName(QStringLiteral("gainSpin"));
  m_gain->setPrefix(tr("gain x"));
  m_gain->setRange(1, 256);
  m_gain->setDecimals(0);
  m_gain->setValue(m_controller->state().gain);
  connect(m_gain, &QDoubleSpinBox::valueChanged, m_controller, &ReviewController::setGain);
  m_loop = new QCheckBox(tr("Loop"), bar);
  m_loop->setObjectName(QStringLiteral("loopCheck"));
  connect(m_loop, &QCheckBox::toggled, playback, &PlaybackController::setLoop);
  m_audioButton = new QToolButton(bar);
  m_audioButton->setObjectName(QStringLiteral("audioButton"));
  m_audioButton->setText(tr("A/B audio"));
  m_audioButton->setToolTip(tr("Switch the heard side (A)"));
  connect(m_audioButton, &QToolButton::clicked, playback, &PlaybackController::toggleHeardSide);
  m_heardLabel = new QLabel(bar);
  m_heardLabel->setObjectName(QStringLiteral("heardLabel"));
  m_readout = new QLabel(bar);
  m_readout->setObjectName(QStringLiteral("readoutLabel"));
  m_readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont mono(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::Monospace);
  m_readout->setFont(mono);
  auto* help = new QToolButton(bar);
  help->setText(QStringLiteral("?"));
  help->setToolTip(tr("Keyboard shortcuts (?)"));
  connect(help, &QToolButton::clicked, this, &ReviewView::toggleHelp);
  bottom->addWidget(m_mode);
  bottom->addWidget(m_gain);
  bottom->addWidget(m_loop);
  bottom->addWidget(m_audioButton);
  bottom->addWidget(m_heardLabel);
  bottom->addWidget(m_readout, 1);
  bottom->addWidget(help);
  return bar;
}

void ReviewView::createShortcuts() {
  PlaybackController* playback = m_controller->playback();
  const auto add = [this](const QKeySequence& keys, auto slot) {
    auto* shortcut = new QShortcut(keys, this);
    shortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(shortcut, &QShortcut::activated, this, slot);
  };
  add(QKeySequence(Qt::Key_Space), [playback] { playback->togglePlay(); });
  add(QKeySequence(Qt::Key_Left), [playback] { playback->step(-1); });
  add(QKeySequence(Qt::Key_Right), [playback] { playback->step(1); });
  add(QKeySequence(Qt::SHIFT | Qt::Key_Left),
      [playback] { playback->step(-static_cast<int>(std::lround(playback->fps()))); });
  add(QKeySequence(Qt::SHIFT | Qt::Key_Right),
      [playback] { playback->step(static_cast<int>(std::lround(playback->fps()))); });
  add(QKeySequence(Qt::Key_Home), [this] { seek(0); });
  add(QKeySequence(Qt::Key_End), [this] { seek(frameCount() - 1); });
  add(QKeySequence(Qt::Key_L), [playback] { playback->setLoop(!playback->loop()); });
  add(QKeySequence(Qt::Key_A), [playback] { playback->toggleHeardSide(); });
  for (int i = 0; i < 4; ++i) {
    add(QKeySequence(Qt::Key_1 + i), [this, i] { m_mode->setCurrentIndex(i); });
  }
  add(QKeySequence(Qt::Key_F), [this] { m_controller->toggleFlicker(); });
  add(QKeySequence(Qt::Key_G), [this] { m_gain->setValue(m_gain->value() * 2); });
  add(QKeySequence(Qt::SHIFT | Qt::Key_G), [this] { m_gain->setValue(m_gain->value() / 2); });
  const auto centre = [this] {
    const QImage& image = m_controller->playback()->current().a;
    const ViewState& s = m_controller->state();
    return s.center.x() >= 0 ? s.center : QPointF(image.width() / 2.0, image.height() / 2.0);
  };
  add(QKeySequence(Qt::Key_Plus), [this, centre] { m_controller->zoomBy(1.25, centre()); });
  add(QKeySequence(Qt::Key_Equal), [this, centre] { m_controller->zoomBy(1.25, centre()); });
  add(QKeySequence(Qt::Key_Minus), [this, centre] { m_controller->zoomBy(0.8, centre()); });
  add(QKeySequence(Qt::Key_0), [this] { m_controller->resetZoom(); });
  add(QKeySequence(Qt::Key_Question), [this] { toggleHelp(); });
  add(QKeySequence(Qt::SHIFT | Qt::Key_Question), [this] { toggleHelp(); });
  add(QKeySequence(Qt::Key_F1), [this] { toggleHelp(); });
  add(QKeySequence(Qt::Key_Escape), [this] { m_help->hide(); });
}

void ReviewView::openPair(const QString& left, const QString& right) {
  // Runs first: a video file is decoded with its audio at the run's sample rate.
  const bool leftIsFile = QFileInfo(left).isFile();
  const bool rightIsFile = QFileInfo(right).isFile();
  std::shared_ptr<const FrameSource> a, b;
  if (leftIsFile && !rightIsFile) {
    b = FrameSource::open(right);
    a = FrameSource::open(left, b->sampleRate());
  } else {
    a = FrameSource::open(left);
    b = FrameSource::open(right, a->sampleRate());
  }
  if (a->width() != b->width() || a->height() != b->height()) {
    throw InputError(right.toLocal8Bit().toStdString() + ": frames are " +
                     std::to_string(b->width()) + "x" + std::to_string(b->height()) + ", " +
                     left.toLocal8Bit().toStdString() + " has " + std::to_string(a->width()) + "x" +
                     std::to_string(a->height()));
  }
  PlaybackController* playback = m_controller->playback();
  playback->setSources(a, b);
  m_controller->setLabels(a->label(), b->label());

  const int rate = a->sampleRate() > 0 ? a->sampleRate() : b->sampleRate();
  std::vector<float> monoA = monoMix(a->stereo());
  std::vector<float> monoB = b->sampleRate() > 0
                                 ? monoMix(resampleStereo(b->stereo(), b->sampleRate(), rate))
                                 : std::vector<float>{};
  const QImage spectrogram = differenceSpectrogram(monoA, monoB);
  m_lane->setTracks(std::move(monoA), std::move(monoB), rate, spectrogram,
                    playback->frameCount() / playback->fps());
  {
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, std::max(0, playback->frameCount() - 1));
    m_slider->setValue(playback->currentFrame());
  }
  m_heardLabel->setToolTip(playback->clock()->audioMaster()
                               ? tr("Audio: %1").arg(playback->clock()->deviceDescription())
                               : tr("No audio output (%1): the monotonic clock drives playback")
                                     .arg(playback->clock()->deviceDescription()));
  onStateChanged(m_controller->state());
  updateFrameLabel();
}

void ReviewView::openRun(const QString& runDir) {
  const auto pair = pairOfRun(runDir);
  openPair(pair.first, pair.second);
}

int ReviewView::frameCount() const { return m_controller->playback()->frameCount(); }

int ReviewView::currentFrame() const { return m_controller->playback()->currentFrame(); }

void ReviewView::seek(int frame) { m_controller->playback()->seek(frame); }

void ReviewView::play() { m_controller->playback()->play(); }

void ReviewView::pause() { m_controller->playback()->pause(); }

void ReviewView::toggleHelp() {
  m_help->setGeometry(rect());
  m_help->setVisible(!m_help->isVisible());
  if (m_help->isVisible()) m_help->raise();
}

void ReviewView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  m_help->setGeometry(rect());
}

void ReviewView::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  pause();
}

void ReviewView::onFrameReady() {
  const PlaybackController* playback = m_controller->playback();
  const PreparedFrame& frame = playback->current();
  m_canvas->setFrames(frame.index, frame.a, frame.b, frame.difference);
  if (playback->fps() > 0) m_lane->setPlayhead(frame.index / playback->fps());
  if (m_slider->value() != frame.index) {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(frame.index);
  }
  updateFrameLabel();
  updateReadout();
}

void ReviewView::onStateChanged(const ViewState& state) {
  m_canvas->setViewState(state);
  m_lane->setHeardSide(state.heardSide);
  const QString name = state.heardSide == 0 ? state.labelA : state.labelB;
  m_heardLabel->setText(
      tr("\u266A heard: <b>%1</b> %2").arg(state.heardSide == 0 ? "A" : "B", name.toHtmlEscaped()));
  const int index = m_mode->findData(static_cast<int>(state.mode));
  if (index != m_mode->currentIndex()) {
    const QSignalBlocker block(m_mode);
    m_mode->setCurrentIndex(index);
  }
  updateReadout();
}

void ReviewView::showReadout(QPointF point) {
  m_hover = point;
  updateReadout();
}

void ReviewView::updateReadout() {
  const PreparedFrame& frame = m_controller->playback()->current();
  const QPoint p(static_cast<int>(std::floor(m_hover.x())),
                 static_cast<int>(std::floor(m_hover.y())));
  if (frame.a.isNull() || m_hover.x() < 0 || !frame.a.rect().contains(p)) {
    m_readout->clear();
    return;
  }
  const QRgb ca = frame.a.pixel(p), cb = frame.b.pixel(p);
  m_readout->setText(tr("x %1 y %2 | A %3 | B %4 | max|A-B| %5")
                         .arg(p.x())
                         .arg(p.y())
                         .arg(sideText(frame.a, p), sideText(frame.b, p))
                         .arg(differenceMagnitude(ca, cb, 1.0)));
}

QString ReviewView::readoutText() const { return m_readout->text(); }

void ReviewView::updateFrameLabel() {
  const PlaybackController* playback = m_controller->playback();
  if (!playback->hasSources()) {
    m_frameLabel->setText(tr("no pair open"));
    return;
  }
  m_frameLabel->setText(tr("frame %1 / %2  %3 s")
                            .arg(playback->currentFrame())
                            .arg(playback->frameCount())
                            .arg(playback->currentFrame() / playback->fps(), 0, 'f', 3));
}

}  // namespace h3p::ui
