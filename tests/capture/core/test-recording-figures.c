/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-recording-figures.c: a snapshot at a step end reads a process that
 * marks no steps (a DataLoader worker) only once the figures it was asked
 * for came (tide_capture_process_await_figures()).  The driver here is
 * the test: it answers the requests itself, as the recorder's connection
 * would, and notes what it was asked and when.  The stepping process is
 * the test's own, the worker a forked child that sleeps.
 */
#include "config.h"

#include "tide-capture-process-private.h"  /* classes_ns: when the worker was read */
#include "tide-recording.h"
#include "tide-test-util.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct
{
  char               *dir;
  TideRecording      *recording;
  TideCaptureProcess *main;
  TideCaptureProcess *worker;
  pid_t               worker_pid;
  GString            *log;          /* "figures await ..." */
  gboolean            answers;      /* the await finds the figures sent */
  gint64              asked_ns;
  gint64              read_before_answer; /* the worker's last reading when it awaited */
  gint64              await_left_ns;  /* how long the await could wait */
} Job;

static gboolean
answer_request (TideCaptureRequest request,
                gint64             value,
                gpointer           user_data)
{
  Job *job = user_data;

  switch (request)
    {
    case TIDE_CAPTURE_REQUEST_FIGURES:
      g_string_append (job->log, "figures ");
      job->asked_ns = value;
      return TRUE;
    case TIDE_CAPTURE_AWAIT_FIGURES:
      g_string_append (job->log, "await ");
      job->read_before_answer = job->worker->classes_ns;
      job->await_left_ns = value - tide_capture_now_ns ();
      if (job->answers)
        tide_capture_process_figures_sent (job->worker, job->asked_ns);
      return tide_capture_process_has_figures (job->worker);
    case TIDE_CAPTURE_REQUEST_STEP_WAIT:
    default:
      return TRUE;
    }
}

static void
job_start (Job *job)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *output = NULL;
  TideProcessRow row;

  job->dir = tide_test_make_dir ("tide-recording-figures");
  output = g_build_filename (job->dir, "figures.tide", NULL);
  job->recording = tide_recording_new (output, job->dir, &error);
  g_assert_no_error (error);
  tide_recording_set_sync_steps (job->recording, TRUE);
  job->log = g_string_new (NULL);

  job->worker_pid = fork ();
  g_assert_cmpint (job->worker_pid, >=, 0);
  if (job->worker_pid == 0)
    {
      /* Gone with the test, also where an assertion ends it. */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      pause ();
      _exit (0);
    }
  row = (TideProcessRow) { .pid = getpid (), .ppid = getppid (),
                           .start_ns = tide_capture_now_ns (), .exe = "main", .cmdline = "main" };
  job->main = tide_capture_process_new (job->recording, &row);
  row = (TideProcessRow) { .pid = job->worker_pid, .ppid = getpid (),
                           .parent_id = tide_capture_process_get_id (job->main),
                           .start_ns = tide_capture_now_ns (), .exe = "worker",
                           .cmdline = "worker" };
  job->worker = tide_capture_process_new (job->recording, &row);
  tide_capture_process_set_requests (job->worker, answer_request, job);
}

static void
job_finish (Job *job)
{
  g_autoptr(GError) error = NULL;

  kill (job->worker_pid, SIGKILL);
  waitpid (job->worker_pid, NULL, 0);
  g_assert_true (tide_recording_finish (job->recording, tide_capture_now_ns (), &error));
  g_assert_no_error (error);
  tide_recording_free (job->recording);
  g_string_free (job->log, TRUE);
  tide_test_remove_dir (job->dir);
  g_free (job->dir);
}

/* A step end of the main process, read with the whole job's snapshot
 * (--sync-steps); its time. */
static gint64
step (Job *job)
{
  gint64 ts_ns = tide_capture_now_ns ();

  tide_capture_process_step (job->main, ts_ns, "", 0);
  return ts_ns;
}

/* The worker is asked for its figures as of the step end, and read at it
 * only after they came: the reading, the figures and the blocks it sent
 * before them are then of one moment.  With --sync-steps the step waits
 * as long as a loaded machine may delay an answer. */
static void
test_read_after_answer (void)
{
  Job job = { .answers = TRUE };
  gint64 ts_ns;

  job_start (&job);
  ts_ns = step (&job);
  g_assert_cmpstr (job.log->str, ==, "figures await ");
  g_assert_cmpint (job.asked_ns, ==, ts_ns);
  g_assert_cmpint (job.read_before_answer, !=, ts_ns);
  g_assert_cmpint (job.worker->classes_ns, ==, ts_ns);
  g_assert_cmpint (job.await_left_ns, >, 500 * G_GINT64_CONSTANT (1000000));
  job_finish (&job);
}

/* A worker that does not answer is read all the same when the wait runs
 * out, and not waited for again until an answer of its came: one that
 * stopped (SIGSTOP, a debugger) costs one wait, not one at each step. */
static void
test_silent_worker (void)
{
  Job job = { .answers = FALSE };
  gint64 ts_ns;

  job_start (&job);
  ts_ns = step (&job);
  g_assert_cmpstr (job.log->str, ==, "figures await ");
  g_assert_cmpint (job.worker->classes_ns, ==, ts_ns);

  g_string_truncate (job.log, 0);
  ts_ns = step (&job);
  g_assert_cmpstr (job.log->str, ==, "figures ");
  g_assert_cmpint (job.worker->classes_ns, ==, ts_ns);

  /* Its answer to the last request comes late: the next is awaited. */
  tide_capture_process_figures_sent (job.worker, job.asked_ns);
  g_string_truncate (job.log, 0);
  job.answers = TRUE;
  step (&job);
  g_assert_cmpstr (job.log->str, ==, "figures await ");
  job_finish (&job);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/recording/figures/read-after-answer", test_read_after_answer);
  g_test_add_func ("/capture/recording/figures/silent-worker", test_silent_worker);
  return g_test_run ();
}
