#include "ui/playback/frame_prefetcher.h"

#include <algorithm>

#include "ui/playback/frame_difference.h"
#include "ui/playback/frame_source.h"

namespace h3p::ui {

PreparedFrame prepareFrame(const FrameSource& a, const FrameSource& b, int index, bool difference,
                           double gain) {
  PreparedFrame frame;
  frame.index = index;
  a.touch(index);
  b.touch(index);
  frame.a = a.frame(index);
  frame.b = b.frame(index);
  if (difference) frame.difference = differenceImage(frame.a, frame.b, gain);
  return frame;
}

PrefetchWorker::PrefetchWorker(std::shared_ptr<const FrameSource> a,
                               std::shared_ptr<const FrameSource> b, int capacity)
    : m_a(std::move(a)),
      m_b(std::move(b)),
      m_capacity(std::max(1, capacity)),
      m_count(std::min(m_a->frameCount(), m_b->frameCount())) {}

void PrefetchWorker::run() {
  std::unique_lock lock(m_mutex);
  try {
    for (;;) {
      m_wake.wait(lock, [&] {
        return m_stopRequested ||
               (m_state != State::Idle && static_cast<int>(m_queue.size()) < m_capacity &&
                m_next < m_count);
      });
      if (m_stopRequested) break;
      m_state = State::Filling;
      // Step: prepare one frame outside the lock; drop it if a restart came meanwhile.
      const std::uint64_t generation = m_generation;
      const int index = m_next;
      const bool difference = m_difference;
      const double gain = m_gain;
      lock.unlock();
      PreparedFrame frame = prepareFrame(*m_a, *m_b, index, difference, gain);
      lock.lock();
      if (generation != m_generation) continue;
      m_queue.push_back(std::move(frame));
      m_next = index + 1;
      if (m_next >= m_count && m_loop) m_next = 0;
      if (static_cast<int>(m_queue.size()) >= m_capacity) m_state = State::Full;
    }
  } catch (...) {
    if (!lock.owns_lock()) lock.lock();
    m_error = std::current_exception();
  }
  m_state = State::Stopped;
}

FramePrefetcher::FramePrefetcher(std::shared_ptr<const FrameSource> a,
                                 std::shared_ptr<const FrameSource> b, int capacity,
                                 QObject* parent)
    : QObject(parent), m_worker(new PrefetchWorker(std::move(a), std::move(b), capacity)) {
  m_thread.setObjectName(QStringLiteral("h3p-prefetch"));
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::started, m_worker, &PrefetchWorker::run);
  m_thread.start();
}

FramePrefetcher::~FramePrefetcher() {
  {
    std::lock_guard lock(m_worker->m_mutex);
    m_worker->m_stopRequested = true;
  }
  m_worker->m_wake.notify_all();
  m_thread.quit();
  m_thread.wait();
  delete m_worker;  // its thread has finished: deleted from here
}

void FramePrefetcher::restart(int from, bool loop, bool difference, double gain) {
  {
    std::lock_guard lock(m_worker->m_mutex);
    ++m_worker->m_generation;
    m_worker->m_queue.clear();
    m_worker->m_next = std::clamp(from, 0, std::max(0, m_worker->m_count - 1));
    m_worker->m_loop = loop;
    m_worker->m_difference = difference;
    m_worker->m_gain = gain;
    if (m_worker->m_state != PrefetchWorker::State::Stopped)
      m_worker->m_state = PrefetchWorker::State::Filling;
  }
  m_worker->m_wake.notify_all();
}

std::optional<PreparedFrame> FramePrefetcher::take(int index) {
  std::optional<PreparedFrame> out;
  {
    std::lock_guard lock(m_worker->m_mutex);
    if (m_worker->m_error) std::rethrow_exception(m_worker->m_error);
    auto& queue = m_worker->m_queue;
    auto it = std::find_if(queue.begin(), queue.end(),
                           [&](const PreparedFrame& f) { return f.index == index; });
    if (it != queue.end()) {
      out = std::move(*it);
      queue.erase(queue.begin(), it + 1);
      if (m_worker->m_state == PrefetchWorker::State::Full)
        m_worker->m_state = PrefetchWorker::State::Filling;
    }
  }
  if (out) m_worker->m_wake.notify_all();
  return out;
}

int FramePrefetcher::queued() {
  std::lock_guard lock(m_worker->m_mutex);
  return static_cast<int>(m_worker->m_queue.size());
}

PrefetchWorker::State FramePrefetcher::state() {
  std::lock_guard lock(m_worker->m_mutex);
  return m_worker->m_state;
}

}  // namespace h3p::ui
