// Geometry: frame alignment to 17n+5, latent frame and audio latent counts, request
// validation and the duration window.
#include <QtTest>

#include "core/common/error.h"
#include "core/sampling/geometry.h"

using namespace h3p::sampling;

class TestGeometry : public QObject {
  Q_OBJECT

 private slots:
  void alignSnapsUp();
  void latentFrames();
  void audioLatentsRoundHalfEven();
  void fullSizeRequest();
  void shortClipWarnsUnlessEnforced();
  void snappedFramesWarn();
  void invalidRequestsRefused();
};

void TestGeometry::alignSnapsUp() {
  QCOMPARE(align_num_frames(1), 5);
  QCOMPARE(align_num_frames(5), 5);
  QCOMPARE(align_num_frames(6), 22);
  QCOMPARE(align_num_frames(22), 22);
  QCOMPARE(align_num_frames(23), 39);
  QCOMPARE(align_num_frames(120), 124);
  QCOMPARE(align_num_frames(124), 124);
  QCOMPARE(align_num_frames(346), 362);
  for (int f = 1; f < 400; ++f) {
    const int a = align_num_frames(f);
    QVERIFY(a >= f && a < f + 17);
    QCOMPARE(a % 17, 5);
  }
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, align_num_frames(0));
}

void TestGeometry::latentFrames() {
  QCOMPARE(video_latent_num_frames(5), 2);
  QCOMPARE(video_latent_num_frames(22), 7);
  QCOMPARE(video_latent_num_frames(124), 37);
  QCOMPARE(video_latent_num_frames(362), 107);
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, video_latent_num_frames(123));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, video_latent_num_frames(0));
}

void TestGeometry::audioLatentsRoundHalfEven() {
  QCOMPARE(audio_latent_num_frames(124), 207);  // 124/24*40 = 206.67
  QCOMPARE(audio_latent_num_frames(22), 37);    // 36.67
  QCOMPARE(audio_latent_num_frames(5), 8);      // 8.33
  QCOMPARE(audio_latent_num_frames(120), 200);
  // Python's round(): ties go to the even neighbour (2.5 -> 2, 7.5 -> 8).
  QCOMPARE(audio_latent_num_frames(1, 16.0), 2);
  QCOMPARE(audio_latent_num_frames(3, 16.0), 8);
  QCOMPARE(audio_latent_num_frames(5, 16.0), 12);
}

void TestGeometry::fullSizeRequest() {
  const Geometry g = resolve_geometry(124, 768, 1344, 24, true);
  QCOMPARE(g.frames, 124);
  QCOMPARE(g.height, 768);
  QCOMPARE(g.width, 1344);
  QCOMPARE(g.fps, 24);
  QCOMPARE(g.num_latent_frames, 37);
  QCOMPARE(g.latent_height, 48);
  QCOMPARE(g.latent_width, 84);
  QCOMPARE(g.num_audio_latents, 207);
  QVERIFY(g.warnings.empty());
  QCOMPARE(QString::fromStdString(g.describe()),
           QStringLiteral("frames=124 height=768 width=1344 fps=24 latent=37x48x84 "
                          "audio_latents=207"));
}

void TestGeometry::shortClipWarnsUnlessEnforced() {
  const Geometry g = resolve_geometry(22, 64, 96, 24);
  QCOMPARE(g.num_latent_frames, 7);
  QCOMPARE(g.latent_height, 4);
  QCOMPARE(g.latent_width, 6);
  QCOMPARE(g.num_audio_latents, 37);
  QCOMPARE(g.warnings.size(), std::size_t{1});
  QVERIFY(g.warnings[0].find("5 to 15 seconds") != std::string::npos);
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(22, 64, 96, 24, true));
  // 362 frames = 15.08 s at 24 fps: outside the window after alignment.
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(346, 768, 1344, 24, true));
  QCOMPARE(resolve_geometry(346, 768, 1344, 24).frames, 362);
}

void TestGeometry::snappedFramesWarn() {
  const Geometry g = resolve_geometry(120, 768, 1344, 24, true);
  QCOMPARE(g.frames, 124);
  QCOMPARE(g.warnings.size(), std::size_t{1});
  QVERIFY(g.warnings[0].find("120 up to 124") != std::string::npos);
}

void TestGeometry::invalidRequestsRefused() {
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(124, 770, 1344, 24));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(124, 768, 1340, 24));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(124, 0, 1344, 24));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(124, -32, 1344, 24));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(0, 768, 1344, 24));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, resolve_geometry(124, 768, 1344, 0));
}

QTEST_APPLESS_MAIN(TestGeometry)
#include "test_geometry.moc"
