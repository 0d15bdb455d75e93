// h3parity-studio: the Qt workbench. Thin: parse the command line, build the main window.
//   h3parity-studio [--screenshot PNG] [RUNS]
// --screenshot renders the window offscreen into PNG and exits (0 written, 2 not writable).
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
