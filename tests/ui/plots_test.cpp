// Plots: per-frame PSNR/SSIM with bound lines and a playhead, where a click asks to seek to
// the frame under the mouse; per-step drift on log scales with first-drift markers; PNG export.
#include <qcustomplot.h>

#include <QImage>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "compare_fixture.h"
#include "ui/models/compare_result.h"
#include "ui/plots/frame_metrics_plot.h"
#include "ui/plots/plots_view.h"
#include "ui/plots/step_drift_plot.h"

using namespace h3p::ui;
using h3p::ui::test::CompareFigures;
using h3p::ui::test::compareObject;

namespace {

QList<CompareResult> twoComparisons(int frames, int steps) {
  CompareFigures a, b;
  a.frames = b.frames = frames;
  a.steps = b.steps = steps;
  b.implSpec = "candidate:attention=provider";
  b.psnrDb = 35;
  return {parseCompareObject("a", compareObject(a)), parseCompareObject("b", compareObject(b))};
}

int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
  for (int y = 0; y < rgb.height(); y += 3) {
    for (int x = 0; x < rgb.width(); x += 3) colours.insert(rgb.pixel(x, y));
  }
  return static_cast<int>(colours.size());
}

}  // namespace

class PlotsTest : public QObject {
  Q_OBJECT

 private slots:
  void frameCurvesBoundsAndPlayhead();
  void clickSeeksToTheFrameUnderTheMouse();
  void stepDriftIsLogScaleWithFirstDriftMarkers();
  void variantsAreABandBehindTheCandidates();
  void plotsViewForwardsSeeksAndExportsPng();
};

void PlotsTest::frameCurvesBoundsAndPlayhead() {
  FrameMetricsPlot plot;
  plot.setResults(twoComparisons(12, 3));
  QCOMPARE(plot.frameCount(), 12);
  QCOMPARE(plot.plot()->graphCount(), 4);  // PSNR and SSIM per comparison
  QCOMPARE(plot.plot()->itemCount(), 4);   // two playheads, two bound lines
  QCOMPARE(plot.plot()->graph(0)->data()->size(), 12);
  QCOMPARE(plot.plot()->graph(0)->name(), QString("candidate"));
  plot.setPlayhead(999);
  QCOMPARE(plot.playhead(), 11);
  plot.setPlayhead(-4);
  QCOMPARE(plot.playhead(), 0);
  // Without bounds: no bound lines. Replacing the data does not accumulate items.
  CompareFigures noBounds;
  noBounds.withBounds = false;
  plot.setResults({parseCompareObject("n", compareObject(noBounds))});
  QCOMPARE(plot.plot()->itemCount(), 2);
  QCOMPARE(plot.plot()->graphCount(), 2);
  // Identical frames (infinite PSNR everywhere) are named so in the legend.
  QJsonObject identical = compareObject(noBounds);
  QJsonArray frames;
  for (int i = 0; i < 3; ++i) {
    frames.append(QJsonObject{{"index", i}, {"psnr_db", "inf"}, {"ssim", 1.0}});
  }
  identical.insert("frames", frames);
  plot.setResults({parseCompareObject("i", identical)});
  QCOMPARE(plot.plot()->graph(0)->name(), QString("candidate (identical frames)"));
  plot.setResults({});
  QCOMPARE(plot.frameCount(), 0);
  QCOMPARE(plot.frameAtX(100), -1);
}

void PlotsTest::clickSeeksToTheFrameUnderTheMouse() {
  FrameMetricsPlot plot;
  plot.resize(800, 600);
  plot.setResults(twoComparisons(40, 3));
  plot.show();
  QVERIFY(QTest::qWaitForWindowExposed(&plot));
  plot.plot()->replot();
  QSignalSpy seeks(&plot, &FrameMetricsPlot::seekRequested);
  QCPAxisRect* psnr = plot.plot()->axisRects().at(0);
  QCPAxisRect* ssim = plot.plot()->axisRects().at(1);
  for (int i = 0; i < 3; ++i) {
    const int frame = QRandomGenerator::global()->bounded(40);
    QCPAxisRect* rect = i % 2 == 0 ? psnr : ssim;
    const int x = qRound(rect->axis(QCPAxis::atBottom)->coordToPixel(frame));
    QTest::mouseClick(plot.plot(), Qt::LeftButton, {}, QPoint(x, rect->center().y()));
    QCOMPARE(seeks.count(), i + 1);
    QCOMPARE(seeks.last().at(0).toInt(), frame);
    // The plot does not move its own playhead; the owner does.
  }
  // A click outside the axis rects (on the legend row) is not a seek.
  QTest::mouseClick(plot.plot(), Qt::LeftButton, {}, QPoint(2, plot.plot()->height() - 2));
  QCOMPARE(seeks.count(), 3);
}

void PlotsTest::stepDriftIsLogScaleWithFirstDriftMarkers() {
  StepDriftPlot plot;
  // video rel L2 = 1e-3 * 2^s crosses 0.01 at s = 4.
  const QList<CompareResult> results = twoComparisons(3, 7);
  DriftSeries teacher;
  for (int s = 0; s < 7; ++s) {
    teacher.points.append({s, s == 5 ? 0.02 : 1e-3, 1e-3, std::nan(""), std::nan("")});
  }
  plot.setData(results, teacher);
  QCOMPARE(plot.curveCount(), 3);  // two free-running, one teacher-forced
  QCOMPARE(plot.firstDriftMarkers(), (QList<int>{4, 4, 5}));
  QCPAxis* y = plot.plot()->axisRects().at(0)->axis(QCPAxis::atLeft);
  QCOMPARE(y->scaleType(), QCPAxis::stLogarithmic);
  QVERIFY(y->range().lower > 0 && y->range().lower <= 1e-3);
  QVERIFY(y->range().upper >= 0.064);
  // Explicit threshold overrides the comparisons' one; none over: no markers.
  plot.setData(results, std::nullopt, 1.0);
  QCOMPARE(plot.firstDriftMarkers(), (QList<int>{-1, -1}));
  QCOMPARE(plot.curveCount(), 2);
  QCOMPARE(plot.plot()->graph(0)->name(), QString("candidate"));

  // A bitwise-equal variant (all zero) is a gap on the log axis and named so in the legend.
  CompareFigures zero;
  zero.implSpec = "candidate:all=provider";
  QJsonObject object = compareObject(zero);
  QJsonArray steps;
  for (int s = 0; s < 3; ++s) {
    steps.append(QJsonObject{{"step", s}, {"video_rel_l2", 0.0}, {"audio_rel_l2", 0.0}});
  }
  object.insert("steps", steps);
  plot.setData({parseCompareObject("z", object)}, std::nullopt);
  QCOMPARE(plot.plot()->graph(0)->name(), QString("candidate:all=provider (bitwise equal)"));
  QVERIFY(std::isnan(plot.plot()->graph(0)->data()->at(1)->value));
}

void PlotsTest::variantsAreABandBehindTheCandidates() {
  QList<CompareResult> results = twoComparisons(6, 4);
  for (double psnr : {33.0, 37.0}) {
    CompareFigures v;
    v.frames = 6;
    v.steps = 4;
    v.implSpec = psnr < 35 ? "provider:attention=flash" : "provider:attention=efficient";
    v.psnrDb = psnr;
    results.append(parseCompareObject("v", compareObject(v)));
  }
  QVERIFY(results.at(2).isProviderVariant() && !results.at(1).isProviderVariant());
  auto bandGraphs = [](QCustomPlot* plot) {
    QList<QCPGraph*> band;
    for (int i = 0; i < plot->graphCount(); ++i) {
      if (plot->graph(i)->objectName() == "variantBand") band.append(plot->graph(i));
    }
    return band;
  };
  FrameMetricsPlot frames;
  frames.setResults(results);
  const QList<QCPGraph*> band = bandGraphs(frames.plot());
  QCOMPARE(band.size(), 4);  // lower and upper edge, PSNR and SSIM
  QCOMPARE(frames.plot()->graphCount(), 8);  // and the two candidates' curves, PSNR and SSIM
  // Drawn first (behind); PSNR at frame 2 spans the variants: 33 + 2 .. 37 + 2.
  QCOMPARE(frames.plot()->graph(0)->objectName(), QString("variantBand"));
  QCOMPARE(band.at(0)->data()->at(2)->value, 35.0);
  QCOMPARE(band.at(1)->data()->at(2)->value, 39.0);
  QCOMPARE(band.at(1)->channelFillGraph(), band.at(0));

  StepDriftPlot drift;
  drift.setData(results, std::nullopt);
  QCOMPARE(drift.curveCount(), 2);  // the candidates; the variants are the band
  QCOMPARE(bandGraphs(drift.plot()).size(), 4);
  QCOMPARE(drift.firstDriftMarkers().size(), 2);
}

void PlotsTest::plotsViewForwardsSeeksAndExportsPng() {
  QTemporaryDir dir;
  PlotsView view;
  view.resize(1200, 600);
  view.setSeedData("seed 1", twoComparisons(24, 5), std::nullopt);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  QSignalSpy seeks(&view, &PlotsView::seekRequested);
  emit view.framePlot()->seekRequested(7);
  QCOMPARE(seeks.count(), 1);
  QCOMPARE(seeks.at(0).at(0).toInt(), 7);
  view.setPlayhead(9);
  QCOMPARE(view.framePlot()->playhead(), 9);

  const QString file = dir.filePath("plots.png");
  QVERIFY(view.exportPng(file));
  const QImage image(file);
  QVERIFY(!image.isNull());
  QVERIFY(image.width() >= 1000);
  QVERIFY2(distinctColours(image) >= 8, "exported plot looks blank");
  QVERIFY(!view.exportPng(dir.filePath("missing-dir/plots.png")));
}

QTEST_MAIN(PlotsTest)
#include "plots_test.moc"
