// h3parity-studio: the Qt workbench. Thin: parse the command line, build the main window and
// plug the review view into it.
//   h3parity-studio [--screenshot PNG] [--view summary|review|plots|ablation] [RUNS]
// --screenshot renders the window with the chosen view (first seed selected; the review in the
// middle of the clip) into PNG and exits (0 written, 2 bad arguments, not writable, or --view
// review with no seed holding decoded candidate and provider runs).
#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
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
  const QCommandLineOption viewOption(
      QStringLiteral("view"),
      QStringLiteral("View to show: summary, review, plots or ablation (default summary)."),
      QStringLiteral("VIEW"), QStringLiteral("summary"));
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
  const bool screenshot = parser.isSet(screenshotOption);
  const QString view = parser.value(viewOption);
  if (screenshot && view == QStringLiteral("review") &&
      h3p::ui::findReviewPair(positional.value(0)).first.isEmpty()) {
    QTextStream(stderr) << "error: " << positional.value(0)
                        << ": no seed with decoded candidate and provider runs\n";
    return 2;
  }

  h3p::ui::MainWindow window;
  auto* review = new h3p::ui::ReviewView;
  window.setReviewView(review);  // connects the plots' seekRequested to review->seek
  QString reviewError;
  QObject::connect(&window, &h3p::ui::MainWindow::pairSelected, review,
                   [&](const QString& candidate, const QString& provider) {
                     try {
                       review->openPair(candidate, provider);
                       reviewError.clear();
                     } catch (const h3p::Error& e) {
                       reviewError = QString::fromUtf8(e.what());
                       if (!screenshot) QMessageBox::warning(&window, QStringLiteral("Review"), reviewError);
                     }
                   });
  if (!window.showView(view)) {
    QTextStream(stderr) << "error: --view: must be summary, review, plots or ablation, got '"
                        << view << "'\n";
    return 2;
  }
  window.setRecentListEnabled(!screenshot);
  if (!positional.isEmpty()) {
    window.openRunsDirectory(positional.front());
    window.selectFirstSeed();
  }
  window.show();

  if (screenshot) {
    if (!reviewError.isEmpty() && view == QStringLiteral("review")) {
      QTextStream(stderr) << "error: " << reviewError << "\n";
      return 2;
    }
    const QString file = parser.value(screenshotOption);
    window.resize(1600, 1000);
    if (review->frameCount() > 0) review->seek(review->frameCount() / 2);
    QApplication::processEvents();
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
