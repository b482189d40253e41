/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The desktop app's window under Xvfb, on a trace recorded here from
 * tests/targets/leaky-steps with `tidemark record --all`
 * (tide-test-gui.c): templates and action states, the views following
 * the session, the drill-down of the leaking step, what the tables and
 * the flame graph draw, suspects, the job's processes and the palette.
 * Exports, bad files and live capture are test-gui-files.c's.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "tide-application.h"
#include "tide-job-lane.h"
#include "tide-report-rss.h"
#include "tide-steps-view-row.h"
#include "tide-test-gui.h"
#include "tide-test-trace.h"
#include "tide-test-util.h"
#include "tide-test-widget.h"
#include "tide-timeline-view-private.h"
#include "tide-window-private.h"

#define BIG_TENSOR_BYTES    4194304
#define FEATURE_CACHE_BYTES 1572864
#define FEATURE_CACHE_COUNT 96

/* The titles of the column view inside @view's scroller, joined by "|". */
static char *
column_titles (GtkWidget *scroller)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scroller)));
  GListModel *columns = gtk_column_view_get_columns (view);
  g_autoptr(GString) titles = g_string_new (NULL);

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      g_string_append_printf (titles, "%s%s", i ? "|" : "", gtk_column_view_column_get_title (column));
    }
  return g_string_free (g_steal_pointer (&titles), FALSE);
}

static void
test_templates_parse (void)
{
  TideWindow *window = tide_test_gui_window_new ();
  TideRecordDialog *dialog = tide_record_dialog_new (GTK_WINDOW (window), NULL);
  g_autoptr(GtkBuilder) overlay = gtk_builder_new_from_resource ("/dev/tidemark/Tidemark/gtk/help-overlay.ui");

  g_assert_nonnull (window->steps_view);
  g_assert_nonnull (window->drilldown_view);
  g_assert_nonnull (window->flame_graph);
  g_assert_nonnull (window->suspects_view);
  g_assert_nonnull (window->timeline);
  g_assert_true (gtk_widget_get_parent (GTK_WIDGET (window->timeline)) ==
                 GTK_WIDGET (window->timeline_slot));
  /* The tables' columns come from their templates. */
  {
    GtkWidget *drill_box = gtk_widget_get_first_child (GTK_WIDGET (window->drilldown_view));
    g_autofree char *steps = column_titles (gtk_widget_get_first_child (GTK_WIDGET (window->steps_view)));
    g_autofree char *drill = column_titles (gtk_widget_get_last_child (drill_box));

    g_assert_cmpstr (steps, ==, "Step|Duration|Host change|Device change|Retained|Transfers|Ended|"
                                "Δ heap vs compared|Δ retained vs compared");
    g_assert_cmpstr (drill, ==, "Scope, stack, frame|Retained|Allocations|Compared|"
                                "Δ vs compared");
    g_assert_cmpstr (gtk_check_button_get_label (GTK_CHECK_BUTTON (gtk_widget_get_first_child (drill_box))),
                     ==, "Hide plumbing frames");
    gtk_check_button_set_active (GTK_CHECK_BUTTON (gtk_widget_get_first_child (drill_box)), TRUE);
    g_assert_true (tide_drilldown_view_get_hide_plumbing (window->drilldown_view));
    tide_drilldown_view_set_hide_plumbing (window->drilldown_view, FALSE);
    g_assert_false (gtk_check_button_get_active (GTK_CHECK_BUTTON (gtk_widget_get_first_child (drill_box))));
  }
  g_assert_true (GTK_IS_SHORTCUTS_WINDOW (gtk_builder_get_object (overlay, "help_overlay")));
  g_assert_cmpstr (gtk_widget_get_css_name (GTK_WIDGET (window->flame_graph)), ==, "flamegraph");
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_EMPTY);
  gtk_window_destroy (GTK_WINDOW (dialog));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_actions_empty (void)
{
  TideWindow *window = tide_test_gui_window_new ();

  g_assert_true (tide_test_gui_action_enabled (window, "win.open"));
  g_assert_true (tide_test_gui_action_enabled (window, "win.record"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.stop-recording"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.export-png"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.export-steps-csv"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.export-drilldown-csv"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.zoom-in"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.next-step"));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* How every view names the 4 MiB leak: the line of leak_big_tensor that
 * calls malloc. */
static char *
big_tensor_headline (void)
{
  return g_strdup_printf ("leaky-steps.c:%d leak_big_tensor",
                          tide_test_target_line ("leaky-steps.c", "malloc (BIG_TENSOR_SIZE)"));
}

static TideDrilldownNode *
drilldown_row (TideWindow *window,
               guint       position)
{
  GListModel *model = tide_drilldown_view_get_model (window->drilldown_view);
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, position);

  g_assert_nonnull (row);
  /* The node lives as long as the model holds it. */
  {
    TideDrilldownNode *node = gtk_tree_list_row_get_item (row);
    g_object_unref (node);
    return node;
  }
}

static void
test_leaking_step (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  TideDrilldownNode *node;

  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  g_assert_cmpuint (g_list_model_get_n_items (tide_steps_view_get_model (window->steps_view)), ==, 10);
  g_assert_true (tide_test_gui_action_enabled (window, "win.export-png"));
  g_assert_true (tide_test_gui_action_enabled (window, "win.zoom-fit"));
  g_assert_false (tide_test_gui_action_enabled (window, "win.export-drilldown-csv"));

  /* Choosing step 5 in the table selects it on the timeline, and back. */
  tide_steps_view_set_selected_step (window->steps_view, 5);
  g_assert_cmpint (tide_timeline_view_get_selected_step (window->timeline), ==, 5);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_true (tide_test_gui_action_enabled (window, "win.export-drilldown-csv"));

  g_assert_cmpuint (g_list_model_get_n_items (tide_drilldown_view_get_model (window->drilldown_view)), ==, 2);
  node = drilldown_row (window, 0);
  g_assert_cmpint (tide_drilldown_node_get_kind (node), ==, TIDE_DRILLDOWN_STACK);
  g_assert_cmpstr (tide_drilldown_node_get_frame (node)->function, ==, "leak_big_tensor");
  g_assert_cmpint (tide_drilldown_node_get_bytes (node), ==, BIG_TENSOR_BYTES);
  g_assert_cmpint (tide_drilldown_node_get_count (node), ==, 1);
  node = drilldown_row (window, 1);
  g_assert_cmpstr (tide_drilldown_node_get_frame (node)->function, ==, "leak_feature_cache");
  g_assert_cmpint (tide_drilldown_node_get_bytes (node), ==, FEATURE_CACHE_BYTES);
  g_assert_cmpint (tide_drilldown_node_get_count (node), ==, FEATURE_CACHE_COUNT);

  /* The flame graph shows the same selection; search finds one frame. */
  g_assert_cmpint (tide_flame_graph_get_total_bytes (window->flame_graph), ==,
                   BIG_TENSOR_BYTES + FEATURE_CACHE_BYTES);
  gtk_editable_set_text (GTK_EDITABLE (window->flame_search), "leak_big_tensor");
  tide_flame_graph_set_search (window->flame_graph, "leak_big_tensor");
  g_assert_cmpuint (tide_flame_graph_get_n_matches (window->flame_graph), ==, 1);

  /* The timeline's selection reaches the table. */
  tide_timeline_view_set_selected_step (window->timeline, 6);
  g_assert_cmpint (tide_steps_view_get_selected_step (window->steps_view), ==, 6);

  /* Suspects: both leaks, steepest first, each named by its headline:
   * the line of leak_big_tensor that calls malloc, not malloc. */
  g_assert_cmpuint (tide_suspects_view_get_n_rows (window->suspects_view), >=, 2);
  {
    g_autofree char *first = tide_suspects_view_dup_row_text (window->suspects_view, 0);
    g_autofree char *headline = big_tensor_headline ();
    g_autofree char *expected = g_strconcat (headline, "\n", NULL);
    g_assert_true (g_str_has_prefix (first, expected));
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The step chosen in the steps table, or 0 when no row is. */
static gint
table_step (TideWindow *window)
{
  GtkSingleSelection *rows = GTK_SINGLE_SELECTION (tide_steps_view_get_model (window->steps_view));
  gpointer item = gtk_single_selection_get_selected_item (rows);

  return item ? tide_steps_view_row_get_step (item)->number : 0;
}

static void
assert_timeline_window (TideWindow *window,
                        gint64      begin,
                        gint64      end)
{
  gint64 b, e;

  tide_timeline_view_get_visible_range (window->timeline, &b, &e);
  g_assert_cmpint (b, ==, begin);
  g_assert_cmpint (e, ==, end);
  tide_session_get_visible (window->session, &b, &e);
  g_assert_cmpint (b, ==, begin);
  g_assert_cmpint (e, ==, end);
}

/* Every view follows the session: a step set on it shows on the timeline,
 * in the table and in the drill-down; a range dragged on the timeline
 * reaches it and clears the table's row; the zoom keys zoom through it,
 * whichever widget has the focus, and zoom-back undoes them. */
static void
test_session_drives_views (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  gint64 begin, end, span, in1_begin, in1_end, in2_begin, in2_end;

  g_assert_cmpint (tide_session_get_step (window->session), ==, 0);
  g_assert_cmpint (table_step (window), ==, 0);

  tide_session_set_step (window->session, 5);
  g_assert_cmpint (tide_timeline_view_get_selected_step (window->timeline), ==, 5);
  g_assert_cmpint (table_step (window), ==, 5);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_cmpstr (gtk_label_get_text (window->drilldown_title), ==, "Retained by step 5: 5.50 MiB");
  g_assert_cmpuint (g_list_model_get_n_items (tide_drilldown_view_get_model (window->drilldown_view)), ==, 2);
  g_assert_cmpint (tide_drilldown_node_get_bytes (drilldown_row (window, 0)), ==, BIG_TENSOR_BYTES);
  g_assert_cmpint (tide_drilldown_node_get_bytes (drilldown_row (window, 1)), ==, FEATURE_CACHE_BYTES);

  /* Step 1 keeps nothing: the drill-down says so, with no rows. */
  tide_session_set_step (window->session, 1);
  g_assert_cmpint (tide_timeline_view_get_selected_step (window->timeline), ==, 1);
  g_assert_cmpint (table_step (window), ==, 1);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_cmpstr (gtk_label_get_text (window->drilldown_title), ==, "Retained by step 1: 0 B");
  g_assert_cmpuint (g_list_model_get_n_items (tide_drilldown_view_get_model (window->drilldown_view)), ==, 0);

  /* A range dragged on the timeline is the session's, and no step is. */
  tide_timeline_view_get_visible_range (window->timeline, &begin, &end);
  g_signal_emit_by_name (window->timeline, "selection-range", begin, end);
  g_assert_cmpint (tide_session_get_step (window->session), ==, 0);
  g_assert_cmpint (tide_timeline_view_get_selected_step (window->timeline), ==, 0);
  g_assert_cmpint (table_step (window), ==, 0);
  tide_test_gui_wait_for_drilldown (window);
  g_assert_true (g_str_has_prefix (gtk_label_get_text (window->drilldown_title), "Retained in 0.0–"));

  /* Zoom keys: the window's, by 2 around the middle, with the timeline
   * focused or not; Ctrl+BackSpace undoes the last. */
  span = end - begin;
  in1_begin = llround (begin + span / 4.0);
  in1_end = in1_begin + llround (span / 2.0);
  in2_begin = llround (in1_begin + (in1_end - in1_begin) / 4.0);
  in2_end = in2_begin + llround ((in1_end - in1_begin) / 2.0);
  gtk_widget_grab_focus (GTK_WIDGET (window->timeline));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window->timeline), "win.zoom-in", NULL));
  assert_timeline_window (window, in1_begin, in1_end);
  g_assert_true (tide_test_gui_action_enabled (window, "win.zoom-back"));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-in", NULL);
  assert_timeline_window (window, in2_begin, in2_end);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-back", NULL);
  assert_timeline_window (window, in1_begin, in1_end);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-back", NULL);
  assert_timeline_window (window, begin, end);
  g_assert_false (tide_test_gui_action_enabled (window, "win.zoom-back"));

  /* A pan on the timeline moves the session's window too. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-in", NULL);
  tide_timeline_view_set_visible_range (window->timeline, begin, begin + span / 2);
  assert_timeline_window (window, begin, begin + span / 2);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A newer selection cancels the query of the older one; until the newer
 * result comes the view says it is loading and shows nothing, and then
 * it shows the newer selection's rows, whatever order the results came in. */
static void
test_newer_selection_wins (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  g_autoptr(GCancellable) first = NULL;

  tide_session_set_step (window->session, 2);
  g_assert_true (tide_retained_query_get_loading (window->retained));
  g_assert_cmpstr (gtk_label_get_text (window->drilldown_title), ==, "Loading…");
  g_assert_cmpuint (g_list_model_get_n_items (tide_drilldown_view_get_model (window->drilldown_view)), ==, 0);
  g_assert_false (tide_test_gui_action_enabled (window, "win.export-drilldown-csv"));
  first = g_object_ref (_tide_retained_query_get_cancellable (window->retained));

  tide_session_set_step (window->session, 5);
  g_assert_true (g_cancellable_is_cancelled (first));
  g_assert_false (g_cancellable_is_cancelled (
    _tide_retained_query_get_cancellable (window->retained)));
  tide_test_gui_wait_for_drilldown (window);

  g_assert_cmpuint (g_list_model_get_n_items (tide_drilldown_view_get_model (window->drilldown_view)), ==, 2);
  g_assert_cmpstr (tide_drilldown_node_get_frame (drilldown_row (window, 0))->function, ==,
                   "leak_big_tensor");
  g_assert_cmpint (tide_flame_graph_get_total_bytes (window->flame_graph), ==,
                   BIG_TENSOR_BYTES + FEATURE_CACHE_BYTES);
  g_assert_true (g_str_has_prefix (gtk_label_get_text (window->drilldown_title),
                                   "Retained by step 5: "));
  /* The cancelled query's callback has run too and changed nothing. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (g_list_model_get_n_items (tide_drilldown_view_get_model (window->drilldown_view)), ==, 2);
  g_assert_true (g_str_has_prefix (gtk_label_get_text (window->drilldown_title),
                                   "Retained by step 5: "));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A job whose child a SIGKILL ended in step 2: the banner says so, and
 * the steps table's "Ended" column counts it in step 2 and nowhere else. */
static void
test_death (void)
{
  g_autofree char *target = tide_test_gui_build_path ("tests", "targets", "dying-steps", NULL);
  g_autofree char *path = g_build_filename (tide_test_gui_dir, "dying.tide", NULL);
  const char *args[] = { "record", "--force", "-q", "-o", path, "--", target, "--kill-child",
                         NULL };
  g_autofree char *out = tide_test_gui_run_cli (args);
  TideWindow *window = tide_test_gui_window_open (path);
  GListModel *rows = tide_steps_view_get_model (window->steps_view);
  const char *banner = gtk_label_get_text (window->banner_label);

  g_test_message ("banner: %s", banner);
  g_assert_true (g_str_has_prefix (banner, "A process of the job died: dying-steps --kill-child (pid "));
  g_assert_true (g_str_has_suffix (banner, ") killed by SIGKILL."));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (rows, i);
      gint number = tide_steps_view_row_get_step (TIDE_STEPS_VIEW_ROW (item))->number;

      g_assert_cmpint (tide_steps_view_column_value (TIDE_STEPS_COLUMN_ENDED, item), ==, number == 2);
    }
  /* The job lane marks it where it died, in the lane's time (from the
   * trace's start), not the clock's. */
  {
    TideTrace *trace = _tide_window_get_trace (window);
    gint64 span = tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace);
    g_autoptr(GError) error = NULL;
    g_autoptr(TideJobLane) job = tide_job_lane_query_job (trace, &(TideTimeWindow) { 0, span, 100 },
                                                          &error);
    const TideJobDeath *death;

    g_assert_no_error (error);
    g_assert_cmpuint (job->deaths->len, ==, 1);
    death = &g_array_index (job->deaths, TideJobDeath, 0);
    g_assert_cmpint (death->ns, >, 0);
    g_assert_cmpint (death->ns, <, span);
    g_assert_cmpint (death->end.signal, ==, SIGKILL);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A job whose device ran out of memory: the banner says so, and the job
 * lane's mark says why. */
static void
test_device_oom (void)
{
  g_autofree char *target = tide_test_gui_build_path ("tests", "cuda", "cuda-oom", NULL);
  g_autofree char *tidemark = tide_test_gui_build_path ("app", "tidemark", NULL);
  g_autofree char *path = g_build_filename (tide_test_gui_dir, "device-oom.tide", NULL);
  const char *argv[] = { tidemark, "record", "--force", "-q", "-o", path, "--", target, "die",
                         NULL };
  g_auto(GStrv) env = g_environ_setenv (g_get_environ (), "TIDE_STANDIN_DEVICE_MIB", "100", TRUE);
  g_autoptr(GError) error = NULL;
  TideWindow *window;
  TideTrace *trace;
  const char *banner;
  int status = 0;

  g_spawn_sync (tide_test_gui_dir, (char **) argv, env,
                G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
  window = tide_test_gui_window_open (path);
  banner = gtk_label_get_text (window->banner_label);
  g_assert_true (g_str_has_prefix (banner, "A process of the job failed: cuda-oom die (pid "));
  g_assert_true (g_str_has_suffix (banner, ") exited 1 (cuda:0 out of memory)."));
  trace = _tide_window_get_trace (window);
  {
    gint64 span = tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace);
    g_autoptr(TideJobLane) job = tide_job_lane_query_job (trace, &(TideTimeWindow) { 0, span, 100 },
                                                          &error);
    const TideJobDeath *death;

    g_assert_no_error (error);
    g_assert_cmpuint (job->deaths->len, ==, 1);
    death = &g_array_index (job->deaths, TideJobDeath, 0);
    g_assert_true (death->end.device_oom);
    g_assert_cmpint (death->end.oom_device, ==, 0);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Scrolls @flame so that @function's frame is in view: the flame graph
 * scrolls itself to a new selection on its next allocation. */
static void
flame_area (TideFlameGraph  *flame,
            const char      *function,
            graphene_rect_t *area)
{
  gtk_test_widget_wait_for_draw (GTK_WIDGET (flame));
  g_assert_true (tide_flame_graph_get_function_area (flame, function, area));
}

static void
test_flame_graph_zoom (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  TideFlameGraph *flame = window->flame_graph;
  graphene_rect_t start, leak;

  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  gtk_widget_set_size_request (GTK_WIDGET (flame), 400, -1);
  gtk_stack_set_visible_child_name (window->detail_stack, "flame");

  /* It opens on the headline of the largest stack, with its callers
   * below it down to the outermost frame, _start, above the root. */
  g_assert_cmpstr (tide_flame_graph_get_selected_frame (flame)->function, ==, "leak_big_tensor");
  flame_area (flame, "leak_big_tensor", &leak);
  flame_area (flame, "_start", &start);
  g_assert_cmpfloat (start.origin.y, >, leak.origin.y);
  g_assert_cmpfloat (start.origin.y + start.size.height, <=, gtk_widget_get_height (GTK_WIDGET (flame)));

  /* Clicking _start zooms to it and selects it. */
  g_assert_true (tide_flame_graph_activate_at (flame, start.origin.x + 10, start.origin.y + 5));
  g_assert_cmpstr (tide_flame_graph_get_selected_frame (flame)->function, ==, "_start");
  g_assert_cmpstr (tide_flame_graph_get_zoom_label (flame), ==, "_start (leaky-steps)");
  g_assert_cmpint (tide_flame_graph_get_selected_bytes (flame), ==, BIG_TENSOR_BYTES + FEATURE_CACHE_BYTES);
  /* Clicking the zoomed frame again goes back one level, to the root on
   * the bottom row: nothing selected. */
  flame_area (flame, "_start", &start);
  g_assert_true (tide_flame_graph_activate_at (flame, start.origin.x + 10, start.origin.y + 5));
  g_assert_cmpstr (tide_flame_graph_get_zoom_label (flame), ==, "all");
  flame_area (flame, "_start", &start);
  g_assert_true (tide_flame_graph_activate_at (flame, start.origin.x + 10, start.origin.y + 25));
  g_assert_null (tide_flame_graph_get_selected_frame (flame));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Mapped labels with text under @root, at least partly inside @view. */
static void
collect_labels (GtkWidget *view,
                GtkWidget *root,
                GPtrArray *labels)
{
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      graphene_rect_t bounds;

      if (!gtk_widget_get_mapped (child) || !gtk_widget_compute_bounds (child, view, &bounds))
        continue;
      /* Scrolled out of the view, or mostly: not drawn there. */
      if (bounds.origin.y + bounds.size.height / 2 <= 0 ||
          bounds.origin.y + bounds.size.height / 2 >= gtk_widget_get_height (view) ||
          bounds.origin.x + bounds.size.width / 2 >= gtk_widget_get_width (view))
        continue;
      if (GTK_IS_LABEL (child) && *gtk_label_get_text (GTK_LABEL (child)) != '\0')
        g_ptr_array_add (labels, child);
      collect_labels (view, child, labels);
    }
}

/* Renders @view and checks that every label in it shows ink where it is:
 * a view that draws nothing, or blank rows, fails.  Returns the labels. */
static GPtrArray *
assert_labels_drawn (GtkWidget  *view,
                     guint32   **pixels,
                     int        *width,
                     int        *height)
{
  GPtrArray *labels = g_ptr_array_new ();

  gtk_test_widget_wait_for_draw (view);
  collect_labels (view, view, labels);
  g_assert_cmpuint (labels->len, >, 0);
  *pixels = tide_test_render_mapped (view, width, height);
  for (guint i = 0; i < labels->len; i++)
    {
      GtkWidget *label = g_ptr_array_index (labels, i);
      graphene_rect_t bounds;
      guint ink;

      g_assert_true (gtk_widget_compute_bounds (label, view, &bounds));
      tide_test_area_mode (*pixels, *width, *height, &bounds, &ink);
      if (ink < 10)
        g_error ("%s: the label \"%s\" at %.0f,%.0f is not drawn",
                 G_OBJECT_TYPE_NAME (view), gtk_label_get_text (GTK_LABEL (label)),
                 bounds.origin.x, bounds.origin.y);
    }
  return labels;
}

/* The first of @labels whose text starts with @prefix followed by a
 * space, a new line or nothing. */
static GtkWidget *
find_label (GPtrArray  *labels,
            const char *prefix)
{
  for (guint i = 0; i < labels->len; i++)
    {
      const char *text = gtk_label_get_text (g_ptr_array_index (labels, i));

      if (g_str_has_prefix (text, prefix) && strchr (" \n", text[strlen (prefix)]))
        return g_ptr_array_index (labels, i);
    }
  g_error ("no label drawn starts with \"%s\"", prefix);
  return NULL;
}

/* The list row ("row" CSS node) that holds @widget. */
static GtkWidget *
row_of (GtkWidget *widget)
{
  while (widget != NULL && g_strcmp0 (gtk_widget_get_css_name (widget), "row") != 0)
    widget = gtk_widget_get_parent (widget);
  g_assert_nonnull (widget);
  return widget;
}

/* The background of @row in @view's pixels. */
static guint32
row_color (GtkWidget     *view,
           GtkWidget     *row,
           const guint32 *pixels,
           int            width,
           int            height)
{
  graphene_rect_t bounds;

  g_assert_true (gtk_widget_compute_bounds (row, view, &bounds));
  return tide_test_area_mode (pixels, width, height, &bounds, NULL);
}

/* The steps table draws a row per step, its cells' text, and the chosen
 * step's row in the selection's colour. */
static void
test_steps_table_draws (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  GtkWidget *view = GTK_WIDGET (window->steps_view);
  g_autoptr(GPtrArray) labels = NULL;
  g_autofree guint32 *pixels = NULL;
  g_autoptr(GHashTable) rows = g_hash_table_new (NULL, NULL);
  GtkWidget *chosen, *other;
  int width, height;

  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  labels = assert_labels_drawn (view, &pixels, &width, &height);
  for (guint i = 0; i < labels->len; i++)
    if (g_strcmp0 (gtk_widget_get_css_name (gtk_widget_get_parent (g_ptr_array_index (labels, i))), "cell") == 0)
      g_hash_table_add (rows, row_of (g_ptr_array_index (labels, i)));
  /* Ten steps; the table shows at least the first five whole. */
  g_assert_cmpuint (g_hash_table_size (rows), >=, 5);
  g_assert_cmpuint (g_hash_table_size (rows), <=, 10);
  chosen = row_of (find_label (labels, "5"));
  other = row_of (find_label (labels, "1"));
  g_assert_true (gtk_widget_get_state_flags (chosen) & GTK_STATE_FLAG_SELECTED);
  g_assert_cmphex (row_color (view, chosen, pixels, width, height), !=,
                   row_color (view, other, pixels, width, height));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The drill-down draws the step's two stacks, each with its bytes. */
static void
test_drilldown_draws (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  GtkWidget *view = GTK_WIDGET (window->drilldown_view);
  g_autoptr(GPtrArray) labels = NULL;
  g_autofree guint32 *pixels = NULL;
  g_autofree char *big = big_tensor_headline ();
  g_autofree char *feature = NULL;
  int width, height;

  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  feature = g_strdup_printf ("leaky-steps.c:%d leak_feature_cache",
                             tide_drilldown_node_get_frame (drilldown_row (window, 1))->line);
  gtk_stack_set_visible_child_name (window->detail_stack, "drilldown");
  labels = assert_labels_drawn (view, &pixels, &width, &height);
  g_assert_true (row_of (find_label (labels, big)) == row_of (find_label (labels, "4.00 MiB")));
  g_assert_true (row_of (find_label (labels, big)) != row_of (find_label (labels, "1.50 MiB")));
  g_assert_true (row_of (find_label (labels, feature)) ==
                 row_of (find_label (labels, "1.50 MiB")));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The leak suspects list draws each suspect's headline, the first one
 * chosen. */
static void
test_suspects_draw (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  GtkWidget *view = GTK_WIDGET (window->suspects_view);
  g_autoptr(GPtrArray) labels = NULL;
  g_autofree guint32 *pixels = NULL;
  g_autofree char *first = big_tensor_headline ();
  g_autofree char *second_line = NULL;
  GtkWidget *chosen, *second;
  int width, height;

  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  second_line = g_strdup_printf ("leaky-steps.c:%d leak_feature_cache",
                                 tide_drilldown_node_get_frame (drilldown_row (window, 1))->line);
  gtk_stack_set_visible_child_name (window->detail_stack, "suspects");
  labels = assert_labels_drawn (view, &pixels, &width, &height);
  chosen = row_of (find_label (labels, first));
  second = row_of (find_label (labels, second_line));
  g_assert_true (second != chosen);
  g_assert_true (gtk_widget_get_state_flags (chosen) & GTK_STATE_FLAG_SELECTED);
  g_assert_cmphex (row_color (view, chosen, pixels, width, height), !=,
                   row_color (view, second, pixels, width, height));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The flame graph draws: the leaking frame in its kind's colour where
 * the model puts it, outlined as the selection, with its callers below
 * it in another colour; not a blank pane. */
static void
test_flame_graph_draws (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  GtkWidget *view = GTK_WIDGET (window->flame_graph);
  const TideFrame *frame;
  g_autofree char *label = NULL;
  g_autofree guint32 *pixels = NULL;
  graphene_rect_t leak, caller, inside;
  guint ink;
  int width, height;

  tide_session_set_step (window->session, 5);
  tide_test_gui_wait_for_drilldown (window);
  gtk_stack_set_visible_child_name (window->detail_stack, "flame");
  flame_area (window->flame_graph, "leak_big_tensor", &leak);
  flame_area (window->flame_graph, "main", &caller);
  frame = tide_flame_graph_get_selected_frame (window->flame_graph);
  g_assert_cmpstr (frame->function, ==, "leak_big_tensor");
  label = tide_frame_describe (frame);
  pixels = tide_test_render_mapped (view, &width, &height);

  /* In view, the full width of the zoomed pane. */
  g_assert_cmpfloat (leak.origin.y, >=, 0);
  g_assert_cmpfloat (leak.origin.y + leak.size.height, <=, height);
  g_assert_cmpfloat (leak.size.width, ==, width);
  /* Inside the outline: the native frames' colour, with its name drawn. */
  graphene_rect_inset_r (&leak, 3, 3, &inside);
  g_assert_cmphex (tide_test_area_mode (pixels, width, height, &inside, &ink), ==,
                   0xff000000 | tide_flame_graph_frame_rgb (frame, label));
  g_assert_cmpuint (ink, >=, 20);
  /* The selection outline, in the accent colour, on its left edge. */
  g_assert_cmphex (pixels[(int) (leak.origin.y + leak.size.height / 2) * width] & 0xffffff, ==, 0x3584e4);
  /* Its caller: below it (the root is at the bottom), drawn, dimmed. */
  g_assert_cmpfloat (caller.origin.y, >, leak.origin.y);
  graphene_rect_inset_r (&caller, 3, 3, &inside);
  {
    guint32 dimmed = tide_test_area_mode (pixels, width, height, &inside, &ink);

    g_assert_cmphex (dimmed, !=, 0xff000000 | tide_flame_graph_frame_rgb (frame, label));
    g_assert_cmphex (dimmed, !=, tide_test_area_mode (pixels, width, height,
                                                      &GRAPHENE_RECT_INIT (0, 0, width, 3), NULL));
    g_assert_cmpuint (ink, >=, 20);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Choosing a suspect highlights its growth on the timeline instead of
 * selecting a range; choosing none clears it.  The window opens with the
 * top one chosen. */
static void
test_suspect_highlight (void)
{
  TideWindow *window = tide_test_gui_window_open (tide_test_gui_trace);
  const TideGroup *suspect;
  gint64 range_begin;

  g_assert_cmpuint (tide_suspects_view_get_n_rows (window->suspects_view), >, 0);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (window->detail_stack), ==, "suspects");
  suspect = tide_suspects_view_get_selected (window->suspects_view);
  g_assert_nonnull (suspect);
  g_assert_cmpint (tide_timeline_view_get_highlight_step (window->timeline), ==,
                   suspect->growth_step);
  tide_suspects_view_select (window->suspects_view, -1);
  g_assert_cmpint (tide_timeline_view_get_highlight_step (window->timeline), ==, 0);
  tide_suspects_view_select (window->suspects_view, 0);
  suspect = tide_suspects_view_get_selected (window->suspects_view);
  g_assert_nonnull (suspect);
  g_assert_cmpint (suspect->growth_step, >, 0);
  g_assert_cmpint (tide_timeline_view_get_highlight_step (window->timeline), ==,
                   suspect->growth_step);
  g_assert_cmpuint (window->timeline->highlight->len, >=, (guint) suspect->growth_step);
  g_assert_cmpint (g_array_index (window->timeline->highlight, TideSeriesPoint,
                                  window->timeline->highlight->len - 1).live_bytes, ==,
                   suspect->bytes);
  tide_timeline_view_get_selection_range (window->timeline, &range_begin, NULL);
  g_assert_cmpint (range_begin, ==, -1);
  tide_suspects_view_select (window->suspects_view, -1);
  g_assert_cmpint (tide_timeline_view_get_highlight_step (window->timeline), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A copy of @fields that owns its label and name. */
static TideClassSuspect *
class_suspect_new (const TideClassSuspect *fields,
                   const char             *label,
                   const char             *name)
{
  TideClassSuspect *s = g_memdup2 (fields, sizeof *fields);

  s->process.role = g_strdup (label);
  s->name = g_strdup (name);
  return s;
}

/* A class of resident memory that grows, after the stacks: its line and
 * its hint, in a row that cannot be chosen, as it has no stack to show. */
static void
test_class_suspect_rows (void)
{
  GtkWidget *view = g_object_ref_sink (tide_suspects_view_new ());
  g_autoptr(GPtrArray) classes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_class_suspect_free);
  g_autofree char *text = NULL;
  g_autofree char *python = NULL;
  gint selected = 0;

  g_ptr_array_add (classes, class_suspect_new (&(TideClassSuspect) {
                     .kind = TIDE_CLASS_SUSPECT_COW, .process = { .id = 2, .pid = 4242 },
                     .growth_step = 3, .growth_bytes = 4 * 8388608, .bytes_per_step = 8388608,
                     .end_bytes = 4 * 8388608, .hint = "keep the data in numpy arrays" },
                   "DataLoader worker 0", "copy-on-write in DataLoader worker 0"));
  tide_suspects_view_set_suspects (TIDE_SUSPECTS_VIEW (view), NULL);
  tide_suspects_view_set_class_suspects (TIDE_SUSPECTS_VIEW (view), classes);
  g_assert_cmpuint (tide_suspects_view_get_n_rows (TIDE_SUSPECTS_VIEW (view)), ==, 1);
  text = tide_suspects_view_dup_row_text (TIDE_SUSPECTS_VIEW (view), 0);
  g_assert_cmpstr (text, ==, "copy-on-write in DataLoader worker 0, +8.00 MiB/step since step 3, "
                             "32.00 MiB copied (pid 4242, host)\nkeep the data in numpy arrays");
  tide_suspects_view_select (TIDE_SUSPECTS_VIEW (view), 0);
  g_assert_null (tide_suspects_view_get_selected (TIDE_SUSPECTS_VIEW (view)));
  g_object_get (view, "selected", &selected, NULL);
  g_assert_cmpint (selected, ==, -1);
  /* Setting the stacks again keeps the classes after them. */
  tide_suspects_view_set_suspects (TIDE_SUSPECTS_VIEW (view), NULL);
  g_assert_cmpuint (tide_suspects_view_get_n_rows (TIDE_SUSPECTS_VIEW (view)), ==, 1);

  /* Python's arenas kept mapped by a few objects: a row of the same shape. */
  g_ptr_array_add (classes, class_suspect_new (&(TideClassSuspect) {
                     .kind = TIDE_CLASS_SUSPECT_PY_ARENA_FREE, .process = { .id = 1, .pid = 4241 },
                     .growth_step = 2, .growth_bytes = 5 * 4194304, .bytes_per_step = 4194304,
                     .end_bytes = 6 * 4194304,
                     .hint = "an arena is returned only when every object in it is freed" },
                   "python3 train.py", "Python's allocator keeps 24.00 MiB free in its arenas"));
  tide_suspects_view_set_class_suspects (TIDE_SUSPECTS_VIEW (view), classes);
  g_assert_cmpuint (tide_suspects_view_get_n_rows (TIDE_SUSPECTS_VIEW (view)), ==, 2);
  python = tide_suspects_view_dup_row_text (TIDE_SUSPECTS_VIEW (view), 1);
  g_assert_cmpstr (python, ==, "Python's allocator keeps 24.00 MiB free in its arenas, "
                               "+4.00 MiB/step since step 2, in python3 train.py (pid 4241, host)\n"
                               "an arena is returned only when every object in it is freed");
  g_object_unref (view);
}

/* A two-rank trace: the picker names each rank with its command and marks
 * the one with a suspect, and the window opens on it, not on rank 0. */
static void
test_open_on_leaking_rank (void)
{
  g_autofree char *path = g_build_filename (tide_test_gui_dir, "two-ranks.tide", NULL);
  TideWindow *window;
  GListModel *names;

  tide_test_write_two_ranks (path);
  window = tide_test_gui_window_open (path);
  g_assert_cmpint (window->state, ==, TIDE_WINDOW_TRACE);
  names = gtk_drop_down_get_model (window->process_dropdown);
  g_assert_cmpuint (g_list_model_get_n_items (names), ==, 2);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), 0), ==,
                   "rank 0 · train --ddp");
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), 1), ==,
                   "rank 1 · train --ddp · 1 suspect");
  g_assert_cmpint (tide_session_get_process_id (window->session), ==, 2);
  g_assert_cmpuint (gtk_drop_down_get_selected (window->process_dropdown), ==, 1);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->process_bar)));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* One recording of tide_test_write_two_ranks() made on @host. */
static char *
write_node (const char *name,
            const char *host)
{
  char *path = g_build_filename (tide_test_gui_dir, name, NULL);
  g_autofree char *sql = g_strdup_printf ("INSERT OR REPLACE INTO meta (key, value)"
                                          " VALUES ('hostname', '%s')", host);

  tide_test_write_two_ranks (path);
  tide_test_exec_sql (path, sql);
  return path;
}

/* A merged job lists its processes host by host, each named with its
 * host, though node-b's were merged (and numbered) first. */
static void
test_processes_by_host (void)
{
  g_autofree char *b = write_node ("node-b.tide", "node-b");
  g_autofree char *a = write_node ("node-a.tide", "node-a");
  g_autofree char *job = g_build_filename (tide_test_gui_dir, "job-by-host.tide", NULL);
  const char *args[] = { "merge", b, a, "-o", job, NULL };
  const char *expected[] = {
    "rank 0 on node-a · train --ddp", "rank 1 on node-a · train --ddp · 1 suspect",
    "rank 0 on node-b · train --ddp", "rank 1 on node-b · train --ddp · 1 suspect",
  };
  g_autofree char *out = tide_test_gui_run_cli (args);
  TideWindow *window = tide_test_gui_window_open (job);
  GListModel *names = gtk_drop_down_get_model (window->process_dropdown);

  g_assert_cmpint (window->state, ==, TIDE_WINDOW_TRACE);
  g_assert_cmpuint (g_list_model_get_n_items (names), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), i), ==, expected[i]);
  /* Rows and processes stay paired: node-a's rank 1 was merged third. */
  gtk_drop_down_set_selected (window->process_dropdown, 1);
  g_assert_cmpint (tide_session_get_process_id (window->session), ==, 4);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_job (void)
{
  g_autofree char *dir = g_build_filename (tide_test_gui_dir, "job", NULL);
  g_autofree char *path = NULL;
  TideWindow *window;
  GListModel *names;
  gint64 picked = 0;
  int width, height;

  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  path = tide_test_job_trace_write (dir);
  window = tide_test_gui_window_open (path);
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  g_assert_cmpint (tide_session_get_process_id (window->session), ==, 2);
  g_assert_cmpint (tide_timeline_view_get_process_id (window->timeline), ==, 2);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->process_bar)));
  names = gtk_drop_down_get_model (window->process_dropdown);
  g_assert_cmpuint (g_list_model_get_n_items (names), ==, 2);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), 0), ==,
                   "rank 0 · python3 train.py");
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (names), 1), ==,
                   "rank 1 · python3 train.py · 1 suspect");
  g_assert_cmpuint (gtk_drop_down_get_selected (window->process_dropdown), ==, 1);

  /* Rank 0's band is the bottom of the job lane: the lowest row that is on
   * a band, in the middle of the timeline. */
  gtk_test_widget_wait_for_draw (GTK_WIDGET (window->timeline));
  width = gtk_widget_get_width (GTK_WIDGET (window->timeline));
  height = gtk_widget_get_height (GTK_WIDGET (window->timeline));
  for (int y = height - 1; y >= 0 && picked == 0; y--)
    picked = tide_timeline_view_process_at (window->timeline, width / 2, y);
  g_assert_cmpint (picked, ==, 1);
  tide_timeline_view_set_process_id (window->timeline, picked);
  g_assert_cmpint (tide_session_get_process_id (window->session), ==, 1);
  g_assert_cmpint (tide_steps_view_get_process_id (window->steps_view), ==, 1);
  g_assert_cmpuint (gtk_drop_down_get_selected (window->process_dropdown), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  tide_test_trace_remove (dir, path);
}

typedef struct
{
  TideWindow *window;
  guint32     background;
} PaletteWait;

static gboolean
palette_has_background (gpointer data)
{
  PaletteWait *wait = data;

  return tide_timeline_view_get_palette (wait->window->timeline)->background == wait->background;
}

/* The timeline's colours are the app's stylesheet's, and follow
 * AdwStyleManager's dark setting: the application loads style-dark.css
 * while the style manager is dark.  Last: the stylesheets stay loaded. */
static void
test_palette_follows_style_manager (void)
{
  g_autoptr(TideApplication) app = tide_application_new ();
  g_autoptr(GError) error = NULL;
  AdwStyleManager *manager;
  g_autoptr(GtkCssProvider) provider = NULL;
  PaletteWait wait;
  const TidePalette *palette;

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  manager = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_LIGHT);
  wait.window = tide_test_gui_window_open (tide_test_gui_trace);
  gtk_window_set_application (GTK_WINDOW (wait.window), GTK_APPLICATION (app));

  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_DARK);
  g_assert_true (adw_style_manager_get_dark (manager));
  wait.background = 0x1e1e1e;
  tide_test_iterate_until (palette_has_background, &wait, 30, "the style's background in the palette");
  palette = tide_timeline_view_get_palette (wait.window->timeline);
  g_assert_cmphex (palette->background, ==, 0x1e1e1e);
  g_assert_cmphex (palette->text, ==, 0xffffff);
  g_assert_cmphex (palette->lane_line[0], ==, 0x62a0ea);
  g_assert_cmphex (palette->process[1], ==, 0xffa348);

  /* Any stylesheet may name a colour: the palette takes what it says. */
  provider = gtk_css_provider_new ();
  gtk_css_provider_load_from_data (provider, "@define-color tide_background #010203;", -1);
  gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                              GTK_STYLE_PROVIDER (provider),
                                              GTK_STYLE_PROVIDER_PRIORITY_USER);
  wait.background = 0x010203;
  tide_test_iterate_until (palette_has_background, &wait, 30, "the style's background in the palette");
  g_assert_cmphex (tide_timeline_view_get_palette (wait.window->timeline)->background, ==, 0x010203);
  gtk_style_context_remove_provider_for_display (gdk_display_get_default (),
                                                 GTK_STYLE_PROVIDER (provider));

  /* Back to light: PNG export's colours, one by one. */
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_LIGHT);
  wait.background = 0xffffff;
  tide_test_iterate_until (palette_has_background, &wait, 30, "the style's background in the palette");
  g_assert_cmpmem (tide_timeline_view_get_palette (wait.window->timeline), sizeof (TidePalette),
                   &tide_palette_light, sizeof (TidePalette));
  gtk_window_destroy (GTK_WINDOW (wait.window));
}

int
main (int   argc,
      char *argv[])
{
  int status;

  tide_test_gui_init (&argc, &argv);
  g_test_add_func ("/gui/templates-parse", test_templates_parse);
  g_test_add_func ("/gui/actions-empty", test_actions_empty);
  g_test_add_func ("/gui/leaking-step", test_leaking_step);
  g_test_add_func ("/gui/newer-selection-wins", test_newer_selection_wins);
  g_test_add_func ("/gui/session-drives-views", test_session_drives_views);
  g_test_add_func ("/gui/flame-graph-zoom", test_flame_graph_zoom);
  g_test_add_func ("/gui/death", test_death);
  g_test_add_func ("/gui/device-oom", test_device_oom);
  g_test_add_func ("/gui/draws/steps-table", test_steps_table_draws);
  g_test_add_func ("/gui/draws/drilldown", test_drilldown_draws);
  g_test_add_func ("/gui/draws/suspects", test_suspects_draw);
  g_test_add_func ("/gui/draws/flame-graph", test_flame_graph_draws);
  g_test_add_func ("/gui/suspect-highlight", test_suspect_highlight);
  g_test_add_func ("/gui/class-suspect-rows", test_class_suspect_rows);
  g_test_add_func ("/gui/job", test_job);
  g_test_add_func ("/gui/open-on-leaking-rank", test_open_on_leaking_rank);
  g_test_add_func ("/gui/processes-by-host", test_processes_by_host);
  g_test_add_func ("/gui/palette-follows-style-manager", test_palette_follows_style_manager);
  status = g_test_run ();
  tide_test_gui_finish ();
  return status;
}
