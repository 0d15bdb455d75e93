#pragma once
// Playback of two sources in sync: owns the sources, the audio master clock and the prefetch
// queue, and decides which frame is shown. While playing, a timer reads the clock and presents
// frame floor(t * fps); video follows audio, never the reverse. Seeking shows the exact frame
// at once, flushes the queue and restarts it behind the new position. UI thread only.
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <memory>

#include "ui/playback/frame_prefetcher.h"

namespace h3p::ui {

class AudioClock;
class FrameSource;

// What playback measured since the last resetStats() (frames painted while playing).
struct PlaybackStats {
  int painted = 0;          // frames painted while playing
  int dropped = 0;          // frames skipped between consecutive painted frames
  int prefetchMisses = 0;   // frames the queue did not hold, prepared on the UI thread
  double minLagMs = 0;      // smallest (clock - frame start time) at paint; >= 0 when in sync
  double maxLagMs = 0;      // largest; < 1000 / fps keeps every painted frame within one frame
  double clockSeconds = 0;  // clock time covered while playing
  double wallSeconds = 0;   // monotonic time covered while playing
};

class PlaybackController : public QObject {
  Q_OBJECT

 public:
  explicit PlaybackController(QObject* parent = nullptr);
  ~PlaybackController() override;

  // Takes both sides (frames paired by index, up to the shorter clip; B's audio resampled to
  // A's rate), pauses and shows frame 0.
  void setSources(std::shared_ptr<const FrameSource> a, std::shared_ptr<const FrameSource> b);
  bool hasSources() const { return m_a != nullptr; }
  const FrameSource* sourceA() const { return m_a.get(); }
  const FrameSource* sourceB() const { return m_b.get(); }

  int frameCount() const { return m_count; }
  int currentFrame() const { return m_current.index; }
  // Frames per second of side A (the pair's time base); 0 without sources.
  double fps() const { return m_fps; }
  bool isPlaying() const { return m_playing; }
  bool loop() const { return m_loop; }
  // The frame shown now (null images without sources).
  const PreparedFrame& current() const { return m_current; }
  // The master clock (owned).
  AudioClock* clock() const { return m_clock; }

  // Whether presented frames carry the colour-mapped difference, and its gain.
  void setDifference(bool on, double gain);

  // Pauses and closes the audio device; call before the owners are torn down (the sink runs
  // the event loop while it closes).
  void shutdown();

  PlaybackStats stats() const { return m_stats; }
  void resetStats();

 public slots:
  // Shows `frame` (clamped); keeps playing from there when playing.
  void seek(int frame);
  void play();
  void pause();
  void togglePlay();
  // Pauses and moves by `delta` frames.
  void step(int delta);
  void setLoop(bool loop);
  // 0 = A, 1 = B: the side whose audio is heard.
  void setHeardSide(int side);
  void toggleHeardSide();
  // Called after the frame `frame` reached the screen (statistics).
  void notePainted(int frame);

 signals:
  // current() changed (a new frame, or the difference was recomputed).
  void frameReady();
  void frameChanged(int frame);
  void playingChanged(bool playing);
  void loopChanged(bool loop);
  void heardSideChanged(int side);
  // Preparing a frame failed (an unreadable mapping, a worker error); playback paused.
  void failed(const QString& message);

 private:
  void tick();
  void present(int index);
  // present() for slots: an error pauses playback and is reported through failed().
  void presentGuarded(int index);
  int nextIndex(int index) const;

  std::shared_ptr<const FrameSource> m_a, m_b;
  std::unique_ptr<FramePrefetcher> m_prefetcher;
  AudioClock* m_clock;
  QTimer m_timer;
  PreparedFrame m_current;
  int m_count = 0;
  double m_fps = 0;
  bool m_playing = false;
  bool m_loop = false;
  bool m_difference = false;
  double m_gain = 4;
  PlaybackStats m_stats;
  int m_lastPainted = -1;
  double m_firstClock = -1, m_lastClock = 0;
  qint64 m_firstWallNs = -1, m_lastWallNs = 0;
  QElapsedTimer m_wall;
};

}  // namespace h3p::ui
