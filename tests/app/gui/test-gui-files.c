/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The desktop app's files under Xvfb, on a trace recorded here from
 * tests/targets/leaky-steps with `tidemark record --all`
 * (tide-test-gui.c): what it exports, the traces it cannot show or
 * shows in part, and live capture from the Record dialog (a program it
 * starts, or attaching to a running one).
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tide-test-gui.h"
#include "tide-test-trace.h"
#include "tide-test-util.h"
#include "tide-test-widget.h"
#include "tide-window-private.h"

static gboolean
file_has_content (const char *path,
                  const char *expected)
{
  g_autofree char *contents = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, expected);
  return TRUE;
}

static void
test_export_csv (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  g_autofree char *steps_csv = g_build_filename (tide_test_gui_dir, "steps.csv", NULL);
  g_autofree char *drill_csv = g_build_filename (tide_test_gui_dir, "drilldown.csv", NULL);
  const char *steps_args[] = { "report", tide_test_gui_trace, "--steps", "--format", "csv", NULL };
  const char *drill_args[] = { "report", tide_test_gui_trace, "--retained", "--step", "5",
                               "--by", "stack", "--format", "csv", NULL };
  g_autofree char *cli_steps = tide_test_gui_run_cli (steps_args);
  g_autofree char *cli_drill = tide_test_gui_run_cli (drill_args);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) fields = NULL;

  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_true (_tide_window_export_steps_csv (window, steps_csv, &error));
  g_assert_no_error (error);
  g_assert_true (_tide_window_export_drilldown_csv (window, drill_csv, &error));
  g_assert_no_error (error);

  /* The app writes exactly what `tidemark report` writes. */
  file_has_content (steps_csv, cli_steps);
  file_has_content (drill_csv, cli_drill);

  lines = g_strsplit (cli_drill, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 4);          /* header, 2 rows, "" */
  /* position,pid,role,dist_rank,device,bytes,count,... */
  fields = g_strsplit (lines[1], ",", -1);
  g_assert_cmpstr (fields[5], ==, "4194304");
  g_assert_cmpstr (fields[6], ==, "1");
  g_assert_cmpstr (fields[12], ==, "leak_big_tensor");
  g_strfreev (fields);
  fields = g_strsplit (lines[2], ",", -1);
  g_assert_cmpstr (fields[5], ==, "1572864");
  g_assert_cmpstr (fields[6], ==, "96");
  g_assert_cmpstr (fields[12], ==, "leak_feature_cache");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_export_png (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  g_autofree char *png = g_build_filename (tide_test_gui_dir, "timeline.png", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree guint32 *pixels = NULL;
  g_autoptr(GHashTable) colors = g_hash_table_new (NULL, NULL);
  int width, height;

  g_assert_true (_tide_window_export_png (window, png, 800, 480, &error));
  g_assert_no_error (error);
  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  width = gdk_texture_get_width (texture);
  height = gdk_texture_get_height (texture);
  g_assert_cmpint (width, ==, 800);
  g_assert_cmpint (height, ==, 480);

  pixels = g_new (guint32, width * height);
  gdk_texture_download (texture, (guchar *) pixels, width * 4);
  for (int i = 0; i < width * height; i++)
    g_hash_table_add (colors, GUINT_TO_POINTER (pixels[i] & 0xffffff));
  /* Not blank: many colours, among them the RSS line (ARGB in native order). */
  g_assert_cmpuint (g_hash_table_size (colors), >, 10);
  g_assert_true (g_hash_table_contains (colors, GUINT_TO_POINTER (0x1c71d8)));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Export → Timeline as PNG asks for the size (remembered in GSettings),
 * then for the file; the image has the size asked for. */
static void
test_export_png_chosen_size (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  g_autofree char *png = g_build_filename (tide_test_gui_dir, "chosen.png", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (png);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree guint32 *pixels = NULL;
  g_autoptr(GHashTable) colors = g_hash_table_new (NULL, NULL);
  AdwMessageDialog *dialog;
  GtkSpinButton *width_spin, *height_spin;
  int width, height;

  g_assert_nonnull (window->settings);
  g_assert_cmpint (g_settings_get_int (window->settings, "export-width"), ==, 1600);
  g_assert_cmpint (g_settings_get_int (window->settings, "export-height"), ==, 900);
  dialog = _tide_window_present_export_size_dialog (window);
  width_spin = GTK_SPIN_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (dialog),
                                                              TIDE_TYPE_EXPORT_SIZE_DIALOG,
                                                              "width_spin"));
  height_spin = GTK_SPIN_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (dialog),
                                                               TIDE_TYPE_EXPORT_SIZE_DIALOG,
                                                               "height_spin"));
  g_assert_cmpint (gtk_spin_button_get_value_as_int (width_spin), ==, 1600);
  g_assert_cmpint (gtk_spin_button_get_value_as_int (height_spin), ==, 900);
  gtk_spin_button_set_value (width_spin, 640);
  gtk_spin_button_set_value (height_spin, 360);
  g_assert_null (window->export_chooser);
  adw_message_dialog_response (dialog, "export");
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_assert_cmpint (g_settings_get_int (window->settings, "export-width"), ==, 640);
  g_assert_cmpint (g_settings_get_int (window->settings, "export-height"), ==, 360);

  /* GTK's own chooser is not driven here: the file it would return is. */
  g_assert_nonnull (window->export_chooser);
  g_assert_true (GTK_IS_FILE_CHOOSER (window->export_chooser));
  _tide_window_export_chosen (window, file);
  g_assert_null (window->export_chooser);

  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  width = gdk_texture_get_width (texture);
  height = gdk_texture_get_height (texture);
  g_assert_cmpint (width, ==, 640);
  g_assert_cmpint (height, ==, 360);
  pixels = g_new (guint32, width * height);
  gdk_texture_download (texture, (guchar *) pixels, width * 4);
  for (int i = 0; i < width * height; i++)
    g_hash_table_add (colors, GUINT_TO_POINTER (pixels[i] & 0xffffff));
  g_assert_cmpuint (g_hash_table_size (colors), >, 10);
  /* The RSS and live heap lane lines (light palette). */
  g_assert_true (g_hash_table_contains (colors, GUINT_TO_POINTER (0x1c71d8)));
  g_assert_true (g_hash_table_contains (colors, GUINT_TO_POINTER (0x26a269)));
  g_settings_reset (window->settings, "export-width");
  g_settings_reset (window->settings, "export-height");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---- bad input --------------------------------------------------------------- */

static char *
copy_trace (const char *name)
{
  char *path = g_build_filename (tide_test_gui_dir, name, NULL);
  g_autofree char *contents = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (tide_test_gui_trace, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (path, contents, length, NULL));
  return path;
}

static void
assert_error_page (const char *path,
                   const char *title,
                   const char *message_part)
{
  TideWindow *window = tide_test_gui_window_open (path);

  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_ERROR);
  g_assert_cmpstr (adw_status_page_get_title (window->error_page), ==, title);
  g_assert_nonnull (strstr (adw_status_page_get_description (window->error_page), message_part));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (window->stack), ==, "error");
  g_assert_false (tide_test_gui_action_enabled (window, "win.export-png"));
  g_assert_true (tide_test_gui_action_enabled (window, "win.open"));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_bad_files (void)
{
  g_autofree char *text = g_build_filename (tide_test_gui_dir, "notes.tide", NULL);
  g_autofree char *foreign = g_build_filename (tide_test_gui_dir, "foreign.tide", NULL);
  g_autofree char *truncated = copy_trace ("truncated.tide");
  g_autofree char *newer = copy_trace ("newer.tide");
  g_autofree char *missing = g_build_filename (tide_test_gui_dir, "missing.tide", NULL);
  g_autofree char *far_counter = copy_trace ("far-counter.tide");
  g_autofree char *far_end = copy_trace ("far-end.tide");
  gsize length;
  g_autofree char *contents = NULL;

  g_assert_true (g_file_set_contents (text, "step,bytes\n1,100\n", -1, NULL));
  tide_test_exec_sql (foreign, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
  g_assert_true (g_file_get_contents (truncated, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (truncated, contents, length / 2, NULL));
  tide_test_exec_sql (newer, "PRAGMA user_version = 99;");
  tide_test_exec_sql (far_counter, "INSERT INTO counters SELECT process_id, counter, device,"
                                   " 9223372036854775807, value FROM counters LIMIT 1;");
  tide_test_exec_sql (far_end, "UPDATE meta SET value = 1e308 WHERE key = 'end_ns';");

  assert_error_page (text, "Not a Tidemark Trace", "not an SQLite database");
  assert_error_page (foreign, "Not a Tidemark Trace", "not a Tidemark trace");
  assert_error_page (truncated, "Damaged Trace", "truncated");
  assert_error_page (newer, "Trace From a Newer Tidemark", "newer Tidemark");
  assert_error_page (missing, "Cannot Open This File", "No such file");
  /* The hostile traces: without their check, the timeline's
   * first draw never ends. */
  assert_error_page (far_counter, "Damaged Trace",
                     "the trace is damaged: counters.ts_ns holds 9223372036854775807, more than "
                     "366 days from the trace's start");
  assert_error_page (far_end, "Damaged Trace",
                     "the trace is damaged: meta end_ns holds 1.0e+308, not a time in "
                     "nanoseconds");
}

/* A trace whose recording has not finished opens, with a banner. */
static void
test_incomplete_trace (void)
{
  g_autofree char *incomplete = copy_trace ("incomplete.tide");
  TideWindow *window;

  tide_test_exec_sql (incomplete, "UPDATE meta SET value = 0 WHERE key = 'complete';");
  window = tide_test_gui_window_open (incomplete);
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  g_assert_true (gtk_info_bar_get_revealed (window->banner));
  g_assert_nonnull (strstr (gtk_label_get_text (window->banner_label), "incomplete"));
  g_assert_cmpuint (g_list_model_get_n_items (tide_steps_view_get_model (window->steps_view)), ==, 10);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A trace whose recording stopped writing it (the disk filled) says so, and
 * when. */
static void
test_early_end_trace (void)
{
  g_autofree char *early = copy_trace ("early.tide");
  TideWindow *window;

  tide_test_exec_sql (early, "UPDATE meta SET value = 0 WHERE key = 'complete';"
                   "INSERT INTO meta (key, value) VALUES ('stopped_reason', 'disk full'),"
                   " ('stopped_ns', (SELECT value FROM meta WHERE key = 'start_ns')"
                   "  + 41200000000);");
  window = tide_test_gui_window_open (early);
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  g_assert_true (gtk_info_bar_get_revealed (window->banner));
  g_assert_cmpstr (gtk_label_get_text (window->banner_label), ==,
                   "This trace ends early: its recording stopped writing it (disk full at "
                   "41.2 s). It shows what was written before.");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---- live capture ------------------------------------------------------------- */

typedef struct
{
  TideWindow *window;
  gint64      steps_at_least;
} LiveWait;

static gboolean
live_has_steps (gpointer data)
{
  LiveWait *wait = data;
  return wait->window->live_steps >= wait->steps_at_least;
}

static gboolean
recording_ended (gpointer data)
{
  return !_tide_window_is_recording (data);
}

static void
test_live_capture (void)
{
  TideWindow *window = tide_test_gui_window_new ();
  TideRecordDialog *dialog;
  g_autofree char *target = tide_test_gui_build_path ("tests", "targets", "sleeper-alloc", NULL);
  g_autofree char *command = g_strdup_printf ("'%s' --max-seconds 300", target);
  g_autofree char *live_dir = g_build_filename (tide_test_gui_dir, "live", NULL);
  LiveWait wait = { window, 2 };
  gint64 first_steps, later_steps, started;
  guint first_refreshes;

  g_assert_cmpint (g_mkdir (live_dir, 0755), ==, 0);

  /* The Record button's dialog, filled in and confirmed through its action. */
  dialog = _tide_window_present_record_dialog (window);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &dialog);
  tide_record_dialog_set_command (dialog, command);
  tide_record_dialog_set_folder (dialog, live_dir);
  tide_record_dialog_set_sampling (dialog, TIDE_SAMPLING_BYTES, 4096);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record.start", NULL));
  g_assert_null (dialog);    /* closed once the recorder started */
  started = g_get_monotonic_time ();
  g_assert_true (_tide_window_is_recording (window));
  g_assert_true (tide_test_gui_action_enabled (window, "win.stop-recording"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.record"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.open"));

  /* The steps table grows while the program runs (a step every 100 ms). */
  tide_test_iterate_until (live_has_steps, &wait, 60, "the live capture's next steps");
  first_steps = window->live_steps;
  first_refreshes = window->live_refreshes;
  g_assert_cmpint (first_steps, >=, 2);
  wait.steps_at_least = first_steps + 3;
  tide_test_iterate_until (live_has_steps, &wait, 60, "the live capture's next steps");
  later_steps = window->live_steps;
  g_test_message ("live capture: %u refreshes in %.2f s", window->live_refreshes,
                  (g_get_monotonic_time () - started) / 1e6);
  g_assert_cmpint (later_steps, >=, first_steps + 3);
  g_assert_cmpuint (window->live_refreshes, >, first_refreshes);
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);

  /* Stop: the program ends, the final trace stays open and is complete. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.stop-recording", NULL);
  tide_test_iterate_until (recording_ended, window, 60, "the recording to end");
  g_assert_false (_tide_window_is_recording (window));
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  g_assert_true (tide_trace_is_complete (_tide_window_get_trace (window)));
  g_assert_cmpuint (g_list_model_get_n_items (tide_steps_view_get_model (window->steps_view)), >=, later_steps);
  g_assert_true (tide_test_gui_action_enabled (window, "win.record"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.stop-recording"));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The Record button while a trace named as its recording would be is
 * open, and the next name is a trace still being written: the recording
 * gets a name of its own, and the open trace stays as it was, byte for
 * byte. */
static void
test_record_beside_open_trace (void)
{
  g_autofree char *target = tide_test_gui_build_path ("tests", "targets", "sleeper-alloc", NULL);
  g_autofree char *command = g_strdup_printf ("'%s' --max-seconds 300", target);
  g_autofree char *folder = g_build_filename (tide_test_gui_dir, "beside", NULL);
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *open_path = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  gsize before_len = 0, after_len = 0;
  TideWindow *window;
  TideRecordDialog *dialog;

  g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
  g_assert_true (g_file_get_contents (tide_test_gui_trace, &before, &before_len, NULL));
  /* The names of this second and the next ones, all taken by the trace. */
  for (gint s = 0; s < 30; s++)
    {
      g_autoptr(GDateTime) t = g_date_time_add_seconds (now, s);
      g_autofree char *stamp = g_date_time_format (t, "%Y%m%d-%H%M%S");
      g_autofree char *name = g_strdup_printf ("sleeper-alloc-%s.tide", stamp);
      g_autofree char *path = g_build_filename (folder, name, NULL);

      g_autofree char *wal = g_strdup_printf ("%s/sleeper-alloc-%s-2.tide-wal", folder, stamp);

      g_assert_true (g_file_set_contents (path, before, before_len, NULL));
      /* A trace still being written shows by its WAL first. */
      g_assert_true (g_file_set_contents (wal, "wal", -1, NULL));
      if (s == 0)
        open_path = g_steal_pointer (&path);
    }
  window = tide_test_gui_window_open (open_path);
  dialog = _tide_window_present_record_dialog (window);
  tide_record_dialog_set_command (dialog, command);
  tide_record_dialog_set_folder (dialog, folder);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record.start", NULL));
  g_assert_true (_tide_window_is_recording (window));
  g_assert_true (g_str_has_suffix (window->live_path, "-3.tide"));
  g_assert_true (g_str_has_prefix (window->live_path, folder));

  gtk_widget_activate_action (GTK_WIDGET (window), "win.stop-recording", NULL);
  tide_test_iterate_until (recording_ended, window, 60, "the recording to end");
  g_assert_true (g_file_get_contents (open_path, &after, &after_len, NULL));
  g_assert_cmpuint (after_len, ==, before_len);
  g_assert_cmpint (memcmp (before, after, before_len), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* What the dialog asks for, as a request; the command lines that requests
 * become are tests/app/gui/test-record-request.c's. */
static void
test_record_dialog_arguments (void)
{
  TideRecordDialog *dialog = tide_record_dialog_new (NULL, NULL);
  g_autoptr(GError) error = NULL;
  g_auto(TideRecordRequest) empty = { 0 };
  g_auto(TideRecordRequest) request = { 0 };
  g_auto(GStrv) argv = NULL;
  g_autofree char *joined = NULL;
  g_autofree char *name = NULL;

  tide_record_dialog_set_folder (dialog, tide_test_gui_dir);
  g_assert_true (tide_record_dialog_get_request (dialog, &empty, &error));
  g_assert_null (empty.command);
  empty.recorder = g_strdup ("/opt/tidemark");
  empty.output = g_strdup ("out.tide");
  argv = tide_record_request_to_argv (&empty, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_null (argv);
  g_clear_error (&error);

  /* "Hook PyTorch" follows the command until the user sets it: on for
   * Python, off for other programs. */
  g_assert_false (tide_record_dialog_get_torch (dialog));
  tide_record_dialog_set_command (dialog, "env OMP_NUM_THREADS=1 /usr/bin/python3.11 -u x.py");
  g_assert_true (tide_record_dialog_get_torch (dialog));
  tide_record_dialog_set_command (dialog, "./leaky-steps --python3");
  g_assert_false (tide_record_dialog_get_torch (dialog));
  tide_record_dialog_set_command (dialog, "./train.py");
  g_assert_true (tide_record_dialog_get_torch (dialog));
  tide_record_dialog_set_command (dialog, "pythonista train.py");
  g_assert_false (tide_record_dialog_get_torch (dialog));
  tide_record_dialog_set_command (dialog, "python3 'train it.py' --epochs 1");
  g_assert_true (tide_record_dialog_get_torch (dialog));
  tide_record_dialog_set_sampling (dialog, TIDE_SAMPLING_ALL, 0);
  g_assert_true (tide_record_dialog_get_request (dialog, &request, &error));
  g_assert_no_error (error);
  g_assert_cmpint (request.mode, ==, TIDE_RECORD_MODE_PROGRAM);
  g_assert_cmpstr (request.folder, ==, tide_test_gui_dir);
  g_assert_cmpint (request.sampling, ==, TIDE_SAMPLING_ALL);
  g_assert_true (request.torch);
  joined = g_strjoinv ("|", request.command);
  g_assert_cmpstr (joined, ==, "python3|train it.py|--epochs|1");
  name = tide_record_request_program_name (&request);
  g_assert_cmpstr (name, ==, "python3");
  /* Once the user has set it, the command leaves it alone. */
  tide_record_dialog_set_torch (dialog, FALSE);
  tide_record_dialog_set_command (dialog, "python3 train.py");
  g_assert_false (tide_record_dialog_get_torch (dialog));

  /* A folder that is not there is the dialog's error, before any argv. */
  tide_record_dialog_set_folder (dialog, "/nonexistent/tidemark");
  tide_record_request_clear (&request);
  g_assert_false (tide_record_dialog_get_request (dialog, &request, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  g_clear_error (&error);

  /* Attach mode with no process chosen: the request cannot run. */
  tide_record_dialog_set_folder (dialog, tide_test_gui_dir);
  tide_record_dialog_set_mode (dialog, TIDE_RECORD_MODE_ATTACH);
  g_assert_cmpint (tide_record_dialog_get_mode (dialog), ==, TIDE_RECORD_MODE_ATTACH);
  tide_record_request_clear (&request);
  g_assert_true (tide_record_dialog_get_request (dialog, &request, &error));
  g_assert_cmpint (request.mode, ==, TIDE_RECORD_MODE_ATTACH);
  g_assert_cmpint (request.pid, ==, 0);
  request.recorder = g_strdup ("/opt/tidemark");
  request.output = g_strdup ("out.tide");
  argv = tide_record_request_to_argv (&request, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_null (argv);
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* ---- attach to a running process ------------------------------------------ */

#ifdef TIDE_HAVE_ATTACH
/* The position of @pid in the dialog's filtered list, or -1. */
static gint
find_process (TideRecordDialog *dialog,
              int               pid,
              const char       *command_part)
{
  GListModel *model = G_LIST_MODEL (tide_record_dialog_get_processes (dialog));

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(TideProcessListItem) item = g_list_model_get_item (model, i);
      if (tide_process_list_item_get_pid (item) == pid)
        {
          g_assert_nonnull (strstr (tide_process_list_item_get_command (item), command_part));
          g_assert_cmpstr (tide_process_list_item_get_user (item), ==, "root");
          return (gint) i;
        }
    }
  return -1;
}

static GSubprocess *
start_sleeper (int *pid)
{
  g_autofree char *target = tide_test_gui_build_path ("tests", "targets", "sleeper-alloc", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) lines = NULL;
  g_autofree char *first = NULL;
  GSubprocess *sleeper;

  sleeper = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, target, "--max-seconds", "60", NULL);
  g_assert_no_error (error);
  lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (sleeper));
  /* Closing the pipe would kill the sleeper with SIGPIPE at its next line. */
  g_filter_input_stream_set_close_base_stream (G_FILTER_INPUT_STREAM (lines), FALSE);
  first = g_data_input_stream_read_line (lines, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, "sleeper-alloc running");
  *pid = atoi (g_subprocess_get_identifier (sleeper));
  return sleeper;
}

#endif

static void
test_attach_capture (void)
{
#ifndef TIDE_HAVE_ATTACH
  g_test_skip ("tidemark attach is not built here (needs clang, bpftool and libbpf on x86_64)");
#else
  TideWindow *window;
  TideRecordDialog *dialog;
  g_autoptr(GSubprocess) sleeper = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *attach_dir = g_build_filename (tide_test_gui_dir, "attach", NULL);
  g_autofree char *pid_text = NULL;
  g_autofree char *mode = NULL;
  gint position;
  int pid = 0;

  if (geteuid () != 0)
    {
      g_test_skip ("attaching needs root (CI runs as root)");
      return;
    }
  g_assert_cmpint (g_mkdir (attach_dir, 0755), ==, 0);
  sleeper = start_sleeper (&pid);
  pid_text = g_strdup_printf ("%d", pid);

  window = tide_test_gui_window_new ();
  dialog = _tide_window_present_record_dialog (window);
  g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &dialog);
  tide_record_dialog_set_folder (dialog, attach_dir);
  tide_record_dialog_set_mode (dialog, TIDE_RECORD_MODE_ATTACH);

  /* The list is searchable by name and by pid; a search for something
   * else hides the sleeper. */
  tide_record_dialog_set_search (dialog, "SLEEPER-ALLOC --max-seconds");
  g_assert_cmpint (find_process (dialog, pid, "sleeper-alloc --max-seconds 60"), >=, 0);
  tide_record_dialog_set_search (dialog, "no-such-process-here");
  g_assert_cmpint (find_process (dialog, pid, "sleeper-alloc"), ==, -1);
  tide_record_dialog_set_search (dialog, pid_text);
  position = find_process (dialog, pid, "sleeper-alloc");
  g_assert_cmpint (position, >=, 0);

  /* Choose it and attach for one second through the dialog's action. */
  gtk_selection_model_select_item (tide_record_dialog_get_processes (dialog), position, TRUE);
  tide_record_dialog_set_duration (dialog, 1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record.start", NULL));
  g_assert_null (dialog);    /* closed once the recorder started */
  g_assert_true (_tide_window_is_recording (window));
  g_assert_false (tide_test_gui_action_enabled (window, "win.record"));
  tide_test_iterate_until (recording_ended, window, 120, "the recording to end");
  g_assert_false (_tide_window_is_recording (window));
  g_assert_cmpint (window->recorder_status, ==, 0);

  /* The final trace is open: an attach trace with the sleeper's RSS. */
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  g_assert_true (tide_trace_is_complete (_tide_window_get_trace (window)));
  mode = tide_trace_dup_meta (_tide_window_get_trace (window), "mode");
  g_assert_cmpstr (mode, ==, "attach");
  g_assert_true (g_str_has_prefix (tide_trace_get_path (_tide_window_get_trace (window)), attach_dir));
  g_assert_cmpint (tide_test_query_file_int (tide_trace_get_path (_tide_window_get_trace (window)),
                                             "SELECT count(*) FROM counters"
                                             " WHERE counter = 1 AND value > 0"), >=, 1);
  g_assert_true (tide_test_gui_action_enabled (window, "win.record"));
  gtk_window_destroy (GTK_WINDOW (window));

  /* Detaching left the sleeper running: our SIGKILL is what ends it. */
  g_subprocess_force_exit (sleeper);
  g_assert_true (g_subprocess_wait (sleeper, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_signaled (sleeper));
  g_assert_cmpint (g_subprocess_get_term_sig (sleeper), ==, SIGKILL);
#endif
}

/* A two-rank job: the window opens on the rank that leaks, although it is
 * not the first process; the picker names each process by rank and
 * command and marks the one with a suspect; choosing a process on the job
 * lane moves every view to it. */
/* A step's drill-down CSV holds the chosen process's rows only, though
 * every rank has a step of that number. */
static void
test_export_drilldown_one_process (void)
{
  g_autofree char *dir = g_build_filename (tide_test_gui_dir, "job-export", NULL);
  g_autofree char *csv = g_build_filename (tide_test_gui_dir, "job-drilldown.csv", NULL);
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  TideWindow *window;

  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  path = tide_test_job_trace_write (dir);
  window = tide_test_gui_window_open (path);

  /* Rank 0 keeps nothing in step 5; rank 1 keeps 64 blocks of 16 KiB. */
  tide_session_set_process_id (window->session, 1);
  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_true (_tide_window_export_drilldown_csv (window, csv, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (csv, &contents, NULL, &error));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 2);          /* header, "" */
  g_clear_pointer (&lines, g_strfreev);
  g_clear_pointer (&contents, g_free);

  tide_session_set_process_id (window->session, 2);
  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_true (_tide_window_export_drilldown_csv (window, csv, &error));
  g_assert_true (g_file_get_contents (csv, &contents, NULL, &error));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);          /* header, 1 row, "" */
  g_assert_true (g_str_has_prefix (lines[1], "1,101,rank 1,1,host,1048576,64,"));
  gtk_window_destroy (GTK_WINDOW (window));
  tide_test_trace_remove (dir, path);
}

int
main (int   argc,
      char *argv[])
{
  int status;

  tide_test_gui_init (&argc, &argv);
  g_test_add_func ("/gui/record-beside-open-trace", test_record_beside_open_trace);
  g_test_add_func ("/gui/export-csv", test_export_csv);
  g_test_add_func ("/gui/export-png", test_export_png);
  g_test_add_func ("/gui/export-png-chosen-size", test_export_png_chosen_size);
  g_test_add_func ("/gui/export-drilldown-one-process", test_export_drilldown_one_process);
  g_test_add_func ("/gui/bad-files", test_bad_files);
  g_test_add_func ("/gui/incomplete-trace", test_incomplete_trace);
  g_test_add_func ("/gui/early-end-trace", test_early_end_trace);
  g_test_add_func ("/gui/record-dialog-arguments", test_record_dialog_arguments);
  g_test_add_func ("/gui/live-capture", test_live_capture);
  g_test_add_func ("/gui/attach-capture", test_attach_capture);
  status = g_test_run ();
  tide_test_gui_finish ();
  return status;
}
