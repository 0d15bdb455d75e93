// Jobs: the CLI run as a child process with JSON progress parsed from stderr, the log, exit
// codes, cancel by SIGTERM, command lines that re-run, and the jobs controller and model.
// The CLI is stood in for by fake_cli.sh.
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/controllers/job.h"
#include "ui/controllers/jobs_controller.h"
#include "ui/models/jobs_model.h"
#include "ui/widgets/jobs_panel.h"

using h3p::ui::Job;
using h3p::ui::JobsController;
using h3p::ui::JobsModel;

namespace {

const QString kFakeCli = QStringLiteral(H3P_SOURCE_DIR "/tests/ui/fake_cli.sh");

// Sets environment variables for the life of a test and restores them.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, QByteArray>> vars) {
    for (const auto& [name, value] : vars) {
      m_names.append(name);
      qputenv(name, value);
    }
  }
  ~ScopedEnv() {
    for (const char* name : m_names) qunsetenv(name);
  }

 private:
  QList<const char*> m_names;
};

bool waitFinished(Job* job) {
  if (job->state() != Job::State::Running && job->state() != Job::State::Pending) return true;
  QSignalSpy spy(job, &Job::finished);
  return spy.wait(30000);
}

}  // namespace

class JobsTest : public QObject {
  Q_OBJECT

 private slots:
  void progressLinesAreParsedAndKeptOutOfTheLog();
  void nonZeroExitFails();
  void cancelSendsSigterm();
  void missingProgramFails();
  void commandLineRoundTrips();
  void progressLineParsingRejectsOtherLines();
  void controllerRerunsFromEditedCommandLine();
  void locateCliHonoursEnvironment();
  void panelShowsLogCancelsAndReruns();
  void realCliRunsAsJob();
};

void JobsTest::progressLinesAreParsedAndKeptOutOfTheLog() {
  const int steps = 2 + QRandomGenerator::global()->bounded(5);
  ScopedEnv env{{"FAKE_STEPS", QByteArray::number(steps)}};
  Job job(Job::Kind::Compare, kFakeCli, {"compare", "--candidate", "a b", "--provider", "p"});
  QSignalSpy progress(&job, &Job::progressChanged);
  QSignalSpy states(&job, &Job::stateChanged);
  job.start();
  QCOMPARE(job.state(), Job::State::Running);
  QVERIFY(waitFinished(&job));
  QCOMPARE(job.state(), Job::State::Succeeded);
  QCOMPARE(job.exitCode(), 0);
  QCOMPARE(progress.count(), steps + 1);
  QVERIFY(qAbs(progress.at(1).at(0).toDouble() - 1.0 / steps) < 1e-3);  // printed with 4 digits
  QCOMPARE(progress.last().at(0).toDouble(), 1.0);
  QCOMPARE(progress.last().at(1).toString(), QString("done"));
  QCOMPARE(job.fraction(), 1.0);
  QCOMPARE(job.detail(), QString("done"));
  QVERIFY2(job.log().contains("fake compare: --candidate a b --provider p"), qPrintable(job.log()));
  QVERIFY(job.log().contains("a plain stderr line"));
  QVERIFY(job.log().contains("finished compare"));
  QVERIFY2(!job.log().contains("\"fraction\""), qPrintable(job.log()));
  QCOMPARE(states.count(), 2);  // running, succeeded
  QCOMPARE(job.title(), QString("compare"));
}

void JobsTest::nonZeroExitFails() {
  ScopedEnv env{{"FAKE_EXIT", "3"}};
  Job job(Job::Kind::Generate, kFakeCli, {"generate"});
  QSignalSpy finished(&job, &Job::finished);
  job.start();
  QVERIFY(waitFinished(&job));
  QCOMPARE(finished.count(), 1);
  QCOMPARE(job.state(), Job::State::Failed);
  QCOMPARE(job.exitCode(), 3);
  QVERIFY(job.log().contains("exit code 3"));
}

void JobsTest::cancelSendsSigterm() {
  ScopedEnv env{{"FAKE_STEPS", "1000"}, {"FAKE_SLEEP", "0.05"}};
  Job job(Job::Kind::Ablate, kFakeCli, {"ablate"});
  QSignalSpy progress(&job, &Job::progressChanged);
  job.start();
  QVERIFY(progress.wait(30000));
  job.cancel();
  QVERIFY(waitFinished(&job));
  QCOMPARE(job.state(), Job::State::Cancelled);
  // The fake CLI's TERM trap ran: the signal was SIGTERM, not SIGKILL.
  QVERIFY2(job.log().contains("terminated by SIGTERM"), qPrintable(job.log()));
  QVERIFY(job.fraction() < 1.0);
}

void JobsTest::missingProgramFails() {
  QTemporaryDir dir;
  Job job(Job::Kind::Other, dir.filePath("no-such-cli"), {"compare"});
  QSignalSpy finished(&job, &Job::finished);
  job.start();
  QVERIFY(waitFinished(&job));
  QCOMPARE(job.state(), Job::State::Failed);
  QVERIFY2(job.log().contains("cannot start"), qPrintable(job.log()));
}

void JobsTest::commandLineRoundTrips() {
  const QStringList arguments{
      "ablate",         "--candidate", "/runs with space/seed-1", "--groups",
      "attention,norm", "--json",      "it's $HOME \"q\"",        ""};
  Job job(Job::Kind::Ablate, "/opt/h3p bin/h3parity", arguments);
  const QString line = job.commandLine();
  QVERIFY2(line.contains("--progress json"), qPrintable(line));
  const QStringList words = Job::splitCommandLine(line);
  QCOMPARE(words, QStringList{"/opt/h3p bin/h3parity"} + arguments);
  QCOMPARE(job.processArguments().mid(0, 2), (QStringList{"--progress", "json"}));
  // Hand-written lines parse too: double quotes, backslashes, --progress=json dropped.
  QCOMPARE(Job::splitCommandLine(R"(h3parity --progress=json compare --json "a \"b\"" c\ d)"),
           (QStringList{"h3parity", "compare", "--json", "a \"b\"", "c d"}));
}

void JobsTest::progressLineParsingRejectsOtherLines() {
  Job job(Job::Kind::Other, kFakeCli, {});
  QSignalSpy progress(&job, &Job::progressChanged);
  QVERIFY(!job.parseProgressLine("error: something\n"));
  QVERIFY(!job.parseProgressLine("{\"not\": \"progress\"}\n"));
  QVERIFY(!job.parseProgressLine("{\"progress\": \"x\", \"fraction\": \"half\"}"));
  QVERIFY(!job.parseProgressLine("{broken"));
  QCOMPARE(progress.count(), 0);
  QVERIFY(job.parseProgressLine("{\"progress\":\"x\",\"fraction\":1.7,\"detail\":\"d\"}\n"));
  QCOMPARE(job.fraction(), 1.0);  // clamped
  QCOMPARE(job.detail(), QString("d"));
}

void JobsTest::controllerRerunsFromEditedCommandLine() {
  QTemporaryDir dir;
  JobsController controller;
  controller.setCliPath(kFakeCli);
  QSignalSpy started(&controller, &JobsController::jobStarted);
  QSignalSpy finished(&controller, &JobsController::jobFinished);
  const QString out = dir.filePath("sweep.json");
  Job* first = controller.start(Job::Kind::Ablate, {"ablate", "--step", "2", "--json", out}, out);
  QCOMPARE(started.count(), 1);
  QVERIFY(waitFinished(first));
  QCOMPARE(first->state(), Job::State::Succeeded);
  QVERIFY(QFileInfo::exists(out));
  QCOMPARE(finished.count(), 1);

  JobsModel* model = controller.model();
  QCOMPARE(model->rowCount(), 1);
  QCOMPARE(model->index(0, JobsModel::StateColumn).data().toString(), QString("succeeded"));
  QCOMPARE(model->index(0, JobsModel::ProgressColumn).data().toString(), QString("100 %"));
  QCOMPARE(model->index(0, JobsModel::CommandColumn).data().toString(), first->commandLine());

  QString edited = first->commandLine();
  edited.replace("--step 2", "--step 3");
  Job* second = controller.rerun(first, edited);
  QVERIFY(second != first);
  QCOMPARE(second->kind(), Job::Kind::Ablate);
  QCOMPARE(second->resultFile(), out);
  QVERIFY(waitFinished(second));
  QCOMPARE(second->state(), Job::State::Succeeded);
  QVERIFY2(second->log().contains("--step 3"), qPrintable(second->log()));
  QCOMPARE(model->rowCount(), 2);
  QCOMPARE(controller.jobs().size(), 2);
  QCOMPARE(finished.count(), 2);
}

void JobsTest::locateCliHonoursEnvironment() {
  ScopedEnv env{{"H3P_CLI", "/some/where/h3parity"}};
  QCOMPARE(JobsController::locateCli(), QString("/some/where/h3parity"));
}

void JobsTest::panelShowsLogCancelsAndReruns() {
  ScopedEnv env{{"FAKE_STEPS", "1000"}, {"FAKE_SLEEP", "0.05"}};
  JobsController controller;
  controller.setCliPath(kFakeCli);
  h3p::ui::JobsPanel panel;
  panel.setModel(controller.model());
  connect(&panel, &h3p::ui::JobsPanel::cancelRequested, [](Job* job) { job->cancel(); });
  connect(&panel, &h3p::ui::JobsPanel::rerunRequested,
          [&controller](Job* job, const QString& line) { controller.rerun(job, line); });
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));

  Job* job = controller.start(Job::Kind::Generate, {"generate", "--seed", "4"});
  panel.selectJob(job);
  QCOMPARE(panel.selectedJob(), job);
  auto* cancel = panel.findChild<QPushButton*>("jobCancelButton");
  auto* rerun = panel.findChild<QPushButton*>("jobRerunButton");
  QVERIFY(cancel->isEnabled());
  QVERIFY(!rerun->isEnabled());
  QCOMPARE(panel.commandLineEdit()->text(), job->commandLine());
  QSignalSpy progress(job, &Job::progressChanged);
  QVERIFY(progress.wait(30000));
  QTRY_VERIFY(panel.logView()->toPlainText().contains("fake generate: --seed 4"));

  QTest::mouseClick(cancel, Qt::LeftButton);
  QVERIFY(waitFinished(job));
  QCOMPARE(job->state(), Job::State::Cancelled);
  QVERIFY(!cancel->isEnabled());
  QVERIFY(rerun->isEnabled());
  QTRY_VERIFY(panel.logView()->toPlainText().contains("cancelled"));

  // Re-run from an edited command line.
  qputenv("FAKE_STEPS", "2");
  qunsetenv("FAKE_SLEEP");
  panel.commandLineEdit()->setText(job->commandLine().replace("--seed 4", "--seed 5"));
  QTest::mouseClick(rerun, Qt::LeftButton);
  QCOMPARE(controller.jobs().size(), 2);
  Job* second = controller.jobs().at(1);
  QVERIFY(waitFinished(second));
  QCOMPARE(second->state(), Job::State::Succeeded);
  QVERIFY(second->log().contains("fake generate: --seed 5"));
  QCOMPARE(panel.table()->model()->rowCount(), 2);
}

// Run by studio_views_screenshot.sh with H3P_CLI (the real h3parity) and H3P_JOBS_RUNS (runs
// of the short demo contract: provider and candidate of seed 42); skipped otherwise.
void JobsTest::realCliRunsAsJob() {
  const QString runs = qEnvironmentVariable("H3P_JOBS_RUNS");
  if (runs.isEmpty() || qEnvironmentVariableIsEmpty("H3P_CLI")) {
    QSKIP("needs H3P_CLI and H3P_JOBS_RUNS (set by the studio_views_screenshot e2e test)");
  }
  QTemporaryDir dir;
  JobsController controller;
  QCOMPARE(controller.cliPath(), qEnvironmentVariable("H3P_CLI"));
  const QString out = dir.filePath("sweep.json");
  Job* job = controller.start(
      Job::Kind::Ablate,
      {"ablate", "--candidate", runs + "/demo/candidate/seed-42", "--provider",
       runs + "/demo/provider/seed-42", "--step", "1", "--groups", "attention,norm", "--json", out},
      out);
  QSignalSpy progress(job, &Job::progressChanged);
  QVERIFY(waitFinished(job));
  QVERIFY2(job->state() == Job::State::Succeeded, qPrintable(job->log()));
  // provider, candidate, two groups, interim, all, done: one update each.
  QVERIFY2(progress.count() >= 6, qPrintable(QString::number(progress.count())));
  QCOMPARE(job->fraction(), 1.0);
  QCOMPARE(job->detail(), QString("done"));
  QVERIFY(progress.at(progress.count() - 2).at(1).toString().contains("provider"));
  QVERIFY2(!job->log().contains("\"fraction\""), qPrintable(job->log()));
  QVERIFY(job->log().contains("candidate:attention=provider"));  // the CLI's table
  QVERIFY(QFileInfo(out).size() > 0);

  // A bad request fails with the CLI's exit code 2 and its message in the log.
  Job* bad = controller.start(Job::Kind::Compare, {"compare", "--candidate", dir.filePath("none"),
                                                   "--provider", dir.filePath("none")});
  QVERIFY(waitFinished(bad));
  QCOMPARE(bad->state(), Job::State::Failed);
  QCOMPARE(bad->exitCode(), 2);
  QVERIFY2(bad->log().contains("error"), qPrintable(bad->log()));
}

QTEST_MAIN(JobsTest)
#include "jobs_test.moc"
