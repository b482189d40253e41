/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-run-limited.h"

#include <gio/gio.h>
#include <sys/wait.h>

typedef struct
{
  GMainLoop *loop;
  char      *out;
  char      *err;
  gboolean   done;
} Wait;

/* Bytes, not UTF-8: a damaged trace's text may reach the output as it is. */
static char *
steal_text (GBytes *bytes)
{
  gsize size = 0;
  const char *data = bytes != NULL ? g_bytes_get_data (bytes, &size) : NULL;
  char *text = g_strndup (data != NULL ? data : "", size);

  g_clear_pointer (&bytes, g_bytes_unref);
  return text;
}

static void
communicated_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Wait *wait = user_data;
  GBytes *out = NULL, *err = NULL;

  g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &out, &err, NULL);
  wait->out = steal_text (out);
  wait->err = steal_text (err);
  wait->done = TRUE;
  g_main_loop_quit (wait->loop);
}

static gboolean
limit_reached_cb (gpointer user_data)
{
  g_main_loop_quit (((Wait *) user_data)->loop);
  return G_SOURCE_REMOVE;
}

void
tide_limited_run_clear (TideLimitedRun *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

void
tide_run_limited (const char *const *argv,
                  double             limit_s,
                  TideLimitedRun    *run)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GSource) limit = g_timeout_source_new ((guint) (limit_s * 1000));
  g_autoptr(GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  Wait wait = { 0 };
  int wait_status;

  g_main_context_push_thread_default (context);
  proc = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                            &error);
  g_assert_no_error (error);
  wait.loop = g_main_loop_new (context, FALSE);
  g_source_set_callback (limit, limit_reached_cb, &wait, NULL);
  g_source_attach (limit, context);
  g_subprocess_communicate_async (proc, NULL, NULL, communicated_cb, &wait);
  g_main_loop_run (wait.loop);
  run->timed_out = !wait.done;
  if (run->timed_out)
    {
      g_subprocess_force_exit (proc);
      while (!wait.done)
        g_main_context_iteration (context, TRUE);
    }
  g_subprocess_wait (proc, NULL, NULL);
  g_source_destroy (limit);
  wait_status = g_subprocess_get_status (proc);
  run->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status)
                                        : 128 + WTERMSIG (wait_status);
  run->out = wait.out;
  run->err = wait.err;
  run->seconds = (g_get_monotonic_time () - t0) / 1e6;
  g_main_loop_unref (wait.loop);
  g_main_context_pop_thread_default (context);
}
