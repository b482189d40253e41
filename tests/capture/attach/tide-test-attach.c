/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What the scenarios of test-attach share.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>

#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-attach.h"
#include "tide-test-util.h"
#include "tide-trace.h"

const char *
build_path (const char *relative)
{
  static char path[4096];

  g_snprintf (path, sizeof path, "%s/%s", g_getenv ("TIDEMARK_BUILD_ROOT"), relative);
  return path;
}

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = tide_test_make_dir ("tide-attach");
  g_assert_nonnull (f->dir);
  f->trace = g_build_filename (f->dir, "trace.tide", NULL);
  f->rss_log = g_build_filename (f->dir, "rss.log", NULL);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tide_test_remove_dir (f->dir);
  g_free (f->dir);
  g_free (f->trace);
  g_free (f->rss_log);
}

/* attach-toucher with the test's steps, --sleep-ms @sleep_ms, --rss-log
 * @rss_log, --wait if @wait, then up to four more arguments. */
GSubprocess *
start_toucher (const char *rss_log,
               const char *sleep_ms,
               gboolean    wait,
               const char *arg1,
               const char *arg2,
               const char *arg3,
               const char *arg4)
{
  g_autoptr(GError) error = NULL;
  const char *argv[16] = {
    build_path ("tests/capture/attach/attach-toucher"), "--steps", G_STRINGIFY (TOUCH_STEPS),
    "--mib", G_STRINGIFY (TOUCH_MIB), "--sleep-ms", sleep_ms, "--rss-log", rss_log,
  };
  const char *more[] = { wait ? "--wait" : NULL, arg1, arg2, arg3, arg4 };
  guint n = 9;
  GSubprocess *p;

  for (guint i = 0; i < G_N_ELEMENTS (more); i++)
    if (more[i] != NULL)
      argv[n++] = more[i];
  argv[n] = NULL;
  p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                         G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  return p;
}

/* Starts `tidemark attach [OPTION VALUE]` with @env (NULL, or NAME=VALUE
 * pairs), --quiet unless @loud (then its stderr is a pipe), and waits for
 * its "attached" line.  @told: NULL, or where the ready fd's stream goes,
 * for the lines the attach says later. */
GSubprocess *
start_attach_telling (const char         *pid,
                      const char         *trace,
                      const char         *option,
                      const char         *value,
                      const char * const *env,
                      gboolean            loud,
                      GDataInputStream  **told)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (loud ? G_SUBPROCESS_FLAGS_STDERR_PIPE : G_SUBPROCESS_FLAGS_NONE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) ready = NULL;
  g_autofree char *line = NULL;
  const char *argv[16] = {
    build_path ("app/tidemark"), "attach", "-p", pid, "-o", trace, "--ready-fd", "3",
  };
  guint n = 8;
  int fds[2];
  GSubprocess *p;

  g_assert_cmpint (pipe (fds), ==, 0);
  g_subprocess_launcher_take_fd (launcher, fds[1], 3);
  for (guint i = 0; env != NULL && env[i] != NULL; i += 2)
    g_subprocess_launcher_setenv (launcher, env[i], env[i + 1], TRUE);
  if (!loud)
    argv[n++] = "--quiet";
  argv[n++] = option;
  argv[n++] = value;
  argv[n] = NULL;
  p = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  ready = g_data_input_stream_new (g_unix_input_stream_new (fds[0], TRUE));
  line = g_data_input_stream_read_line (ready, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "attached");
  if (told != NULL)
    *told = g_steal_pointer (&ready);
  return p;
}

GSubprocess *
start_attach_full (const char         *pid,
                   const char         *trace,
                   const char         *option,
                   const char         *value,
                   const char * const *env,
                   gboolean            loud)
{
  return start_attach_telling (pid, trace, option, value, env, loud, NULL);
}

/* Waits until the attach says, on its ready fd, that it reads the Python
 * frames of @pid, an image it found after the attach: the samples taken
 * before have none, however far behind the loader is. */
void
wait_for_python_followed (GDataInputStream *told,
                          const char       *pid)
{
  g_autofree char *want = g_strdup_printf ("python %s", pid);
  g_autoptr(GError) error = NULL;

  for (;;)
    {
      g_autofree char *line = g_data_input_stream_read_line (told, NULL, NULL, &error);

      g_assert_no_error (error);
      if (line == NULL)
        g_error ("the attach ended without reading the Python frames of process %s", pid);
      if (g_strcmp0 (line, want) == 0)
        return;
    }
}

GSubprocess *
start_attach_with_env (const char         *pid,
                       const char         *trace,
                       const char         *option,
                       const char         *value,
                       const char * const *env)
{
  return start_attach_full (pid, trace, option, value, env, FALSE);
}

GSubprocess *
start_attach (const char *pid,
              const char *trace,
              const char *option,
              const char *value)
{
  return start_attach_with_env (pid, trace, option, value, NULL);
}

/* Waits until attach-toucher has logged @n steps: with --pause-after @n,
 * it then waits on stdin, between two steps. */
void
wait_for_logged_steps (const char *rss_log,
                       guint       n)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autofree char *log = NULL;
      guint lines = 0;

      if (g_file_get_contents (rss_log, &log, NULL, NULL))
        for (const char *c = log; *c != '\0'; c++)
          lines += *c == '\n';
      if (lines >= n)
        return;
      g_usleep (5 * 1000);
    }
  g_error ("attach-toucher did not log %u steps in 60 s", n);
}

/* Waits until @count_sql on the trace that an attach is writing counts
 * @n rows. */
void
wait_for_trace_rows (const char *path,
                     const char *count_sql,
                     gint64      n)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autoptr(TideTrace) trace = tide_trace_open (path, NULL);

      if (trace != NULL && tide_test_query_int (trace, count_sql) >= n)
        return;
      g_usleep (10 * 1000);
    }
  g_error ("the attach wrote no %" G_GINT64_FORMAT " rows of %s in 60 s", n, count_sql);
}

void
wait_for_trace_steps (const char *path,
                      gint64      n)
{
  wait_for_trace_rows (path, "SELECT count (*) FROM steps", n);
}

void
say_go (GSubprocess *toucher)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (g_subprocess_get_stdin_pipe (toucher), "go\n", 3, NULL, NULL,
                             &error);
  g_assert_no_error (error);
}

char *
finish (GSubprocess *p)
{
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 0);
  return out;
}

gboolean
stack_has (const TideGroup *g,
           const char      *function,
           guint            depth)
{
  const TideFrame *frame;

  if (g->frames->len <= depth)
    return FALSE;
  frame = g_ptr_array_index (g->frames, depth);
  return g_strcmp0 (frame->function, function) == 0;
}
