#pragma once
// The master clock of playback. With an audio output device it is the audio itself: one
// QAudioSink stream (push mode) runs while the clock exists, carrying silence when stopped and
// the heard side's track while running; position() is the stream's processedUSecs (what the
// device has played) mapped back to clip time and smoothed against the monotonic clock. Without
// a device it falls back to the monotonic clock alone. Lives on the UI thread.
#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

class QAudioSink;
class QIODevice;
class QTimer;

namespace h3p::ui {

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
  bool audioMaster() const { return m_io != nullptr; }
  // Closes the output device (the clock falls back to the monotonic clock until setTracks()).
  // Qt 6.4 runs the event loop while a sink closes: owners call this while still intact.
  void close();
  // The output device's description, or why there is none.
  QString deviceDescription() const { return m_deviceDescription; }
  // Seconds of audio queued ahead of what is heard (the stream buffer), 0 without a device.
  double bufferSeconds() const;

 signals:
  // The heard side changed.
  void heardSideChanged(int side);

 private:
  void openDevice();
  void closeDevice();
  void feed();
  double streamSeconds();  // smoothed seconds the device has played since the stream began

  std::vector<float> m_tracks[2];
  int m_rate = 0;
  int m_side = 0;
  bool m_running = false;
  double m_startSeconds = 0;       // clip time at which the clock (re)started
  double m_stoppedAt = 0;          // clip time held while stopped
  qint64 m_written = 0;            // stereo frames written into the stream since it began
  qint64 m_contentStartFrame = 0;  // stream frame at which the current content began
  qint64 m_contentCursor = 0;      // next track frame to write
  double m_offsetUs = 0;           // smoothed (processedUSecs - monotonic us)
  bool m_offsetValid = false;
  double m_lastPosition = 0;
  QElapsedTimer m_monotonic;
  std::unique_ptr<QAudioSink> m_sink;
  QIODevice* m_io = nullptr;  // owned by m_sink
  QTimer* m_feedTimer = nullptr;
  QString m_deviceDescription;
};

}  // namespace h3p::ui
