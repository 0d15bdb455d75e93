// ui/playback: frame sources (runs, decoded directories, video files), the prefetch queue, the
// difference image, resampling, the fallback clock and the playback statistics; and the audio
// lane's analysis (envelopes, difference spectrogram).
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>
#include <cmath>
#include <numbers>

#include "core/common/error.h"
#include "review_fixture.h"
#include "ui/playback/audio_clock.h"
#include "ui/playback/frame_difference.h"
#include "ui/playback/frame_prefetcher.h"
#include "ui/playback/frame_source.h"
#include "ui/playback/playback_controller.h"
#include "ui/review/audio_analysis.h"

using namespace h3p::ui;
using namespace h3p::ui::test;

class PlaybackTest : public QObject {
  Q_OBJECT

 private slots:
  void init();
  void sourceOpensRunAndDecodedDirectory();
  void sourceRefusesBadInput();
  void sourceDecodesVideoFile();
  void resampleKeepsDurationAndEnds();
  void differenceImageIsFlatWhereEqual();
  void prefetcherPreparesAheadBoundedAndFlushesOnRestart();
  void prefetcherWrapsWhenLooping();
  void fallbackClockRunsAndFreezes();
  void statsCountDroppedFramesAndLag();
  void envelopeFollowsSamples();
  void spectrogramShowsDifferenceFrequency();

 private:
  QString candidate() const { return m_runs->candidate(); }
  QString provider() const { return m_runs->provider(); }
  std::unique_ptr<ReviewRuns> m_runs;
};

void PlaybackTest::init() {
  m_runs = std::make_unique<ReviewRuns>();
  QVERIFY(m_runs->isValid());
}

void PlaybackTest::sourceOpensRunAndDecodedDirectory() {
  const auto run = FrameSource::open(candidate());
  QCOMPARE(run->label(), QString("candidate · seed-1"));
  QCOMPARE(run->width(), kReviewWidth);
  QCOMPARE(run->height(), kReviewHeight);
  QCOMPARE(run->frameCount(), kReviewFrames);
  QCOMPARE(run->fps(), kReviewFps);
  QCOMPARE(run->sampleRate(), kReviewRate);
  const long long samples = static_cast<long long>(kReviewFrames / kReviewFps * kReviewRate);
  QCOMPARE(static_cast<long long>(run->stereo().size()), 2 * samples);
  QCOMPARE(run->stereo()[2 * 10], run->stereo()[2 * 10 + 1]);
  const QImage frame = run->frame(7);
  QCOMPARE(frame.format(), QImage::Format_RGB888);
  QCOMPARE(frame.pixel(5, 6), reviewPixel(0, 7, 5, 6));
  run->touch(kReviewFrames - 1);

  const auto decoded = FrameSource::open(provider() + "/decoded");
  QCOMPARE(decoded->label(), QString("decoded"));
  QCOMPARE(decoded->frame(3).pixel(9, 9), reviewPixel(1, 3, 9, 9));
}

void PlaybackTest::sourceRefusesBadInput() {
  const auto run = FrameSource::open(candidate());
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, run->frame(kReviewFrames));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, run->frame(-1));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, FrameSource::open(m_runs->path() + "/nothing"));
  // A frames.rgb of the wrong size is refused with the file named.
  QFile rgb(candidate() + "/decoded/frames.rgb");
  QVERIFY(rgb.resize(100));
  try {
    FrameSource::open(candidate());
    QFAIL("a truncated frames.rgb was accepted");
  } catch (const h3p::InputError& e) {
    QVERIFY2(QString(e.what()).contains("frames.rgb"), e.what());
  }
}

void PlaybackTest::sourceDecodesVideoFile() {
  const QString ffmpeg = QStandardPaths::findExecutable("ffmpeg");
  if (ffmpeg.isEmpty()) QSKIP("ffmpeg CLI not installed");
  // Lossless RGB video (FFV1, planar RGB) with PCM audio, made from the fixture's frames.
  const QString video = m_runs->path() + "/a.mkv";
  QProcess p;
  p.start(
      ffmpeg,
      {"-v",       "error",     "-f",       "rawvideo",
       "-pix_fmt", "rgb24",     "-s",       QString("%1x%2").arg(kReviewWidth).arg(kReviewHeight),
       "-r",       "24",        "-i",       candidate() + "/decoded/frames.rgb",
       "-f",       "lavfi",     "-i",       "sine=frequency=440:sample_rate=16000:duration=1.25",
       "-c:v",     "ffv1",      "-pix_fmt", "gbrp",
       "-c:a",     "pcm_f32le", "-ac",      "2",
       video});
  QVERIFY(p.waitForFinished(60000));
  QCOMPARE(p.exitCode(), 0);
  const auto source = FrameSource::open(video, kReviewRate);
  QCOMPARE(source->label(), QString("a.mkv"));
  QCOMPARE(source->frameCount(), kReviewFrames);
  QCOMPARE(source->sampleRate(), kReviewRate);  // resampled to the rate asked for
  for (int f : {0, 13, kReviewFrames - 1})
    QCOMPARE(source->frame(f).pixel(9, 9), reviewPixel(0, f, 9, 9));
}

void PlaybackTest::resampleKeepsDurationAndEnds() {
  std::vector<float> in;
  for (int i = 0; i < 100; ++i) {
    in.push_back(static_cast<float>(i));
    in.push_back(static_cast<float>(-i));
  }
  const std::vector<float> up = resampleStereo(in, 100, 200);
  QCOMPARE(up.size(), std::size_t(400));
  QCOMPARE(up[0], 0.f);
  QCOMPARE(up[2 * 3], 1.5f);  // halfway between samples 1 and 2
  QCOMPARE(up[2 * 3 + 1], -1.5f);
  QCOMPARE(resampleStereo(in, 100, 100), in);
  QCOMPARE(resampleStereo(in, 100, 50).size(), std::size_t(100));
}

void PlaybackTest::differenceImageIsFlatWhereEqual() {
  const auto a = FrameSource::open(candidate());
  const auto b = FrameSource::open(provider());
  const QImage same = differenceImage(a->frame(2), a->frame(2), 4);
  QCOMPARE(same.size(), QSize(kReviewWidth, kReviewHeight));
  const QRgb zero = same.pixel(0, 0);
  for (int y = 0; y < kReviewHeight; y += 7) {
    for (int x = 0; x < kReviewWidth; x += 5) QCOMPARE(same.pixel(x, y), zero);
  }
  const QImage diff = differenceImage(a->frame(2), b->frame(2), 4);
  QVERIFY(diff.pixel(9, 9) != zero);
  QCOMPARE(diff.pixel(20, 20), zero);
  QCOMPARE(differenceMagnitude(qRgb(10, 0, 0), qRgb(50, 0, 0), 4), 160);
  QCOMPARE(differenceMagnitude(qRgb(10, 0, 0), qRgb(50, 0, 0), 8), 255);
  QCOMPARE(differenceMagnitude(qRgb(1, 2, 3), qRgb(1, 2, 3), 100), 0);
  QVERIFY(differenceImage(a->frame(0), QImage(2, 2, QImage::Format_RGB888), 1).isNull());
}

void PlaybackTest::prefetcherPreparesAheadBoundedAndFlushesOnRestart() {
  const auto a = FrameSource::open(candidate());
  const auto b = FrameSource::open(provider());
  FramePrefetcher prefetcher(a, b, 4);
  QCOMPARE(prefetcher.state(), PrefetchWorker::State::Idle);
  QVERIFY(!prefetcher.take(0));  // nothing asked for yet
  prefetcher.restart(5, false, false, 1);
  QTRY_COMPARE(prefetcher.queued(), 4);
  QCOMPARE(prefetcher.state(), PrefetchWorker::State::Full);
  QTest::qWait(50);
  QCOMPARE(prefetcher.queued(), 4);  // bounded
  // Taking frame 6 drops frame 5 before it; the worker refills behind.
  auto six = prefetcher.take(6);
  QVERIFY(six);
  QCOMPARE(six->index, 6);
  QCOMPARE(six->a.pixel(9, 9), reviewPixel(0, 6, 9, 9));
  QCOMPARE(six->b.pixel(9, 9), reviewPixel(1, 6, 9, 9));
  QVERIFY(six->difference.isNull());
  QTRY_COMPARE(prefetcher.queued(), 4);
  QVERIFY(!prefetcher.take(5));
  // A restart flushes: only frames from the new position come out, with the difference.
  prefetcher.restart(20, false, true, 4);
  QTRY_VERIFY(prefetcher.queued() > 0);
  QVERIFY(!prefetcher.take(8));
  auto twenty = prefetcher.take(20);
  QVERIFY(twenty);
  QVERIFY(!twenty->difference.isNull());
  // The end of the clip stops the worker without looping.
  prefetcher.restart(kReviewFrames - 2, false, false, 1);
  QTRY_COMPARE(prefetcher.queued(), 2);
  QTest::qWait(50);
  QCOMPARE(prefetcher.queued(), 2);
}

void PlaybackTest::prefetcherWrapsWhenLooping() {
  const auto a = FrameSource::open(candidate());
  const auto b = FrameSource::open(provider());
  FramePrefetcher prefetcher(a, b, 4);
  prefetcher.restart(kReviewFrames - 2, true, false, 1);
  QTRY_COMPARE(prefetcher.queued(), 4);
  QVERIFY(prefetcher.take(kReviewFrames - 1));
  auto first = prefetcher.take(0);
  QVERIFY(first);
  QCOMPARE(first->a.pixel(0, 0), reviewPixel(0, 0, 0, 0));
  QVERIFY(prefetcher.take(1));
}

void PlaybackTest::fallbackClockRunsAndFreezes() {
  AudioClock clock;
  clock.setTracks({}, {}, 0);  // no audio: the monotonic clock drives playback
  QVERIFY(!clock.audioMaster());
  QCOMPARE(clock.position(), 0.0);
  clock.start(1.5);
  QVERIFY(clock.running());
  const double first = clock.position();
  QVERIFY(first >= 1.5);
  QTRY_VERIFY(clock.position() > first);
  clock.stop();
  const double held = clock.position();
  QTest::qWait(20);
  QCOMPARE(clock.position(), held);
  QSignalSpy side(&clock, &AudioClock::heardSideChanged);
  clock.setHeardSide(1);
  clock.setHeardSide(1);
  QCOMPARE(side.count(), 1);
  QCOMPARE(clock.heardSide(), 1);
}

void PlaybackTest::statsCountDroppedFramesAndLag() {
  PlaybackController controller;
  controller.setSources(FrameSource::open(candidate()), FrameSource::open(provider()));
  QCOMPARE(controller.currentFrame(), 0);
  controller.notePainted(3);  // paused: not counted
  QCOMPARE(controller.stats().painted, 0);
  controller.play();
  controller.notePainted(1);
  controller.notePainted(2);
  controller.notePainted(2);  // a repaint of the same frame
  controller.notePainted(5);
  controller.pause();
  const PlaybackStats stats = controller.stats();
  QCOMPARE(stats.painted, 3);
  QCOMPARE(stats.dropped, 2);
  QVERIFY(stats.minLagMs <= stats.maxLagMs);
  controller.resetStats();
  QCOMPARE(controller.stats().painted, 0);
}

void PlaybackTest::envelopeFollowsSamples() {
  std::vector<float> ramp(100);
  for (int i = 0; i < 100; ++i) ramp[i] = i / 100.f;
  const auto columns = envelope(ramp, 100, 4);
  QCOMPARE(columns.size(), std::size_t(4));
  QCOMPARE(columns[0].first, 0.f);
  QCOMPARE(columns[0].second, 0.24f);
  QCOMPARE(columns[3].second, 0.99f);
  // Past the samples the envelope is silence.
  const auto padded = envelope(ramp, 200, 2);
  QCOMPARE(padded[1].first, 0.f);
  QCOMPARE(padded[1].second, 0.f);
  QCOMPARE(monoMix({1.f, 3.f, -2.f, 0.f}), (std::vector<float>{2.f, -1.f}));
}

void PlaybackTest::spectrogramShowsDifferenceFrequency() {
  const int rate = 8000, n = 8000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * 440 * i / rate));
    b[i] = a[i] + static_cast<float>(0.1 * std::sin(2 * std::numbers::pi * 2000 * i / rate));
  }
  const QImage same = differenceSpectrogram(a, a);
  QCOMPARE(same.height(), 256);
  QVERIFY(same.width() >= n / 256);
  const QRgb floor = same.pixel(same.width() / 2, 10);
  QCOMPARE(same.pixel(same.width() / 2, 200), floor);
  const QImage diff = differenceSpectrogram(a, b);
  // 2 kHz of 4 kHz Nyquist: bin 128 of 256, row 255 - 128 = 127 (low frequencies at the bottom).
  const int x = diff.width() / 2;
  auto level = [&](int row) { return qGray(diff.pixel(x, row)); };
  QVERIFY(level(127) > level(40));
  QVERIFY(level(127) > level(230));  // 440 Hz is in both sides: it cancels
  QVERIFY(differenceSpectrogram({}, {}).isNull());
}

QTEST_MAIN(PlaybackTest)
#include "playback_test.moc"
