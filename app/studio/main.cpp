// h3parity-studio: the Qt workbench. Thin: parse the command line, build the main window.
//   h3parity-studio [--screenshot PNG [--view summary|review|plots|ablation]] [RUNS]
// --screenshot renders the window with the chosen view (first seed selected) into PNG and exits
// (0 written, 2 bad arguments or not writable).
#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>
#include <QTextStream>

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

  h3p::ui::MainWindow window;
  const QString view = parser.value(viewOption);
  if (!window.showView(view)) {
    QTextStream(stderr) << "error: --view: must be summary, review, plots or ablation, got '"
                        << view << "'\n";
    return 2;
  }
  window.setRecentListEnabled(!parser.isSet(screenshotOption));
  if (!positional.isEmpty()) {
    window.openRunsDirectory(positional.front());
    window.selectFirstSeed();
  }
  window.show();

  if (parser.isSet(screenshotOption)) {
    const QString file = parser.value(screenshotOption);
    window.resize(1600, 1000);
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
