// h3parity-studio-bench: the review playback benchmark. Opens two sources in the review view
// (a real window: run it under Xvfb), plays the whole clip once with the audio clock as master,
// then seeks to random frames, and prints fps, dropped frames, the shown frame's lag behind the
// audio clock (A/V drift), the clock's rate against the monotonic clock, CPU use and seek
// latency; --json adds one JSON line, --log FILE writes one line per painted frame.
//   h3parity-studio-bench [--seeks N] [--cold-seeks N] [--warmup-ms MS] [--mode MODE] [--heard A|B] [--json]
//                         [--log FILE] [--screenshot PNG] LEFT RIGHT
// Exit 0 when it ran (figures are reported, not judged), 2 on bad input.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTextStream>
#include <QTimer>
#include <algorithm>
#include <vector>

#include "core/common/error.h"
#include "ui/playback/audio_clock.h"
#include "ui/playback/frame_source.h"
#include "ui/playback/playback_controller.h"
#include "ui/review/review_canvas.h"
#include "ui/review/review_controller.h"
#include "ui/review/review_view.h"

namespace {

double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// The whole frames.rgb mapping of `source` (page-aligned: it starts the mapping).
std::pair<void*, std::size_t> mapping(const h3p::ui::FrameSource& source) {
  const QImage first = source.frame(0);
  const std::size_t bytes = std::size_t(source.frameCount()) * source.width() * source.height() * 3;
  return {const_cast<uchar*>(first.constBits()), bytes};
}

// Asks the kernel to reclaim the mapping's pages (they come back from disk on the next touch).
void evict(const h3p::ui::FrameSource& source) {
  const auto [base, bytes] = mapping(source);
  madvise(base, bytes, MADV_PAGEOUT);
}

// Fraction of frame `index`'s pages resident in memory.
double resident(const h3p::ui::FrameSource& source, int index) {
  const long page = sysconf(_SC_PAGESIZE);
  const auto [base, bytes] = mapping(source);
  const std::size_t frameBytes = bytes / source.frameCount();
  const auto begin = reinterpret_cast<std::uintptr_t>(base) + frameBytes * index;
  const std::uintptr_t first = begin / page * page;
  const std::size_t pages = (begin + frameBytes - first + page - 1) / page;
  std::vector<unsigned char> in(pages);
  if (mincore(reinterpret_cast<void*>(first), pages * page, in.data()) != 0) return -1;
  return std::count_if(in.begin(), in.end(), [](unsigned char c) { return c & 1; }) / double(pages);
}

void waitMs(int ms) {
  QEventLoop loop;
  QTimer::singleShot(ms, &loop, &QEventLoop::quit);
  loop.exec();
}

}  // namespace

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Review playback benchmark"));
  parser.addHelpOption();
  const QCommandLineOption seeksOption(QStringLiteral("seeks"),
                                       QStringLiteral("Random seeks to time."), QStringLiteral("N"),
                                       QStringLiteral("50"));
  const QCommandLineOption warmupOption(QStringLiteral("warmup-ms"),
                                        QStringLiteral("Wait before playing (audio stream start)."),
                                        QStringLiteral("MS"), QStringLiteral("1500"));
  const QCommandLineOption jsonOption(QStringLiteral("json"),
                                      QStringLiteral("Print a JSON line too."));
  const QCommandLineOption logOption(
      QStringLiteral("log"), QStringLiteral("Write 'frame clock_s wall_s' per painted frame."),
      QStringLiteral("FILE"));
  const QCommandLineOption sideOption(QStringLiteral("heard"),
                                      QStringLiteral("Heard side: A or B."), QStringLiteral("SIDE"),
                                      QStringLiteral("A"));
  const QCommandLineOption modeOption(QStringLiteral("mode"),
                                      QStringLiteral("side-by-side, wipe, flicker or difference."),
                                      QStringLiteral("MODE"), QStringLiteral("side-by-side"));
  const QCommandLineOption shotOption(
      QStringLiteral("screenshot"),
      QStringLiteral("Save the view at the middle frame as PNG FILE at the end."),
      QStringLiteral("FILE"));
  const QCommandLineOption coldOption(
      QStringLiteral("cold-seeks"),
      QStringLiteral("Random seeks to time with the frames' pages reclaimed before each."),
      QStringLiteral("N"), QStringLiteral("20"));
  parser.addOption(coldOption);
  parser.addOptions(
      {seeksOption, warmupOption, jsonOption, logOption, sideOption, modeOption, shotOption});
  parser.addPositionalArgument(QStringLiteral("LEFT"),
                               QStringLiteral("Run directory or video (A)."));
  parser.addPositionalArgument(QStringLiteral("RIGHT"),
                               QStringLiteral("Run directory or video (B)."));
  parser.process(app);
  QTextStream out(stdout);
  QTextStream err(stderr);
  const QStringList args = parser.positionalArguments();
  if (args.size() != 2) {
    err << "error: expected LEFT and RIGHT\n";
    return 2;
  }

  h3p::ui::ReviewView view;
  try {
    view.openPair(args[0], args[1]);
  } catch (const h3p::Error& e) {
    err << "error: " << e.what() << "\n";
    return 2;
  }
  h3p::ui::PlaybackController* playback = view.controller()->playback();
  const QStringList modes{QStringLiteral("side-by-side"), QStringLiteral("wipe"),
                          QStringLiteral("flicker"), QStringLiteral("difference")};
  const int mode = modes.indexOf(parser.value(modeOption));
  if (mode < 0) {
    err << "error: --mode: expected one of " << modes.join(QStringLiteral(", ")) << "\n";
    return 2;
  }
  view.controller()->setMode(static_cast<h3p::ui::ReviewMode>(mode));
  playback->setHeardSide(parser.value(sideOption).toUpper() == QStringLiteral("B") ? 1 : 0);
  view.resize(1920, 1080);
  view.show();
  waitMs(parser.value(warmupOption).toInt());

  // Playback: the whole clip once.
  QFile logFile(parser.value(logOption));
  QTextStream log(&logFile);
  QElapsedTimer wall;
  wall.start();
  if (parser.isSet(logOption)) {
    if (!logFile.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
      err << "error: " << logFile.fileName() << ": cannot write\n";
      return 2;
    }
    QObject::connect(view.canvas(), &h3p::ui::ReviewCanvas::painted, &view, [&](int frame) {
      if (!playback->isPlaying()) return;
      log << frame << ' ' << QString::number(playback->clock()->position(), 'f', 6) << ' '
          << QString::number(wall.nsecsElapsed() / 1e9, 'f', 6) << '\n';
    });
  }
  playback->resetStats();
  const double cpu0 = cpuSeconds();
  QElapsedTimer playWall;
  playWall.start();
  QEventLoop done;
  QObject::connect(playback, &h3p::ui::PlaybackController::playingChanged, &done,
                   [&](bool playing) {
                     if (!playing) done.quit();
                   });
  const double clipSeconds = view.frameCount() / playback->fps();
  QTimer::singleShot(static_cast<int>(clipSeconds * 3000 + 10000), &done, &QEventLoop::quit);
  view.play();
  done.exec();
  const double playSeconds = playWall.nsecsElapsed() / 1e9;
  const double cpu = (cpuSeconds() - cpu0) / playSeconds;
  log.flush();
  const h3p::ui::PlaybackStats stats = playback->stats();
  const double fps = stats.wallSeconds > 0 ? (stats.painted - 1) / stats.wallSeconds : 0;

  // Seeks: random frames, each timed from the request to the painted frame.
  std::vector<double> seekMs;
  QRandomGenerator random(7);
  for (int i = 0; i < parser.value(seeksOption).toInt(); ++i) {
    const int frame = random.bounded(view.frameCount());
    QElapsedTimer t;
    t.start();
    view.seek(frame);
    view.canvas()->repaint();
    seekMs.push_back(t.nsecsElapsed() / 1e6);
    QApplication::processEvents();
  }
  std::sort(seekMs.begin(), seekMs.end());
  const double seekMedian = seekMs.empty() ? 0 : seekMs[seekMs.size() / 2];
  const double seekMax = seekMs.empty() ? 0 : seekMs.back();

  // Cold seeks: both mappings' pages reclaimed before each seek.
  std::vector<double> coldMs;
  double residentBefore = 0;
  const h3p::ui::FrameSource* a = playback->sourceA();
  const h3p::ui::FrameSource* b = playback->sourceB();
  for (int i = 0; i < parser.value(coldOption).toInt(); ++i) {
    const int frame = random.bounded(view.frameCount());
    waitMs(30);  // let the prefetch worker finish touching pages after the previous seek
    evict(*a);
    evict(*b);
    residentBefore += (resident(*a, frame) + resident(*b, frame)) / 2;
    QElapsedTimer t;
    t.start();
    view.seek(frame);
    view.canvas()->repaint();
    coldMs.push_back(t.nsecsElapsed() / 1e6);
    QApplication::processEvents();
  }
  std::sort(coldMs.begin(), coldMs.end());
  const double coldMedian = coldMs.empty() ? 0 : coldMs[coldMs.size() / 2];
  const double coldMax = coldMs.empty() ? 0 : coldMs.back();
  const double coldResident = coldMs.empty() ? 0 : residentBefore / coldMs.size();

  if (parser.isSet(shotOption)) {
    view.seek(view.frameCount() / 2);
    view.showReadout(QPointF(view.canvas()->frameIndex() >= 0 ? 100 : 0, 100));
    QApplication::processEvents();
    if (!view.grab().save(parser.value(shotOption), "PNG")) {
      err << "error: " << parser.value(shotOption) << ": cannot write the screenshot\n";
      return 2;
    }
  }

  const h3p::ui::AudioClock* clock = playback->clock();
  out << "mode: " << modes[mode] << ", clip: " << view.frameCount() << " frames "
      << QString::number(playback->fps()) << " fps, " << view.canvas()->frameIndex()
      << " last, audio: "
      << (clock->audioMaster() ? clock->deviceDescription()
                               : QStringLiteral("none (monotonic clock)"))
      << "\n";
  out << "playback: " << stats.painted << " frames painted in "
      << QString::number(stats.wallSeconds, 'f', 3) << " s = " << QString::number(fps, 'f', 2)
      << " fps, dropped " << stats.dropped << ", prefetch misses " << stats.prefetchMisses
      << ", CPU " << QString::number(cpu * 100, 'f', 0) << " %\n";
  out << "a/v: shown frame lag behind the audio clock " << QString::number(stats.minLagMs, 'f', 1)
      << " .. " << QString::number(stats.maxLagMs, 'f', 1)
      << " ms (one frame = " << QString::number(1000 / playback->fps(), 'f', 1)
      << " ms); clock/monotonic rate "
      << QString::number(stats.wallSeconds > 0 ? stats.clockSeconds / stats.wallSeconds : 0, 'f', 4)
      << "\n";
  out << "seek: " << seekMs.size() << " random seeks, median "
      << QString::number(seekMedian, 'f', 1) << " ms, max " << QString::number(seekMax, 'f', 1)
      << " ms\n";
  out << "cold seek: " << coldMs.size() << " random seeks with the pages reclaimed ("
      << QString::number(coldResident * 100, 'f', 0) << " % of the frame resident before), median "
      << QString::number(coldMedian, 'f', 1) << " ms, max " << QString::number(coldMax, 'f', 1)
      << " ms\n";
  if (parser.isSet(jsonOption)) {
    const QJsonObject json{
        {"frames", view.frameCount()},
        {"fps", fps},
        {"painted", stats.painted},
        {"dropped", stats.dropped},
        {"prefetch_misses", stats.prefetchMisses},
        {"cpu_percent", cpu * 100},
        {"lag_min_ms", stats.minLagMs},
        {"lag_max_ms", stats.maxLagMs},
        {"clock_rate", stats.wallSeconds > 0 ? stats.clockSeconds / stats.wallSeconds : 0},
        {"audio", clock->audioMaster()},
        {"seek_median_ms", seekMedian},
        {"seek_max_ms", seekMax},
        {"cold_seek_median_ms", coldMedian},
        {"cold_seek_max_ms", coldMax},
        {"cold_seek_resident", coldResident}};
    out << QJsonDocument(json).toJson(QJsonDocument::Compact) << "\n";
  }
  return 0;
}
