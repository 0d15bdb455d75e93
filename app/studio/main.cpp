// h3parity-studio: the Qt workbench. Thin: parse the command line, build the main window.
//   h3parity-studio [--screenshot PNG] [--view review] [RUNS]
// --screenshot renders the window offscreen into PNG and exits (0 written, 2 not writable).
// --view review renders the review of RUNS' first candidate/provider seed instead (exit 2 when
// RUNS holds no such pair).
#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>
#include <QTextStream>

#include "core/common/error.h"
#include "ui/review/review_pair.h"
#include "ui/review/review_view.h"
#include "ui/widgets/main_window.h"

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("h3parity-studio"));
  QApplication::setOrganizationName(QStringLiteral("h3parity"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("h3parity studio: review and compare runs"));
  parser.addHelpOption();
  const QCommandLineOption screenshotOption(
      QStringLiteral("screenshot"), QStringLiteral("Render the main window to PNG FILE and exit."),
      QStringLiteral("FILE"));
  parser.addOption(screenshotOption);
  const QCommandLineOption viewOption(QStringLiteral("view"),
                                      QStringLiteral("The view to show: review."),
                                      QStringLiteral("VIEW"));
  parser.addOption(viewOption);
  parser.addPositionalArgument(QStringLiteral("RUNS"), QStringLiteral("Runs directory to open."),
                               QStringLiteral("[RUNS]"));
  parser.process(app);

  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    QTextStream(stderr) << "error: expected at most one runs directory, got " << positional.size()
                        << "\n";
    return 2;
  }

  if (parser.value(viewOption) == QStringLiteral("review")) {
    const auto pair = h3p::ui::findReviewPair(positional.value(0));
    if (pair.first.isEmpty()) {
      QTextStream(stderr) << "error: " << positional.value(0)
                          << ": no seed with decoded candidate and provider runs\n";
      return 2;
    }
    h3p::ui::ReviewView review;
    try {
      review.openPair(pair.first, pair.second);
    } catch (const h3p::Error& e) {
      QTextStream(stderr) << "error: " << e.what() << "\n";
      return 2;
    }
    review.resize(1600, 900);
    review.show();
    if (!parser.isSet(screenshotOption)) return QApplication::exec();
    review.seek(review.frameCount() / 2);
    QApplication::processEvents();
    const QString file = parser.value(screenshotOption);
    if (!review.grab().save(file, "PNG")) {
      QTextStream(stderr) << "error: " << file << ": cannot write the screenshot\n";
      return 2;
    }
    return 0;
  }

  h3p::ui::MainWindow window;
  if (!positional.isEmpty()) {
    window.openRunsDirectory(positional.front());
  }
  window.show();

  if (parser.isSet(screenshotOption)) {
    const QString file = parser.value(screenshotOption);
    QApplication::processEvents();
    const QPixmap pixmap = window.grab();
    if (pixmap.isNull() || !pixmap.save(file, "PNG")) {
      QTextStream(stderr) << "error: " << file << ": cannot write the screenshot\n";
      return 2;
    }
    return 0;
  }
  return QApplication::exec();
}
