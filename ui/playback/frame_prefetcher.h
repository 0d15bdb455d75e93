#pragma once
// A bounded queue of frames prepared ahead of the playhead on a worker thread: the pages of
// both sides' frames are touched (so painting never faults on the mapping) and, in the
// difference mode, the colour-mapped difference is computed. A seek is stop, flush, restart.
// restart()/take()/stop() are called from the UI thread only.
#include <QImage>
#include <QObject>
#include <QThread>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>

namespace h3p::ui {

class FrameSource;

// One frame of both sides, ready to paint.
struct PreparedFrame {
  int index = -1;
  QImage a, b;        // over the sources' mappings
  QImage difference;  // null unless the difference was asked for
};

// Prepares `index` of both sources (the UI thread's path when the queue misses).
PreparedFrame prepareFrame(const FrameSource& a, const FrameSource& b, int index, bool difference,
                           double gain);

// Runs on the worker thread; owned by FramePrefetcher.
class PrefetchWorker : public QObject {
  Q_OBJECT

 public:
  // Worker states:
  enum class State {
    Idle,     // nothing asked for; waits for restart()
    Filling,  // preparing the next frame into the queue
    Full,     // the queue holds `capacity` frames; waits for take() or restart()
    Stopped,  // asked to quit, or failed (the error is kept); the thread loop has returned
  };

  PrefetchWorker(std::shared_ptr<const FrameSource> a, std::shared_ptr<const FrameSource> b,
                 int capacity);

 public slots:
  // The worker loop; returns when stop is requested.
  void run();

 private:
  friend class FramePrefetcher;
  std::shared_ptr<const FrameSource> m_a, m_b;
  int m_capacity;
  int m_count;  // frames in either source (the shorter)
  std::mutex m_mutex;
  std::condition_variable m_wake;
  State m_state = State::Idle;
  bool m_stopRequested = false;
  std::uint64_t m_generation = 0;  // bumped by every restart; stale work is dropped
  int m_next = 0;                  // next index to prepare
  bool m_loop = false;
  bool m_difference = false;
  double m_gain = 1;
  std::deque<PreparedFrame> m_queue;
  std::exception_ptr m_error;
};

class FramePrefetcher : public QObject {
  Q_OBJECT

 public:
  // Starts the worker thread over the two sources (frame indices up to the shorter's count).
  FramePrefetcher(std::shared_ptr<const FrameSource> a, std::shared_ptr<const FrameSource> b,
                  int capacity = 12, QObject* parent = nullptr);
  // Stops and joins the worker.
  ~FramePrefetcher() override;

  // Flushes the queue and prepares from `from` on (wrapping to 0 when loop).
  void restart(int from, bool loop, bool difference, double gain);
  // Frame `index` when the queue holds it (frames before it are dropped), otherwise nothing.
  // Rethrows an error the worker hit.
  std::optional<PreparedFrame> take(int index);
  // Frames waiting in the queue.
  int queued();
  PrefetchWorker::State state();

 private:
  QThread m_thread;
  PrefetchWorker* m_worker;  // lives on m_thread; deleted after the thread is joined
};

}  // namespace h3p::ui
