/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record` end to end (test-record.c): exits, signals and deaths, of the target and
 * of the recorder; the report command on bad input.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TIDE_HAVE_RENDER
#include "tide-test-png.h"
#endif

#include "preload-target.h"
#include "tide-plumbing.h"
#include "tide-report.h"
#include "tide-process-end.h"
#include "tide-schema.h"
#include "tide-test-record.h"
#include "tide-test-util.h"
#include "tide-trace.h"

/* ---- exits, signals, deaths ------------------------------------------------- */

static void
test_exit_status (Fixture       *f,
                  gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_auto(Run) missing = { 0 };

  record (f, NULL, "/bin/sh", "-c", "echo out; exit 3", &run);
  g_assert_cmpint (run.status, ==, 3);
  g_assert_cmpstr (run.out, ==, "out\n");
  {
    g_autoptr(TideTrace) trace = tide_test_open_trace (f->trace);
    g_assert_cmpint (tide_test_query_int (trace, "SELECT exit_status FROM processes"), ==, 3);
  }

  g_unlink (f->trace);
  record (f, NULL, "/nonexistent/trainer", NULL, NULL, &missing);
  g_assert_cmpint (missing.status, ==, 127);
  g_assert_cmpstr (missing.err, ==, "tidemark: cannot run /nonexistent/trainer: "
                                    "No such file or directory\n");
  /* No half-written trace is left behind. */
  g_assert_false (g_file_test (f->trace, G_FILE_TEST_EXISTS));
}

/* Starts `tidemark record -- sleeper-alloc [ARG1 ARG2]` and waits for its
 * first line. */
static GPid
start_sleeper (Fixture     *f,
               const char  *arg1,
               const char  *arg2,
               FILE       **out)
{
  g_autofree char *exe = target_path ("sleeper-alloc");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "-o", f->trace, "--", exe,
                         arg1, arg2, NULL };
  g_autoptr(GError) error = NULL;
  char line[64] = "";
  int out_fd;
  GPid pid;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  *out = fdopen (out_fd, "r");
  g_assert_nonnull (fgets (line, sizeof line, *out));
  g_assert_cmpstr (line, ==, "sleeper-alloc running\n");
  return pid;
}

/* Reads the sleeper's lines until it says that it ended step @n: by then
 * it has connected, marked steps and allocated, whatever the machine's
 * speed. */
static void
wait_for_step (FILE *out,
               int   n)
{
  g_autofree char *expected = g_strdup_printf ("step %d\n", n);
  char line[64];

  while (fgets (line, sizeof line, out) != NULL)
    if (strcmp (line, expected) == 0)
      return;
  g_error ("the sleeper ended before step %d", n);
}

/* Reads what the target printed until it was killed: its last step, or
 * @seen if it printed none after that one. */
static int
last_printed_step (FILE *out,
                   int   seen)
{
  char line[64];
  int step = seen;

  while (fgets (line, sizeof line, out) != NULL)
    if (g_str_has_prefix (line, "step "))
      step = atoi (line + 5);
  fclose (out);
  return step;
}

/* The direct child of the recorder, from /proc/PID/task/PID/children. */
static pid_t
child_of (GPid parent)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", parent, parent);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return (pid_t) atoi (text);
}

static int
wait_for (GPid pid)
{
  int wait_status;

  g_assert_cmpint (waitpid (pid, &wait_status, 0), ==, pid);
  return wait_status_to_int (wait_status);
}

/* The target is killed with SIGKILL.  Every step it printed before dying
 * is in the trace, and so is every allocation it made before that step (a
 * step marker first sends what its thread buffered).  Nothing here depends
 * on how busy the machine is. */
static void
test_target_sigkill (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  FILE *out;
  GPid recorder = start_sleeper (f, NULL, NULL, &out);
  pid_t target;
  int printed;
  gint64 steps, allocs;

  wait_for_step (out, 2);
  target = child_of (recorder);
  g_assert_cmpint (target, >, 0);
  kill (target, SIGKILL);
  g_assert_cmpint (wait_for (recorder), ==, 128 + SIGKILL);
  printed = last_printed_step (out, 2);
  g_assert_cmpint (printed, >=, 2);

  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
  steps = tide_test_query_int (trace, "SELECT count (*) FROM steps");
  g_assert_cmpint (steps, >=, printed);
  g_assert_cmpint (steps, <=, printed + 1);
  allocs = tide_test_query_int (trace, "SELECT count (*) FROM allocations a"
                                       " JOIN stacks s ON s.id = a.stack_id"
                                       " JOIN frames fr ON fr.id = "
                                       "   json_extract (s.frames, '$[#-1]')"
                                       " WHERE fr.function = 'steady_growth'");
  /* Five 1 MiB blocks per step, always recorded (larger than the interval). */
  g_assert_cmpint (allocs, >=, 5 * (gint64) printed);
}

static void
test_sigint_forwarded (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  FILE *out;
  GPid recorder = start_sleeper (f, NULL, NULL, &out);

  wait_for_step (out, 1);
  /* kill() from another process: the recorder passes it on to the target. */
  kill (recorder, SIGINT);
  g_assert_cmpint (wait_for (recorder), ==, 128 + SIGINT);
  fclose (out);
  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
}

/* `kill PID` of the recorder, as a batch system sends it: the program gets
 * the SIGTERM itself (it says so, and exits with a status of its own
 * choosing), the recorder exits with that status, and the trace is
 * complete, with every step and every block the program reported. */
static void
test_sigterm_forwarded (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  char line[64] = "";
  FILE *out;
  GPid recorder = start_sleeper (f, "--term-status", "7", &out);
  int rounds = 0, steps = 0;

  wait_for_step (out, 2);
  kill (recorder, SIGTERM);
  g_assert_cmpint (wait_for (recorder), ==, 7);
  while (fgets (line, sizeof line, out) != NULL && !g_str_has_prefix (line, "sigterm "))
    ;
  fclose (out);
  g_assert_cmpint (sscanf (line, "sigterm after round %d, step %d", &rounds, &steps), ==, 2);
  g_assert_cmpint (steps, >=, 2);
  g_assert_cmpint (rounds / 5, ==, steps);

  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
  g_assert_cmpint (tide_test_query_int (trace, "SELECT exit_status FROM processes"), ==, 7);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta WHERE key = 'exit_status'"),
                   ==, 7);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, steps);
  /* 1 MiB blocks: larger than the interval, each one recorded. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"
                                               " WHERE size = 1048576"), ==, rounds);
}

/* Polls the trace being written until it holds the target's process. */
static void
wait_for_first_commit (const char *path)
{
  for (int attempt = 0; attempt < 500; attempt++)
    {
      g_autoptr(TideTrace) trace = tide_trace_open (path, NULL);

      if (trace != NULL && tide_test_query_int (trace, "SELECT count (*) FROM processes") > 0)
        return;
      g_usleep (10 * 1000);
    }
  g_assert_not_reached ();
}

static void
test_recorder_killed (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *exe = target_path ("rss-toucher");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->trace,
                         "--", exe, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(TideTrace) trace = NULL;
  char buf[256];
  ssize_t n;
  int out_fd;
  GPid recorder;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &recorder, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  wait_for_first_commit (f->trace);
  kill (recorder, SIGKILL);
  g_assert_cmpint (wait_for (recorder), ==, 128 + SIGKILL);

  /* The target inherited the pipe: EOF comes when it has finished. */
  while ((n = read (out_fd, buf, sizeof buf)) > 0)
    g_string_append_len (out, buf, n);
  close (out_fd);
  g_assert_cmpstr (out->str, ==, "rss-toucher done\n");

  /* What was committed before the recorder died still opens. */
  trace = tide_test_open_trace (f->trace);
  g_assert_false (tide_trace_is_complete (trace));
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 1);
}

/* ---- the report command on bad input ---------------------------------------- */

static void
test_report_bad_input (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *text = g_build_filename (f->dir, "notes.tide", NULL);
  g_autofree char *missing = g_build_filename (f->dir, "missing.tide", NULL);
  const char *argv_text[] = { TIDE_TIDEMARK_EXE, "report", text, NULL };
  const char *argv_missing[] = { TIDE_TIDEMARK_EXE, "report", missing, NULL };
  const char *argv_format[] = { TIDE_TIDEMARK_EXE, "report", text, "--format", "xml", NULL };
  g_auto(Run) r1 = { 0 };
  g_auto(Run) r2 = { 0 };
  g_auto(Run) r3 = { 0 };
  g_autofree char *expected = NULL;

  g_assert_true (g_file_set_contents (text, "not a trace\n", -1, NULL));
  run_argv (argv_text, &r1);
  expected = g_strdup_printf ("tidemark: %s is not a Tidemark trace (not an SQLite database)\n",
                              text);
  g_assert_cmpint (r1.status, ==, 2);
  g_assert_cmpstr (r1.err, ==, expected);
  g_assert_cmpstr (r1.out, ==, "");

  run_argv (argv_missing, &r2);
  g_assert_cmpint (r2.status, ==, 2);
  g_assert_true (g_str_has_suffix (r2.err, "No such file or directory\n"));

  run_argv (argv_format, &r3);
  g_assert_cmpint (r3.status, ==, 2);
  g_assert_cmpstr (r3.err, ==, "tidemark: unknown format 'xml' (text, csv or json)\n");
}

void
add_record_exit_tests (void)
{
  RECORD_TEST_ADD ("/record/exit-status", NULL, test_exit_status);
  RECORD_TEST_ADD ("/record/target-sigkill", NULL, test_target_sigkill);
  RECORD_TEST_ADD ("/record/sigint-forwarded", NULL, test_sigint_forwarded);
  RECORD_TEST_ADD ("/record/sigterm-forwarded", NULL, test_sigterm_forwarded);
  RECORD_TEST_ADD ("/record/recorder-killed", NULL, test_recorder_killed);
  RECORD_TEST_ADD ("/report/bad-input", NULL, test_report_bad_input);
}
