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
// Queued ahead of the device: rides out UI-thread and scheduling stalls up to this long, and
// bounds how late an A/B switch or a seek during playback is heard.
constexpr double kBufferSeconds = 0.15;
constexpr int kFeedIntervalMs = 10;
constexpr double kSmoothing = 0.05;  // weight of a new processedUSecs reading
constexpr double kResyncUs = 40000;  // a reading this far off restarts the smoothing
constexpr int kBytesPerFrame = 2 * sizeof(float);
}  // namespace

AudioFeeder::AudioFeeder(AudioShared* shared) : m_shared(shared) {}

AudioFeeder::~AudioFeeder() { close(); }

QString AudioFeeder::open(int rate, qint64 bufferFrames) {
  close();
  const QAudioDevice device = QMediaDevices::defaultAudioOutput();
  if (device.isNull()) return tr("no audio output device");
  QAudioFormat format;
  format.setSampleRate(rate);
  format.setChannelCount(2);
  format.setSampleFormat(QAudioFormat::Float);
  if (!device.isFormatSupported(format)) {
    return tr("%1 does not play %2 Hz float stereo").arg(device.description()).arg(rate);
  }
  m_sink = std::make_unique<QAudioSink>(device, format);
  // Qt 6.4 shrinks the buffer on every restart unless it is set before start().
  m_sink->setBufferSize(static_cast<qsizetype>(bufferFrames * kBytesPerFrame));
  m_io = m_sink->start();
  if (m_io == nullptr || m_sink->error() != QAudio::NoError) {
    close();
    return tr("%1 did not start").arg(device.description());
  }
  {
    std::lock_guard lock(m_shared->mutex);
    m_shared->written = 0;
    m_shared->contentStartFrame = 0;
    m_shared->offsetValid = false;
  }
  if (m_timer == nullptr) {
    m_timer = new QTimer(this);
    m_timer->setTimerType(Qt::PreciseTimer);
    m_timer->setInterval(kFeedIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &AudioFeeder::feed);
  }
  m_state = State::Playing;
  feed();
  m_timer->start();
  return {};
}

void AudioFeeder::close() {
  if (m_timer != nullptr) m_timer->stop();
  if (m_sink) {
    m_sink->stop();
    m_sink.reset();  // Qt 6.4 runs this thread's event loop here: harmless on the audio thread
  }
  m_io = nullptr;
  m_state = State::Closed;
}

void AudioFeeder::feed() {
  if (m_state != State::Playing) return;
  const qint64 frames = m_sink->bytesFree() / kBytesPerFrame;
  // Step 1: the clock reading, smoothed against the shared monotonic time base.
  const double processed = static_cast<double>(m_sink->processedUSecs());
  std::unique_lock lock(m_shared->mutex);
  const double wallUs = m_shared->monotonic.nsecsElapsed() / 1000.0;
  const double measured = processed - wallUs;
  if (!m_shared->offsetValid || std::abs(measured - m_shared->offsetUs) > kResyncUs) {
    m_shared->offsetUs = measured;
    m_shared->offsetValid = true;
  } else {
    m_shared->offsetUs += kSmoothing * (measured - m_shared->offsetUs);
  }
  if (frames <= 0) return;
  // Step 2: the next chunk, content or silence.
  m_chunk.assign(static_cast<std::size_t>(frames) * 2, 0.0f);
  if (m_shared->running) {
    const auto& track = m_shared->tracks[m_shared->side];
    const qint64 trackFrames = track ? static_cast<qint64>(track->size() / 2) : 0;
    const qint64 n = std::clamp<qint64>(trackFrames - m_shared->contentCursor, 0, frames);
    if (n > 0)
      std::memcpy(m_chunk.data(), track->data() + 2 * m_shared->contentCursor, n * kBytesPerFrame);
    m_shared->contentCursor += frames;
  }
  m_shared->written += frames;  // counted before the write: start() maps stream frames by it
  lock.unlock();
  // Step 3: the write; bytesFree() promised room for all of it.
  m_io->write(reinterpret_cast<const char*>(m_chunk.data()), frames * kBytesPerFrame);
}

AudioClock::AudioClock(QObject* parent) : QObject(parent), m_feeder(new AudioFeeder(&m_shared)) {
  m_shared.monotonic.start();
  m_thread.setObjectName(QStringLiteral("h3p-audio"));
  m_feeder->moveToThread(&m_thread);
  m_thread.start(QThread::TimeCriticalPriority);
  m_deviceDescription = tr("no audio");
}

AudioClock::~AudioClock() {
  close();
  m_thread.quit();
  m_thread.wait();
  delete m_feeder;
}

void AudioClock::setTracks(std::vector<float> a, std::vector<float> b, int sampleRate) {
  close();
  {
    std::lock_guard lock(m_shared.mutex);
    m_shared.tracks[0] = std::make_shared<const std::vector<float>>(std::move(a));
    m_shared.tracks[1] = std::make_shared<const std::vector<float>>(std::move(b));
    m_shared.rate = sampleRate;
    m_shared.running = false;
  }
  m_running = false;
  m_stoppedAt = 0;
  m_lastPosition = 0;
  const bool anyAudio = !m_shared.tracks[0]->empty() || !m_shared.tracks[1]->empty();
  if (sampleRate <= 0 || !anyAudio) {
    m_deviceDescription = tr("no audio in either source");
    return;
  }
  QString why;
  const qint64 bufferFrames = std::lround(sampleRate * kBufferSeconds);
  QMetaObject::invokeMethod(
      m_feeder, [&] { why = m_feeder->open(sampleRate, bufferFrames); },
      Qt::BlockingQueuedConnection);
  m_open = why.isEmpty();
  m_deviceDescription = m_open ? QMediaDevices::defaultAudioOutput().description() : why;
}

void AudioClock::close() {
  stop();
  if (m_open) {
    QMetaObject::invokeMethod(
        m_feeder, [this] { m_feeder->close(); }, Qt::BlockingQueuedConnection);
    m_open = false;
    m_deviceDescription = tr("closed");
  }
}

void AudioClock::setHeardSide(int side) {
  side = side == 0 ? 0 : 1;
  if (side == m_side) return;
  m_side = side;
  {
    std::lock_guard lock(m_shared.mutex);
    m_shared.side = side;
  }
  emit heardSideChanged(m_side);
}

void AudioClock::start(double seconds) {
  seconds = std::max(0.0, seconds);
  m_startSeconds = seconds;
  m_lastPosition = seconds;
  m_running = true;
  std::lock_guard lock(m_shared.mutex);
  // Content begins after what is already queued; the clock holds until the device gets there.
  m_shared.running = true;
  m_shared.contentStartFrame = m_shared.written;
  m_shared.contentCursor = static_cast<qint64>(std::llround(seconds * m_shared.rate));
  m_fallbackStartNs = m_shared.monotonic.nsecsElapsed();
}

void AudioClock::stop() {
  if (!m_running) return;
  m_stoppedAt = position();
  m_running = false;
  std::lock_guard lock(m_shared.mutex);
  m_shared.running = false;
}

double AudioClock::position() {
  if (!m_running) return m_stoppedAt;
  double pos = m_startSeconds;
  {
    std::lock_guard lock(m_shared.mutex);
    const qint64 nowNs = m_shared.monotonic.nsecsElapsed();
    if (m_open) {
      if (m_shared.offsetValid) {
        const double streamSeconds = (nowNs / 1000.0 + m_shared.offsetUs) / 1e6;
        const double content =
            streamSeconds - static_cast<double>(m_shared.contentStartFrame) / m_shared.rate;
        pos += std::max(0.0, content);
      }
    } else {
      pos += (nowNs - m_fallbackStartNs) / 1e9;
    }
  }
  m_lastPosition = std::max(m_lastPosition, pos);
  return m_lastPosition;
}

double AudioClock::bufferSeconds() const { return m_open ? kBufferSeconds : 0; }

}  // namespace h3p::ui
