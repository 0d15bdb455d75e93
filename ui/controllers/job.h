#pragma once

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

class QTimer;

namespace h3p::ui {

// One long task run as a child process of the `h3parity` CLI (a crash or OOM in a kernel
// cannot take the workbench down). The job adds `--progress json` in front of the subcommand,
// parses the JSON progress lines the CLI writes on stderr, keeps everything else as the log,
// and can be cancelled (SIGTERM, then SIGKILL after a grace period) and re-run from its command
// line. Lives on the UI thread; signals are emitted from the event loop.
class Job : public QObject {
  Q_OBJECT

 public:
  // What the job does; decides how the workbench uses its result file.
  enum class Kind { Generate, Compare, Ablate, Drift, Other };

  // Life cycle; a job is started once (re-running makes a new Job).
  enum class State {
    Pending,    // created, not started
    Running,    // the process is running
    Succeeded,  // exited with code 0
    Failed,     // exited non-zero, crashed, or could not start
    Cancelled,  // cancel() was called while it ran
  };
  Q_ENUM(State)

  // program: the CLI executable; arguments: the subcommand and its options (without
  // --progress, which the job adds). resultFile: a file the command writes (its --json), or empty.
  Job(Kind kind, QString program, QStringList arguments, QString resultFile = {},
      QObject* parent = nullptr);
  ~Job() override;

  Kind kind() const { return m_kind; }
  State state() const { return m_state; }
  QString program() const { return m_program; }
  // The full argument list passed to the process (with --progress json).
  QStringList processArguments() const;
  // The command line as one shell-quoted string (what re-running parses back).
  QString commandLine() const;
  QString resultFile() const { return m_resultFile; }
  // Latest progress fraction in [0, 1] and its detail ("step 12/49").
  double fraction() const { return m_fraction; }
  QString detail() const { return m_detail; }
  // Everything the process wrote that is not a progress line, stdout and stderr interleaved.
  QString log() const { return m_log; }
  int exitCode() const { return m_exitCode; }
  // Short name for lists: "ablate", "compare", ...
  QString title() const;

  // Starts the process; a job starts once (later calls are ignored).
  void start();
  // Asks a running job to stop: SIGTERM now, SIGKILL after killAfterMs if it is still running.
  void cancel(int killAfterMs = 5000);

  // Parses one line of the CLI's stderr; true (and updates the progress) when it is a JSON
  // progress line {"progress", "fraction", "detail", "elapsed_s"}.
  bool parseProgressLine(const QByteArray& line);

  // Splits a command line as commandLine() writes it back into program and arguments, dropping
  // "--progress json" so that the job re-adds it.
  static QStringList splitCommandLine(const QString& commandLine);

 signals:
  void stateChanged(h3p::ui::Job::State state);
  void progressChanged(double fraction, const QString& detail);
  void logAppended(const QString& text);
  // The job ended (succeeded, failed or cancelled).
  void finished();

 private:
  void setState(State state);
  void appendLog(const QString& text);
  void drain(QProcess::ProcessChannel channel, QByteArray& buffer, bool flushAll);
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);

  Kind m_kind;
  QString m_program;
  QStringList m_arguments;
  QString m_resultFile;
  QProcess* m_process = nullptr;
  QTimer* m_killTimer = nullptr;
  State m_state = State::Pending;
  bool m_cancelRequested = false;
  double m_fraction = 0;
  QString m_detail;
  QString m_log;
  int m_exitCode = -1;
  QByteArray m_stdoutBuffer, m_stderrBuffer;
};

}  // namespace h3p::ui
