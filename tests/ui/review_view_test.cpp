// ReviewView: opens a pair of decoded runs, seeks frame-accurately, renders every mode, links
// zoom and pan, reads pixels of both sides, switches the heard audio, shows its shortcuts, and
// refuses bad pairs while keeping the open one.
#include "ui/review/review_view.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "core/common/error.h"
#include "review_fixture.h"
#include "ui/playback/playback_controller.h"
#include "ui/review/audio_lane.h"
#include "ui/review/help_overlay.h"
#include "ui/review/review_canvas.h"
#include "ui/review/review_controller.h"
#include "ui/review/review_pair.h"

using h3p::ui::ReviewMode;
using h3p::ui::ReviewView;
using namespace h3p::ui::test;

class ReviewViewTest : public QObject {
  Q_OBJECT

 private slots:
  void init();
  void opensPairAtFrameZero();
  void seekShowsExactFrame();
  void stepClampsAndLoopWraps();
  void modesPaintDifferentImages();
  void differenceMarksOnlyChangedPixels();
  void zoomIsLinkedAndKeepsAnchor();
  void panMovesBothSides();
  void wipeDragMovesSplit();
  void readoutShowsBothSides();
  void audioSwitchMarksHeardSide();
  void helpOverlayListsShortcuts();
  void keyboardStepsFrames();
  void playAdvancesAndStopsAtEnd();
  void seekAndAudioSwitchWhilePlayingKeepPlaying();
  void flickerAlternatesSides();
  void refusesMismatchedSizesAndKeepsOpenPair();
  void refusesRunWithoutDecodedFrames();
  void opensRunAgainstImportedVideo();
  void openRunPairsWithTheOtherSide();
  void findsFirstPairOfRunsDirectory();

 private:
  QString candidate() const { return m_runs->candidate(); }
  QString provider() const { return m_runs->provider(); }
  std::unique_ptr<ReviewRuns> m_runs;
};

void ReviewViewTest::init() {
  m_runs = std::make_unique<ReviewRuns>();
  QVERIFY(m_runs->isValid());
}

void ReviewViewTest::opensPairAtFrameZero() {
  ReviewView view;
  QCOMPARE(view.frameCount(), 0);
  view.openPair(candidate(), provider());
  QCOMPARE(view.frameCount(), kReviewFrames);
  QCOMPARE(view.currentFrame(), 0);
  QCOMPARE(view.canvas()->frameIndex(), 0);
  QCOMPARE(view.controller()->state().labelA, QString("candidate · seed-1"));
  QCOMPARE(view.controller()->state().labelB, QString("provider · seed-1"));
  QCOMPARE(view.findChild<QLabel*>("frameLabel")->text().left(13), QString("frame 0 / 30 "));
}

void ReviewViewTest::seekShowsExactFrame() {
  ReviewView view;
  view.openPair(candidate(), provider());
  QSignalSpy changed(&view, &ReviewView::frameChanged);
  for (int frame : {17, 3, 29, 0, 12}) {
    view.seek(frame);
    QCOMPARE(view.currentFrame(), frame);
    const auto& shown = view.controller()->playback()->current();
    QCOMPARE(shown.index, frame);
    for (QPoint p : {QPoint(0, 0), QPoint(9, 9), QPoint(63, 47)}) {
      QCOMPARE(shown.a.pixel(p), reviewPixel(0, frame, p.x(), p.y()));
      QCOMPARE(shown.b.pixel(p), reviewPixel(1, frame, p.x(), p.y()));
    }
  }
  QCOMPARE(changed.count(), 5);
  QCOMPARE(changed.at(2).at(0).toInt(), 29);
  view.seek(1000);
  QCOMPARE(view.currentFrame(), kReviewFrames - 1);
  view.seek(-5);
  QCOMPARE(view.currentFrame(), 0);
}

void ReviewViewTest::stepClampsAndLoopWraps() {
  ReviewView view;
  view.openPair(candidate(), provider());
  auto* playback = view.controller()->playback();
  playback->step(-1);
  QCOMPARE(view.currentFrame(), 0);
  playback->step(5);
  QCOMPARE(view.currentFrame(), 5);
  view.seek(kReviewFrames - 1);
  playback->step(1);
  QCOMPARE(view.currentFrame(), kReviewFrames - 1);
  playback->setLoop(true);
  playback->step(1);
  QCOMPARE(view.currentFrame(), 0);
  playback->step(-1);
  QCOMPARE(view.currentFrame(), kReviewFrames - 1);
}

void ReviewViewTest::modesPaintDifferentImages() {
  ReviewView view;
  view.resize(900, 600);
  view.openPair(candidate(), provider());
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* combo = view.findChild<QComboBox*>("modeCombo");
  QVERIFY(combo != nullptr);
  QCOMPARE(combo->count(), 4);
  QList<QImage> shots;
  for (int i = 0; i < combo->count(); ++i) {
    combo->setCurrentIndex(i);
    QCOMPARE(static_cast<int>(view.controller()->state().mode), i);
    shots.append(view.canvas()->grab().toImage());
  }
  for (int i = 0; i < shots.size(); ++i) {
    for (int j = i + 1; j < shots.size(); ++j)
      QVERIFY2(shots[i] != shots[j], qPrintable(QString("modes %1 and %2").arg(i).arg(j)));
  }
  // Side by side has two image areas, the other modes one.
  combo->setCurrentIndex(0);
  QCOMPARE(view.canvas()->areas().size(), 2);
  combo->setCurrentIndex(1);
  QCOMPARE(view.canvas()->areas().size(), 1);
}

void ReviewViewTest::differenceMarksOnlyChangedPixels() {
  ReviewView view;
  view.openPair(candidate(), provider());
  QVERIFY(view.controller()->playback()->current().difference.isNull());
  view.controller()->setMode(ReviewMode::Difference);
  view.seek(4);
  const QImage diff = view.controller()->playback()->current().difference;
  QCOMPARE(diff.size(), QSize(kReviewWidth, kReviewHeight));
  const QRgb same = diff.pixel(0, 0);
  QCOMPARE(diff.pixel(30, 30), same);
  QCOMPARE(diff.pixel(7, 8), same);
  QVERIFY(diff.pixel(8, 8) != same);
  QVERIFY(diff.pixel(11, 11) != same);
  // A higher gain changes the colour of a difference of 40 (x4 = 160, x8 = 255).
  const QRgb at4 = diff.pixel(9, 9);
  view.controller()->setGain(8);
  QVERIFY(view.controller()->playback()->current().difference.pixel(9, 9) != at4);
}

void ReviewViewTest::zoomIsLinkedAndKeepsAnchor() {
  ReviewView view;
  view.resize(1000, 600);
  view.openPair(candidate(), provider());
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* canvas = view.canvas();
  const QList<QRectF> areas = canvas->areas();
  QCOMPARE(areas.size(), 2);
  const QRectF before = canvas->imageRectIn(areas[0]);
  const QPointF anchor(16, 12);
  const QPointF widgetPoint = before.topLeft() + anchor * (before.width() / kReviewWidth);
  view.controller()->zoomBy(2, anchor);
  const QRectF left = canvas->imageRectIn(areas[0]);
  const QRectF right = canvas->imageRectIn(areas[1]);
  QCOMPARE(left.size(), before.size() * 2);
  QCOMPARE(right.size(), left.size());
  const QPointF after = canvas->imagePointAt(widgetPoint);
  QVERIFY2(std::abs(after.x() - anchor.x()) < 1e-6 && std::abs(after.y() - anchor.y()) < 1e-6,
           qPrintable(QString("%1,%2").arg(after.x()).arg(after.y())));
  // Wheel over the canvas asks for a zoom too.
  QSignalSpy zoom(canvas, &h3p::ui::ReviewCanvas::zoomRequested);
  QWheelEvent wheel(widgetPoint, canvas->mapToGlobal(widgetPoint), QPoint(), QPoint(0, 120),
                    Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(canvas, &wheel);
  QCOMPARE(zoom.count(), 1);
  QVERIFY(view.controller()->state().zoom > 2);
  view.controller()->resetZoom();
  QCOMPARE(canvas->imageRectIn(areas[0]), before);
}

void ReviewViewTest::panMovesBothSides() {
  ReviewView view;
  view.resize(1000, 600);
  view.openPair(candidate(), provider());
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* canvas = view.canvas();
  view.controller()->zoomBy(4, QPointF(32, 24));
  const QList<QRectF> areas = canvas->areas();
  const QRectF left = canvas->imageRectIn(areas[0]);
  const QRectF right = canvas->imageRectIn(areas[1]);
  const QPoint start = areas[0].center().toPoint();
  QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, start);
  QTest::mouseMove(canvas, start + QPoint(40, 20));
  QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, start + QPoint(40, 20));
  const QPointF movedLeft = canvas->imageRectIn(areas[0]).topLeft() - left.topLeft();
  const QPointF movedRight = canvas->imageRectIn(areas[1]).topLeft() - right.topLeft();
  QVERIFY(std::abs(movedLeft.x() - 40) < 1e-6 && std::abs(movedLeft.y() - 20) < 1e-6);
  QCOMPARE(movedRight, movedLeft);
}

void ReviewViewTest::wipeDragMovesSplit() {
  ReviewView view;
  view.resize(800, 600);
  view.openPair(candidate(), provider());
  view.controller()->setMode(ReviewMode::Wipe);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto* canvas = view.canvas();
  const QRectF image = canvas->imageRectIn(canvas->areas().front());
  const int y = static_cast<int>(image.center().y());
  const QPoint at(static_cast<int>(image.left() + image.width() * 0.25), y);
  QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, at);
  QTest::mouseMove(canvas, QPoint(static_cast<int>(image.left() + image.width() * 0.75), y));
  QTest::mouseRelease(canvas, Qt::LeftButton);
  QVERIFY(std::abs(view.controller()->state().wipe - 0.75) < 0.01);
  // Left of the split is A, right of it is B (the block at x 8..11 differs): the split at 0.75
  // leaves x = 9 on A's side.
  const QImage shot = canvas->grab().toImage();
  const double scale = image.width() / kReviewWidth;
  const QPoint block = (image.topLeft() + QPointF(9.5, 9.5) * scale).toPoint();
  QCOMPARE(QColor(shot.pixel(block)).red(), qRed(reviewPixel(0, 0, 9, 9)));
  view.controller()->setWipe(0);
  const QImage allB = canvas->grab().toImage();
  QCOMPARE(QColor(allB.pixel(block)).red(), qRed(reviewPixel(1, 0, 9, 9)));
}

void ReviewViewTest::readoutShowsBothSides() {
  ReviewView view;
  view.openPair(candidate(), provider());
  view.seek(2);
  view.showReadout(QPointF(9.4, 10.7));
  const QRgb a = reviewPixel(0, 2, 9, 10), b = reviewPixel(1, 2, 9, 10);
  const QString text = view.readoutText();
  QVERIFY2(text.contains("x 9 y 10"), qPrintable(text));
  QVERIFY2(text.contains(QString("A %1").arg(qRed(a), 3)), qPrintable(text));
  QVERIFY2(text.contains(QString("B %1").arg(qRed(b), 3)), qPrintable(text));
  QVERIFY2(text.endsWith("40"), qPrintable(text));
  // The readout follows the frame.
  view.seek(3);
  QVERIFY(view.readoutText().contains(QString("A %1").arg(qRed(reviewPixel(0, 3, 9, 10)), 3)));
  view.showReadout(QPointF(-1, -1));
  QVERIFY(view.readoutText().isEmpty());
}

void ReviewViewTest::audioSwitchMarksHeardSide() {
  ReviewView view;
  view.openPair(candidate(), provider());
  auto* heard = view.findChild<QLabel*>("heardLabel");
  QVERIFY(heard->text().contains("<b>A</b>"));
  QCOMPARE(view.controller()->state().heardSide, 0);
  QSignalSpy spy(view.controller()->playback(), &h3p::ui::PlaybackController::heardSideChanged);
  view.findChild<QAbstractButton*>("audioButton")->click();
  QCOMPARE(spy.count(), 1);
  QCOMPARE(view.controller()->state().heardSide, 1);
  QVERIFY(heard->text().contains("<b>B</b>"));
  QVERIFY(heard->text().contains("provider"));
  QCOMPARE(view.canvas()->viewState().heardSide, 1);
}

void ReviewViewTest::helpOverlayListsShortcuts() {
  ReviewView view;
  view.resize(800, 600);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  QVERIFY(!view.helpOverlay()->isVisible());
  view.toggleHelp();
  QVERIFY(view.helpOverlay()->isVisible());
  QCOMPARE(view.helpOverlay()->geometry(), view.rect());
  bool hasSpace = false;
  for (const auto& row : view.helpOverlay()->shortcuts()) hasSpace |= row.first == "Space";
  QVERIFY(hasSpace);
  QVERIFY(view.helpOverlay()->shortcuts().size() >= 10);
  QTest::mouseClick(view.helpOverlay(), Qt::LeftButton);
  QVERIFY(!view.helpOverlay()->isVisible());
}

void ReviewViewTest::keyboardStepsFrames() {
  ReviewView view;
  view.resize(800, 600);
  view.openPair(candidate(), provider());
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  view.canvas()->setFocus();
  QTest::keyClick(view.canvas(), Qt::Key_Right);
  QTest::keyClick(view.canvas(), Qt::Key_Right);
  QCOMPARE(view.currentFrame(), 2);
  QTest::keyClick(view.canvas(), Qt::Key_Left);
  QCOMPARE(view.currentFrame(), 1);
  QTest::keyClick(view.canvas(), Qt::Key_End);
  QCOMPARE(view.currentFrame(), kReviewFrames - 1);
  QTest::keyClick(view.canvas(), Qt::Key_Home);
  QCOMPARE(view.currentFrame(), 0);
  QTest::keyClick(view.canvas(), Qt::Key_4);
  QCOMPARE(view.controller()->state().mode, ReviewMode::Difference);
  QTest::keyClick(view.canvas(), Qt::Key_A);
  QCOMPARE(view.controller()->state().heardSide, 1);
  QTest::keyClick(view.canvas(), Qt::Key_L);
  QVERIFY(view.controller()->playback()->loop());
}

void ReviewViewTest::playAdvancesAndStopsAtEnd() {
  ReviewView view;
  view.openPair(candidate(), provider());
  QSignalSpy playing(view.controller()->playback(), &h3p::ui::PlaybackController::playingChanged);
  view.seek(kReviewFrames - 8);
  view.play();
  QVERIFY(view.controller()->playback()->isPlaying());
  // Playback reaches the last frame and pauses there by itself (no loop).
  QTRY_VERIFY_WITH_TIMEOUT(!view.controller()->playback()->isPlaying(), 20000);
  QCOMPARE(view.currentFrame(), kReviewFrames - 1);
  QCOMPARE(playing.count(), 2);
  // Playing at the end starts over from frame 0.
  view.play();
  QTRY_VERIFY_WITH_TIMEOUT(view.currentFrame() > 0 && view.currentFrame() < kReviewFrames - 1,
                           20000);
  view.pause();
  const int stopped = view.currentFrame();
  QTest::qWait(100);
  QCOMPARE(view.currentFrame(), stopped);
  // Hiding the review (another tab) pauses it.
  view.show();
  view.play();
  QVERIFY(view.controller()->playback()->isPlaying());
  view.hide();
  QVERIFY(!view.controller()->playback()->isPlaying());
}

void ReviewViewTest::seekAndAudioSwitchWhilePlayingKeepPlaying() {
  ReviewView view;
  view.openPair(candidate(), provider());
  auto* playback = view.controller()->playback();
  playback->setLoop(true);
  view.play();
  view.seek(20);
  QCOMPARE(view.currentFrame(), 20);  // shown at once
  QVERIFY(playback->isPlaying());
  QTRY_VERIFY_WITH_TIMEOUT(view.currentFrame() > 20, 20000);  // and played on from there
  playback->toggleHeardSide();
  QVERIFY(playback->isPlaying());
  const int before = view.currentFrame();
  QTRY_VERIFY_WITH_TIMEOUT(view.currentFrame() != before, 20000);
  view.pause();
}

void ReviewViewTest::flickerAlternatesSides() {
  ReviewView view;
  view.resize(800, 600);
  view.openPair(candidate(), provider());
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  view.controller()->setMode(ReviewMode::Flicker);
  QCOMPARE(view.controller()->state().flickerShowsB, false);
  QTRY_VERIFY(view.controller()->state().flickerShowsB);   // the flicker timer shows B
  QTRY_VERIFY(!view.controller()->state().flickerShowsB);  // and A again
  // Flicker paints one side at a time: the differing block shows A's or B's red.
  view.controller()->setMode(ReviewMode::SideBySide);
  view.controller()->setMode(ReviewMode::Flicker);
  auto* canvas = view.canvas();
  const QRectF image = canvas->imageRectIn(canvas->areas().front());
  const QPoint block =
      (image.topLeft() + QPointF(9.5, 9.5) * (image.width() / kReviewWidth)).toPoint();
  const int shown = QColor(canvas->grab().toImage().pixel(block)).red();
  view.controller()->toggleFlicker();
  const int flipped = QColor(canvas->grab().toImage().pixel(block)).red();
  const bool nowB = view.controller()->state().flickerShowsB;
  QCOMPARE(flipped, qRed(reviewPixel(nowB ? 1 : 0, 0, 9, 9)));
  QCOMPARE(shown, qRed(reviewPixel(nowB ? 0 : 1, 0, 9, 9)));
}

void ReviewViewTest::refusesMismatchedSizesAndKeepsOpenPair() {
  ReviewView view;
  view.openPair(candidate(), provider());
  view.seek(5);
  QTemporaryDir other;
  const QString small = writeReviewRuns(other.path(), 10, 32, 24);
  QVERIFY(!small.isEmpty());
  try {
    view.openPair(candidate(), small);
    QFAIL("a pair of different sizes was accepted");
  } catch (const h3p::InputError& e) {
    QVERIFY2(QString(e.what()).contains("32x24"), e.what());
  }
  QCOMPARE(view.frameCount(), kReviewFrames);
  QCOMPARE(view.currentFrame(), 5);
}

void ReviewViewTest::refusesRunWithoutDecodedFrames() {
  ReviewView view;
  QTemporaryDir empty;
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, view.openPair(empty.path(), provider()));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, view.openPair(empty.path() + "/missing", provider()));
  QCOMPARE(view.frameCount(), 0);
}

void ReviewViewTest::opensRunAgainstImportedVideo() {
  const QString ffmpeg = QStandardPaths::findExecutable("ffmpeg");
  if (ffmpeg.isEmpty()) QSKIP("ffmpeg CLI not installed");
  const QString video = m_runs->path() + "/provider.mkv";
  QProcess p;
  p.start(ffmpeg, {"-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s",
                   QString("%1x%2").arg(kReviewWidth).arg(kReviewHeight), "-r", "24", "-i",
                   provider() + "/decoded/frames.rgb", "-c:v", "ffv1", "-pix_fmt", "gbrp", video});
  QVERIFY(p.waitForFinished(60000));
  QCOMPARE(p.exitCode(), 0);
  ReviewView view;
  view.openPair(candidate(), video);
  QCOMPARE(view.frameCount(), kReviewFrames);
  QCOMPARE(view.controller()->state().labelB, QString("provider.mkv"));
  view.seek(11);
  QCOMPARE(view.controller()->playback()->current().b.pixel(9, 9), reviewPixel(1, 11, 9, 9));
  // The video on the left works too.
  view.openPair(video, candidate());
  QCOMPARE(view.controller()->state().labelA, QString("provider.mkv"));
}

void ReviewViewTest::openRunPairsWithTheOtherSide() {
  ReviewView view;
  view.openRun(provider());
  QCOMPARE(view.controller()->state().labelA, QString("candidate · seed-1"));
  QCOMPARE(view.controller()->state().labelB, QString("provider · seed-1"));
  view.openRun(candidate());
  QCOMPARE(view.controller()->state().labelA, QString("candidate · seed-1"));
  QCOMPARE(view.controller()->state().labelB, QString("provider · seed-1"));
  const auto pair = h3p::ui::pairOfRun("/r/c/candidate@attention=provider/seed-7");
  QCOMPARE(pair.first, QString("/r/c/candidate@attention=provider/seed-7"));
  QCOMPARE(pair.second, QString("/r/c/provider/seed-7"));
}

void ReviewViewTest::findsFirstPairOfRunsDirectory() {
  const auto pair = h3p::ui::findReviewPair(m_runs->path());
  QCOMPARE(QFileInfo(pair.first).canonicalFilePath(), QFileInfo(candidate()).canonicalFilePath());
  QCOMPARE(QFileInfo(pair.second).canonicalFilePath(), QFileInfo(provider()).canonicalFilePath());
  QTemporaryDir empty;
  QVERIFY(h3p::ui::findReviewPair(empty.path()).first.isEmpty());
}

QTEST_MAIN(ReviewViewTest)
#include "review_view_test.moc"
