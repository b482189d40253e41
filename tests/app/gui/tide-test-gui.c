/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-test-gui.h"
#include "tide-test-util.h"

#include <adwaita.h>
#include <glib/gstdio.h>

char *tide_test_gui_dir;
char *tide_test_gui_trace;

/* @first and what follows, under the build tree: TIDEMARK_BUILD_ROOT,
 * which meson test sets, or the one configured. */
char *
tide_test_gui_build_path (const char *first,
                          ...)
{
  const char *root = g_getenv ("TIDEMARK_BUILD_ROOT");
  g_autofree char *rel = NULL;
  va_list args;

  va_start (args, first);
  rel = g_build_filename_valist (first, &args);
  va_end (args);
  return g_build_filename (root ? root : TIDE_BUILD_ROOT, rel, NULL);
}

/* Runs `tidemark` with @args in the program's folder; returns its output. */
char *
tide_test_gui_run_cli (const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  int status = 0;

  g_ptr_array_add (argv, tide_test_gui_build_path ("app", "tidemark", NULL));
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (tide_test_gui_dir, (char **) argv->pdata, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                NULL, &out, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

static void
record_trace (void)
{
  g_autofree char *target = tide_test_gui_build_path ("tests", "targets", "leaky-steps", NULL);
  const char *args[] = { "record", "--force", "-q", "--all", "-o", tide_test_gui_trace, "--",
                         target, NULL };
  g_autofree char *out = NULL;

  out = tide_test_gui_run_cli (args);
  g_assert_true (g_file_test (tide_test_gui_trace, G_FILE_TEST_EXISTS));
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

/* GTK and libadwaita for a test program, and its folder and trace. */
void
tide_test_gui_init (int    *argc,
                    char ***argv)
{
  gtk_test_init (argc, argv, NULL);
  adw_init ();
  tide_test_gui_dir = tide_test_make_dir ("tide-gui");
  g_assert_nonnull (tide_test_gui_dir);
  tide_test_gui_trace = g_build_filename (tide_test_gui_dir, "leaky-steps.tide", NULL);
  record_trace ();
}

void
tide_test_gui_finish (void)
{
  remove_tree (tide_test_gui_dir);
  g_clear_pointer (&tide_test_gui_trace, g_free);
  g_clear_pointer (&tide_test_gui_dir, g_free);
}

TideWindow *
tide_test_gui_window_new (void)
{
  TideWindow *window = tide_window_new (NULL);

  gtk_window_present (GTK_WINDOW (window));
  return window;
}

TideWindow *
tide_test_gui_window_open (const char *path)
{
  TideWindow *window = tide_test_gui_window_new ();
  g_autoptr(GFile) file = g_file_new_for_path (path);

  tide_window_open_file (window, file);
  return window;
}

/* An action's state, as the widgets bound to it see it. */
gboolean
tide_test_gui_action_enabled (TideWindow *window,
                              const char *action)
{
  GtkWidget *probe = gtk_button_new ();
  gboolean enabled;

  gtk_actionable_set_action_name (GTK_ACTIONABLE (probe), action);
  gtk_box_append (window->timeline_slot, probe);
  enabled = gtk_widget_get_sensitive (probe);
  gtk_box_remove (window->timeline_slot, probe);
  return enabled;
}

/* The drill-down query runs off the main thread: waits for its result. */
void
tide_test_gui_wait_for_drilldown (TideWindow *window)
{
  while (tide_retained_query_get_loading (window->retained))
    g_main_context_iteration (NULL, TRUE);
}
