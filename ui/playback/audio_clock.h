#pragma once
// The master clock of playback. With an audio output device it is the audio itself: one
// QAudioSink stream (push mode) runs on its own thread while the clock exists, carrying silence
// when stopped and the heard side's track while running, so that a busy UI thread never starves
// the device. position() maps the stream's processedUSecs (what the device has played) back to
// clip time, smoothed against the monotonic clock. Without a device the monotonic clock alone
// drives it. The facade lives on the UI thread.
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QThread>
#include <memory>
#include <mutex>
#include <vector>

class QAudioSink;
class QIODevice;
class QTimer;

namespace h3p::ui {

// What the UI thread and the audio thread share (under `mutex`).
struct AudioShared {
  std::mutex mutex;
  std::shared_ptr<const std::vector<float>> tracks[2];  // interleaved stereo float
  int rate = 0;
  int side = 0;
  bool running = false;
  qint64 written = 0;            // stereo frames written into the stream since it began
  qint64 contentStartFrame = 0;  // stream frame at which the current content began
  qint64 contentCursor = 0;      // next track frame to write
  double offsetUs = 0;           // smoothed (processedUSecs - monotonic us)
  bool offsetValid = false;
  QElapsedTimer monotonic;  // shared time base of both threads
};

// Runs on the audio thread: owns the sink and writes into it every few milliseconds.
class AudioFeeder : public QObject {
  Q_OBJECT

 public:
  // Feeder states:
  enum class State {
    Closed,   // no device open
    Playing,  // the stream runs (silence or content, as AudioShared::running says)
  };
  explicit AudioFeeder(AudioShared* shared);
  ~AudioFeeder() override;

 public slots:
  // Opens the default output for `rate` Hz float stereo; returns "" on success, else why not.
  QString open(int rate, qint64 bufferFrames);
  void close();

 private:
  void feed();
  AudioShared* m_shared;
  State m_state = State::Closed;
  std::unique_ptr<QAudioSink> m_sink;
  QIODevice* m_io = nullptr;  // owned by m_sink
  QTimer* m_timer = nullptr;
  std::vector<float> m_chunk;
};

class AudioClock : public QObject {
  Q_OBJECT

 public:
  explicit AudioClock(QObject* parent = nullptr);
  ~AudioClock() override;

  // Sets the two tracks (interleaved stereo float at sampleRate Hz; either may be empty) and
  // opens the default output device for that rate; stops the clock at 0.
  void setTracks(std::vector<float> a, std::vector<float> b, int sampleRate);
  // 0 = A (left source), 1 = B (right source): the track written from now on.
  void setHeardSide(int side);
  int heardSide() const { return m_side; }

  // Runs the clock from clip time `seconds`; audio of the heard side starts there.
  void start(double seconds);
  // Freezes the clock at its current position; the stream carries silence.
  void stop();
  bool running() const { return m_running; }
  // Clip time in seconds (monotonic while running; the start position until audio arrives).
  double position();
  // True when an audio device plays and drives position().
  bool audioMaster() const { return m_open; }
  // Closes the output device (the monotonic clock drives position() until setTracks()).
  void close();
  // The output device's description, or why there is none.
  QString deviceDescription() const { return m_deviceDescription; }
  // Seconds of audio queued ahead of what is heard (the stream buffer), 0 without a device.
  double bufferSeconds() const;

 signals:
  // The heard side changed.
  void heardSideChanged(int side);

 private:
  AudioShared m_shared;
  QThread m_thread;
  AudioFeeder* m_feeder;  // lives on m_thread; deleted after it is joined
  bool m_open = false;
  int m_side = 0;
  bool m_running = false;
  double m_startSeconds = 0;  // clip time at which the clock (re)started
  double m_stoppedAt = 0;     // clip time held while stopped
  double m_lastPosition = 0;
  qint64 m_fallbackStartNs = 0;  // monotonic time of start() without a device
  QString m_deviceDescription;
};

}  // namespace h3p::ui
