/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Live capture: the window runs `tidemark record` (or, attaching to a
 * running process, `tidemark attach`) as a subprocess into a new trace
 * and follows the file as it grows.  Every 250 ms a worker thread reads a
 * few counters straight from the file (cheap however long the capture
 * runs) and, when they moved, reopens the trace, which summarizes the
 * incomplete file in memory; the main thread only swaps the result in.  A
 * generation number drops results that arrive after Stop or after a newer
 * refresh.  Stop sends SIGINT to the recorder, which passes it to the
 * program (or detaches) and finishes the trace; the final trace stays
 * open.  An attach run under pkexec belongs to root, so Stop cannot signal
 * it: such a run ends at its duration or when the process exits.
 */
#include "config.h"

#include <signal.h>
#include <unistd.h>

#include "tide-drilldown.h"
#include "tide-window-private.h"

#define LIVE_INTERVAL_MS 250

/* The recorder next to this program (build tree or bindir). */
char *
_tide_window_find_recorder (void)
{
  const char *override = g_getenv ("TIDEMARK_CLI");
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = self ? g_path_get_dirname (self) : NULL;
  g_autofree char *sibling = dir ? g_build_filename (dir, "tidemark", NULL) : NULL;

  if (override != NULL && *override != '\0')
    return g_strdup (override);
  if (sibling != NULL && g_file_test (sibling, G_FILE_TEST_IS_EXECUTABLE))
    return g_steal_pointer (&sibling);
  if (self != NULL && g_str_has_prefix (self, TIDE_BUILD_ROOT "/"))
    return g_build_filename (TIDE_BUILD_ROOT, "app", "tidemark", NULL);
  return g_build_filename (TIDE_BINDIR, "tidemark", NULL);
}

typedef struct
{
  char  *path;
  gint64 known_steps;
  gint64 known_allocations;
  gint64 known_last_ns;
} LiveRequest;

static void
live_request_free (LiveRequest *request)
{
  g_free (request->path);
  g_free (request);
}

static void
live_refresh_worker (GTask        *task,
                     gpointer      source,
                     gpointer      data,
                     GCancellable *cancellable)
{
  LiveRequest *request = data;
  TideLiveCounts counts;
  GError *error = NULL;
  TideTrace *trace;

  /* Before the recorder wrote its schema there is nothing to show yet. */
  if (!tide_drilldown_live_counts (request->path, &counts, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (counts.n_steps == request->known_steps && counts.n_allocations == request->known_allocations &&
      counts.last_ns == request->known_last_ns)
    {
      g_task_return_pointer (task, NULL, NULL);
      return;
    }
  request->known_steps = counts.n_steps;
  request->known_allocations = counts.n_allocations;
  request->known_last_ns = counts.last_ns;
  trace = tide_trace_open (request->path, &error);
  if (trace == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, trace, g_object_unref);
}

static void
live_refresh_done_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      data)
{
  TideWindow *self = TIDE_WINDOW (source);
  LiveRequest *request = g_task_get_task_data (G_TASK (result));
  guint generation = GPOINTER_TO_UINT (data);
  g_autoptr(TideTrace) trace = g_task_propagate_pointer (G_TASK (result), NULL);
  GPtrArray *steps;

  self->live_in_flight = FALSE;
  if (generation != self->live_generation || self->recorder == NULL)
    return;
  self->live_known[0] = request->known_steps;
  self->live_known[1] = request->known_allocations;
  self->live_known[2] = request->known_last_ns;
  if (trace == NULL)
    return;
  self->live_refreshes++;
  _tide_window_set_trace (self, trace);
  steps = tide_trace_tables_get_steps (tide_session_get_tables (self->session));
  self->live_steps = steps ? steps->len : 0;
}

static gboolean
live_tick_cb (gpointer data)
{
  TideWindow *self = data;
  LiveRequest *request;
  g_autoptr(GTask) task = NULL;

  if (self->live_in_flight)
    return G_SOURCE_CONTINUE;
  request = g_new0 (LiveRequest, 1);
  request->path = g_strdup (self->live_path);
  request->known_steps = self->live_known[0];
  request->known_allocations = self->live_known[1];
  request->known_last_ns = self->live_known[2];
  task = g_task_new (self, self->live_cancellable, live_refresh_done_cb,
                     GUINT_TO_POINTER (self->live_generation));
  g_task_set_task_data (task, request, (GDestroyNotify) live_request_free);
  self->live_in_flight = TRUE;
  g_task_run_in_thread (task, live_refresh_worker);
  return G_SOURCE_CONTINUE;
}

static void
stop_following (TideWindow *self)
{
  self->live_generation++;
  g_clear_handle_id (&self->live_timeout, g_source_remove);
  if (self->live_cancellable != NULL)
    g_cancellable_cancel (self->live_cancellable);
  g_clear_object (&self->live_cancellable);
}

static void
recorder_exited_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      data)
{
  g_autoptr(TideWindow) self = data;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  GSubprocess *recorder = G_SUBPROCESS (source);

  if (!g_subprocess_wait_finish (recorder, result, NULL) || self->recorder != recorder)
    return;
  stop_following (self);
  self->recorder_status = g_subprocess_get_if_exited (recorder) ? g_subprocess_get_exit_status (recorder)
                                                                : 128 + g_subprocess_get_term_sig (recorder);
  g_clear_object (&self->recorder);
  trace = tide_trace_open (self->live_path, &error);
  if (trace != NULL)
    _tide_window_set_trace (self, trace);
  else
    {
      g_autofree char *message = g_strdup_printf ("The recorder ended with status %d: %s",
                                                  self->recorder_status, error->message);
      _tide_window_show_error (self, "The Recording Failed", message);
    }
  _tide_window_actions_update (self);
}

/* Whether a trace, or the WAL of one being written, holds @path. */
static gboolean
trace_exists (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS) || g_file_test (wal, G_FILE_TEST_EXISTS);
}

/* A name no trace holds: the recorder refuses one that is taken by the
 * time it starts (`record -o` without --force), so the trace the window
 * has open is never written over. */
static char *
new_trace_path (const char *folder,
                const char *program)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *name = g_strdup_printf ("%s-%s.tide", program, stamp);
  char *path = g_build_filename (folder, name, NULL);

  for (guint i = 2; trace_exists (path); i++)
    {
      g_free (path);
      g_free (name);
      name = g_strdup_printf ("%s-%s-%u.tide", program, stamp, i);
      path = g_build_filename (folder, name, NULL);
    }
  return path;
}

/* The dialog's request, completed with the recorder and a trace named
 * after the program or process, as a command line. */
static char **
request_argv (TideRecordDialog   *dialog,
              char              **folder,
              char              **path,
              GError            **error)
{
  g_auto(TideRecordRequest) request = { 0 };
  g_autofree char *program = NULL;
  char **argv;

  if (!tide_record_dialog_get_request (dialog, &request, error))
    return NULL;
  program = tide_record_request_program_name (&request);
  request.recorder = _tide_window_find_recorder ();
  request.output = new_trace_path (request.folder, program);
  argv = tide_record_request_to_argv (&request, error);
  if (argv != NULL)
    {
      *folder = g_steal_pointer (&request.folder);
      *path = g_steal_pointer (&request.output);
    }
  return argv;
}

gboolean
_tide_window_start_recording (TideWindow        *self,
                              TideRecordDialog  *dialog,
                              GError           **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_auto(GStrv) argv = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *path = NULL;
  gboolean attach = tide_record_dialog_get_mode (dialog) == TIDE_RECORD_MODE_ATTACH;

  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (self->recorder == NULL, FALSE);

  argv = request_argv (dialog, &folder, &path, error);
  if (argv == NULL)
    return FALSE;

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_set_cwd (launcher, folder);
  /* The program's output goes to our stderr: stdout may be a protocol
   * (a test's TAP stream), and a desktop launch shows neither. */
  g_subprocess_launcher_take_stdout_fd (launcher, dup (STDERR_FILENO));
  self->recorder = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv, error);
  if (self->recorder == NULL)
    return FALSE;

  g_free (self->live_path);
  self->live_path = g_steal_pointer (&path);
  self->live_refreshes = 0;
  self->live_steps = 0;
  memset (self->live_known, 0, sizeof self->live_known);
  self->live_cancellable = g_cancellable_new ();
  self->live_timeout = g_timeout_add (LIVE_INTERVAL_MS, live_tick_cb, self);
  g_subprocess_wait_async (self->recorder, NULL, recorder_exited_cb, g_object_ref (self));
  adw_window_title_set_subtitle (self->title, attach ? "Attached…" : "Recording…");
  _tide_window_actions_update (self);
  return TRUE;
}

void
_tide_window_stop_recording (TideWindow *self)
{
  g_return_if_fail (TIDE_IS_WINDOW (self));

  if (self->recorder != NULL)
    g_subprocess_send_signal (self->recorder, SIGINT);
}

gboolean
_tide_window_is_recording (TideWindow *self)
{
  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  return self->recorder != NULL;
}

/* A window closed while recording stops the program, as Stop would. */
void
_tide_window_record_dispose (TideWindow *self)
{
  stop_following (self);
  if (self->recorder != NULL)
    {
      g_subprocess_send_signal (self->recorder, SIGINT);
      g_clear_object (&self->recorder);
    }
}
