#include "ui/playback/playback_controller.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "ui/playback/audio_clock.h"
#include "ui/playback/frame_source.h"

namespace h3p::ui {

namespace {
constexpr int kTickMs = 4;  // how often the clock is read while playing
}

PlaybackController::PlaybackController(QObject* parent)
    : QObject(parent), m_clock(new AudioClock(this)) {
  m_timer.setTimerType(Qt::PreciseTimer);
  m_timer.setInterval(kTickMs);
  connect(&m_timer, &QTimer::timeout, this, &PlaybackController::tick);
  connect(m_clock, &AudioClock::heardSideChanged, this, &PlaybackController::heardSideChanged);
  m_wall.start();
}

PlaybackController::~PlaybackController() { shutdown(); }

void PlaybackController::shutdown() {
  pause();
  m_clock->close();
}

void PlaybackController::setSources(std::shared_ptr<const FrameSource> a,
                                    std::shared_ptr<const FrameSource> b) {
  pause();
  // The shown frame and the canvas still point into the old mappings: keep them until the
  // first new frame is presented below (setTracks may run the event loop).
  const auto oldA = m_a, oldB = m_b;
  m_prefetcher.reset();
  m_a = std::move(a);
  m_b = std::move(b);
  m_count = std::min(m_a->frameCount(), m_b->frameCount());
  m_fps = m_a->fps();
  const int rate = m_a->sampleRate() > 0 ? m_a->sampleRate() : m_b->sampleRate();
  std::vector<float> trackA = m_a->stereo();
  std::vector<float> trackB = m_b->sampleRate() > 0
                                  ? resampleStereo(m_b->stereo(), m_b->sampleRate(), rate)
                                  : std::vector<float>{};
  m_clock->setTracks(std::move(trackA), std::move(trackB), rate);
  m_prefetcher = std::make_unique<FramePrefetcher>(m_a, m_b);
  resetStats();
  seek(0);
}

void PlaybackController::resetStats() {
  m_stats = {};
  m_lastPainted = -1;
  m_firstClock = -1;
  m_firstWallNs = -1;
}

int PlaybackController::nextIndex(int index) const {
  if (index + 1 < m_count) return index + 1;
  return m_loop ? 0 : index;
}

void PlaybackController::present(int index) {
  std::optional<PreparedFrame> frame = m_prefetcher->take(index);
  if (!frame) {
    if (m_playing) ++m_stats.prefetchMisses;
    frame = prepareFrame(*m_a, *m_b, index, m_difference, m_gain);
    m_prefetcher->restart(nextIndex(index), m_loop, m_difference, m_gain);
  }
  m_current = std::move(*frame);
  emit frameReady();
  emit frameChanged(index);
}

void PlaybackController::presentGuarded(int index) {
  try {
    present(index);
  } catch (const std::exception& e) {
    pause();
    emit failed(QString::fromLocal8Bit(e.what()));
  }
}

void PlaybackController::seek(int frame) {
  if (!hasSources()) return;
  frame = std::clamp(frame, 0, m_count - 1);
  m_lastPainted = -1;
  if (m_playing) m_clock->start(frame / m_fps);
  presentGuarded(frame);
}

void PlaybackController::play() {
  if (!hasSources() || m_playing) return;
  if (m_current.index >= m_count - 1 && !m_loop) presentGuarded(0);
  m_playing = true;
  m_lastPainted = -1;
  m_clock->start(m_current.index / m_fps);
  m_timer.start();
  emit playingChanged(true);
}

void PlaybackController::pause() {
  if (!m_playing) return;
  m_playing = false;
  m_timer.stop();
  m_clock->stop();
  emit playingChanged(false);
}

void PlaybackController::togglePlay() { m_playing ? pause() : play(); }

void PlaybackController::step(int delta) {
  pause();
  if (!hasSources()) return;
  int target = m_current.index + delta;
  if (m_loop) target = ((target % m_count) + m_count) % m_count;
  seek(target);
}

void PlaybackController::setLoop(bool loop) {
  if (loop == m_loop) return;
  m_loop = loop;
  if (hasSources()) m_prefetcher->restart(nextIndex(m_current.index), m_loop, m_difference, m_gain);
  emit loopChanged(loop);
}

void PlaybackController::setHeardSide(int side) { m_clock->setHeardSide(side); }

void PlaybackController::toggleHeardSide() { m_clock->setHeardSide(1 - m_clock->heardSide()); }

void PlaybackController::setDifference(bool on, double gain) {
  if (on == m_difference && gain == m_gain) return;
  m_difference = on;
  m_gain = gain;
  if (!hasSources()) return;
  m_prefetcher->restart(nextIndex(m_current.index), m_loop, m_difference, m_gain);
  if (m_difference) {
    try {
      m_current = prepareFrame(*m_a, *m_b, m_current.index, true, m_gain);
    } catch (const std::exception& e) {
      emit failed(QString::fromLocal8Bit(e.what()));
    }
  } else {
    m_current.difference = QImage();
  }
  emit frameReady();
}

void PlaybackController::tick() {
  if (!m_playing) return;
  const double t = m_clock->position();
  int target = static_cast<int>(std::floor(t * m_fps + 1e-9));
  if (target >= m_count) {
    if (m_loop) {
      m_lastPainted = -1;
      m_clock->start(0);
      presentGuarded(0);
    } else {
      if (m_current.index != m_count - 1) presentGuarded(m_count - 1);
      pause();
    }
    return;
  }
  if (target != m_current.index) presentGuarded(target);
}

void PlaybackController::notePainted(int frame) {
  if (!m_playing || frame < 0 || frame == m_lastPainted) return;
  const double t = m_clock->position();
  const qint64 wall = m_wall.nsecsElapsed();
  const double lagMs = (t - frame / m_fps) * 1000.0;
  if (m_stats.painted == 0) {
    m_stats.minLagMs = m_stats.maxLagMs = lagMs;
  } else {
    m_stats.minLagMs = std::min(m_stats.minLagMs, lagMs);
    m_stats.maxLagMs = std::max(m_stats.maxLagMs, lagMs);
  }
  ++m_stats.painted;
  if (m_lastPainted >= 0 && frame > m_lastPainted + 1) m_stats.dropped += frame - m_lastPainted - 1;
  m_lastPainted = frame;
  if (m_firstClock < 0) {
    m_firstClock = t;
    m_firstWallNs = wall;
  }
  m_lastClock = t;
  m_lastWallNs = wall;
  m_stats.clockSeconds = m_lastClock - m_firstClock;
  m_stats.wallSeconds = (m_lastWallNs - m_firstWallNs) / 1e9;
}

}  // namespace h3p::ui
