#include "ui/controllers/job.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <algorithm>

namespace h3p::ui {

namespace {

QString shellQuote(const QString& word) {
  static const QString safe =
      QStringLiteral("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_-+=:,./");
  if (!word.isEmpty() &&
      std::all_of(word.begin(), word.end(), [](QChar c) { return safe.contains(c); })) {
    return word;
  }
  QString quoted = word;
  quoted.replace(QLatin1String("'"), QLatin1String("'\\''"));
  return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

// Splits a POSIX-shell-like line: single quotes literal, double quotes with \" \\ escapes,
// backslash escapes outside quotes, whitespace separates words.
QStringList splitShellWords(const QString& line) {
  QStringList words;
  QString word;
  bool inWord = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line.at(i);
    if (c == QLatin1Char('\'')) {
      inWord = true;
      for (++i; i < line.size() && line.at(i) != QLatin1Char('\''); ++i) word += line.at(i);
    } else if (c == QLatin1Char('"')) {
      inWord = true;
      for (++i; i < line.size() && line.at(i) != QLatin1Char('"'); ++i) {
        if (line.at(i) == QLatin1Char('\\') && i + 1 < line.size() &&
            (line.at(i + 1) == QLatin1Char('"') || line.at(i + 1) == QLatin1Char('\\'))) {
          ++i;
        }
        word += line.at(i);
      }
    } else if (c == QLatin1Char('\\') && i + 1 < line.size()) {
      inWord = true;
      word += line.at(++i);
    } else if (c.isSpace()) {
      if (inWord) words.append(word);
      word.clear();
      inWord = false;
    } else {
      inWord = true;
      word += c;
    }
  }
  if (inWord) words.append(word);
  return words;
}

}  // namespace

Job::Job(Kind kind, QString program, QStringList arguments, QString resultFile, QObject* parent)
    : QObject(parent),
      m_kind(kind),
      m_program(std::move(program)),
      m_arguments(std::move(arguments)),
      m_resultFile(std::move(resultFile)) {}

Job::~Job() {
  if (m_process != nullptr && m_process->state() != QProcess::NotRunning) {
    m_process->disconnect(this);
    m_process->kill();
    m_process->waitForFinished(2000);
  }
}

QStringList Job::processArguments() const {
  return QStringList{QStringLiteral("--progress"), QStringLiteral("json")} + m_arguments;
}

QString Job::commandLine() const {
  QStringList words{shellQuote(m_program)};
  for (const QString& argument : processArguments()) {
    words.append(shellQuote(argument));
  }
  return words.join(QLatin1Char(' '));
}

QString Job::title() const {
  return m_arguments.isEmpty() ? QFileInfo(m_program).fileName() : m_arguments.front();
}

QStringList Job::splitCommandLine(const QString& commandLine) {
  QStringList words = splitShellWords(commandLine);
  for (int i = 1; i + 1 < words.size(); ++i) {
    if (words.at(i) == QLatin1String("--progress")) {
      words.remove(i, 2);
      break;
    }
    if (words.at(i).startsWith(QLatin1String("--progress="))) {
      words.removeAt(i);
      break;
    }
  }
  return words;
}

void Job::start() {
  if (m_state != State::Pending) {
    return;
  }
  m_process = new QProcess(this);
  m_process->setProgram(m_program);
  m_process->setArguments(processArguments());
  connect(m_process, &QProcess::readyReadStandardOutput, this,
          [this] { drain(QProcess::StandardOutput, m_stdoutBuffer, false); });
  connect(m_process, &QProcess::readyReadStandardError, this,
          [this] { drain(QProcess::StandardError, m_stderrBuffer, false); });
  connect(m_process, &QProcess::finished, this, &Job::onFinished);
  connect(m_process, &QProcess::errorOccurred, this, &Job::onError);
  appendLog(QStringLiteral("$ ") + commandLine() + QLatin1Char('\n'));
  setState(State::Running);
  m_process->start();
}

void Job::cancel(int killAfterMs) {
  if (m_state != State::Running || m_process == nullptr) {
    return;
  }
  m_cancelRequested = true;
  appendLog(QStringLiteral("cancelling (SIGTERM)\n"));
  m_process->terminate();
  if (m_killTimer == nullptr) {
    m_killTimer = new QTimer(this);
    m_killTimer->setSingleShot(true);
    connect(m_killTimer, &QTimer::timeout, this, [this] {
      if (m_process != nullptr && m_process->state() != QProcess::NotRunning) {
        appendLog(QStringLiteral("still running: SIGKILL\n"));
        m_process->kill();
      }
    });
  }
  m_killTimer->start(killAfterMs);
}

bool Job::parseProgressLine(const QByteArray& line) {
  const QByteArray trimmed = line.trimmed();
  if (!trimmed.startsWith('{')) {
    return false;
  }
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(trimmed, &error);
  if (error.error != QJsonParseError::NoError || !doc.isObject()) {
    return false;
  }
  const QJsonObject object = doc.object();
  if (!object.contains(QStringLiteral("progress")) ||
      !object.value(QStringLiteral("fraction")).isDouble()) {
    return false;
  }
  m_fraction = std::clamp(object.value(QStringLiteral("fraction")).toDouble(), 0.0, 1.0);
  m_detail = object.value(QStringLiteral("detail")).toString();
  emit progressChanged(m_fraction, m_detail);
  return true;
}

void Job::drain(QProcess::ProcessChannel channel, QByteArray& buffer, bool flushAll) {
  if (m_process == nullptr) {
    return;
  }
  m_process->setReadChannel(channel);
  buffer += m_process->readAll();
  QString text;
  qsizetype newline;
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const QByteArray line = buffer.left(newline + 1);
    buffer.remove(0, newline + 1);
    if (channel == QProcess::StandardError && parseProgressLine(line)) {
      continue;
    }
    text += QString::fromLocal8Bit(line);
  }
  if (flushAll && !buffer.isEmpty()) {
    if (channel != QProcess::StandardError || !parseProgressLine(buffer)) {
      text += QString::fromLocal8Bit(buffer) + QLatin1Char('\n');
    }
    buffer.clear();
  }
  if (!text.isEmpty()) {
    appendLog(text);
  }
}

void Job::onFinished(int exitCode, QProcess::ExitStatus status) {
  drain(QProcess::StandardOutput, m_stdoutBuffer, true);
  drain(QProcess::StandardError, m_stderrBuffer, true);
  if (m_killTimer != nullptr) {
    m_killTimer->stop();
  }
  m_exitCode = status == QProcess::NormalExit ? exitCode : -1;
  if (m_cancelRequested) {
    appendLog(QStringLiteral("cancelled\n"));
    setState(State::Cancelled);
  } else if (status == QProcess::NormalExit && exitCode == 0) {
    setState(State::Succeeded);
  } else {
    appendLog(status == QProcess::NormalExit ? QStringLiteral("exit code %1\n").arg(exitCode)
                                             : QStringLiteral("crashed\n"));
    setState(State::Failed);
  }
  emit finished();
}

void Job::onError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart) {
    return;  // crashes arrive through finished()
  }
  appendLog(m_program + QStringLiteral(": cannot start: ") + m_process->errorString() +
            QLatin1Char('\n'));
  setState(State::Failed);
  emit finished();
}

void Job::setState(State state) {
  if (m_state == state) {
    return;
  }
  m_state = state;
  emit stateChanged(state);
}

void Job::appendLog(const QString& text) {
  m_log += text;
  emit logAppended(text);
}

}  // namespace h3p::ui
