#include "ui/playback/audio_clock.h"

#include <QAudioDevice>
#include <QAudioFormat>
#include <QAudioSink>
#include <QMediaDevices>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace h3p::ui {

namespace {
constexpr double kBufferSeconds = 0.08;  // queued ahead of the device: bounds the A/B switch delay
constexpr int kFeedIntervalMs = 10;
constexpr double kSmoothing = 0.05;            // weight of a new processedUSecs reading
constexpr double kResyncUs = 40000;            // a reading this far off restarts the smoothing
constexpr int kBytesPerFrame = 2 * sizeof(float);
}  // namespace

AudioClock::AudioClock(QObject* parent) : QObject(parent) {
  m_monotonic.start();
  m_feedTimer = new QTimer(this);
  m_feedTimer->setTimerType(Qt::PreciseTimer);
  m_feedTimer->setInterval(kFeedIntervalMs);
  connect(m_feedTimer, &QTimer::timeout, this, &AudioClock::feed);
  m_deviceDescription = tr("no audio");
}

AudioClock::~AudioClock() { closeDevice(); }

void AudioClock::close() {
  stop();
  closeDevice();
  m_deviceDescription = tr("closed");
}

void AudioClock::setTracks(std::vector<float> a, std::vector<float> b, int sampleRate) {
  closeDevice();
  m_tracks[0] = std::move(a);
  m_tracks[1] = std::move(b);
  m_rate = sampleRate;
  m_running = false;
  m_stoppedAt = 0;
  m_lastPosition = 0;
  if (m_rate > 0 && (!m_tracks[0].empty() || !m_tracks[1].empty())) openDevice();
}

void AudioClock::openDevice() {
  const QAudioDevice device = QMediaDevices::defaultAudioOutput();
  if (device.isNull()) {
    m_deviceDescription = tr("no audio output device");
    return;
  }
  QAudioFormat format;
  format.setSampleRate(m_rate);
  format.setChannelCount(2);
  format.setSampleFormat(QAudioFormat::Float);
  if (!device.isFormatSupported(format)) {
    m_deviceDescription = tr("%1 does not play %2 Hz float stereo").arg(device.description()).arg(m_rate);
    return;
  }
  m_sink = std::make_unique<QAudioSink>(device, format);
  // Qt 6.4 shrinks the buffer on every restart unless it is set before start().
  m_sink->setBufferSize(static_cast<qsizetype>(std::lround(m_rate * kBufferSeconds)) * kBytesPerFrame);
  m_io = m_sink->start();
  if (m_io == nullptr || m_sink->error() != QAudio::NoError) {
    m_deviceDescription = tr("%1 did not start").arg(device.description());
    closeDevice();
    return;
  }
  m_deviceDescription = device.description();
  m_written = 0;
  m_contentStartFrame = 0;
  m_offsetValid = false;
  feed();
  m_feedTimer->start();
}

void AudioClock::closeDevice() {
  m_feedTimer->stop();
  if (m_sink) {
    m_sink->stop();
    m_sink.reset();
  }
  m_io = nullptr;
}

void AudioClock::setHeardSide(int side) {
  side = side == 0 ? 0 : 1;
  if (side == m_side) return;
  m_side = side;
  emit heardSideChanged(m_side);
}

void AudioClock::feed() {
  if (m_io == nullptr) return;
  const qsizetype freeBytes = m_sink->bytesFree();
  const qint64 frames = freeBytes / kBytesPerFrame;
  if (frames <= 0) return;
  std::vector<float> chunk(static_cast<std::size_t>(frames) * 2, 0.0f);
  if (m_running) {
    const std::vector<float>& track = m_tracks[m_side];
    const qint64 trackFrames = static_cast<qint64>(track.size() / 2);
    const qint64 n = std::clamp<qint64>(trackFrames - m_contentCursor, 0, frames);
    if (n > 0) std::memcpy(chunk.data(), track.data() + 2 * m_contentCursor, n * kBytesPerFrame);
    m_contentCursor += frames;
  }
  const qint64 wrote = m_io->write(reinterpret_cast<const char*>(chunk.data()), frames * kBytesPerFrame);
  if (wrote > 0) m_written += wrote / kBytesPerFrame;
}

double AudioClock::streamSeconds() {
  const double wallUs = m_monotonic.nsecsElapsed() / 1000.0;
  const double measured = static_cast<double>(m_sink->processedUSecs()) - wallUs;
  if (!m_offsetValid || std::abs(measured - m_offsetUs) > kResyncUs) {
    m_offsetUs = measured;
    m_offsetValid = true;
  } else {
    m_offsetUs += kSmoothing * (measured - m_offsetUs);
  }
  return (wallUs + m_offsetUs) / 1e6;
}

void AudioClock::start(double seconds) {
  seconds = std::max(0.0, seconds);
  m_startSeconds = seconds;
  m_lastPosition = seconds;
  m_running = true;
  if (m_io != nullptr) {
    // Content begins after what is already queued; the clock holds until the device gets there.
    m_contentStartFrame = m_written;
    m_contentCursor = static_cast<qint64>(std::llround(seconds * m_rate));
    feed();
  } else {
    m_monotonic.restart();
    m_offsetValid = false;
  }
}

void AudioClock::stop() {
  if (!m_running) return;
  m_stoppedAt = position();
  m_running = false;
}

double AudioClock::position() {
  if (!m_running) return m_stoppedAt;
  double pos;
  if (m_io != nullptr) {
    const double content = streamSeconds() - static_cast<double>(m_contentStartFrame) / m_rate;
    pos = m_startSeconds + std::max(0.0, content);
  } else {
    pos = m_startSeconds + m_monotonic.nsecsElapsed() / 1e9;
  }
  m_lastPosition = std::max(m_lastPosition, pos);
  return m_lastPosition;
}

double AudioClock::bufferSeconds() const {
  if (!m_sink || m_rate <= 0) return 0;
  return static_cast<double>(m_sink->bufferSize()) / kBytesPerFrame / m_rate;
}

}  // namespace h3p::ui
