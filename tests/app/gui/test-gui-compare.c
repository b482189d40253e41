/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Compare With… under Xvfb: the synthetic trace (tide-test-trace.h) shown,
 * its half-fixed run (half-length steps, half the leak, heap and RSS
 * growing half as fast) compared with it.  The fixed run's lanes are drawn dashed over
 * the shown ones in the stylesheet's named colour, step N over step N;
 * the steps table gets the differences; the comparison exports as CSV.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tide-application.h"
#include "tide-render.h"
#include "tide-schema.h"
#include "tide-steps-view-row.h"
#include "tide-test-trace.h"
#include "tide-test-util.h"
#include "tide-test-widget.h"
#include "tide-timeline-view-private.h"
#include "tide-window-private.h"

#define LEAK_BYTES       (96 * G_GINT64_CONSTANT (16384))  /* kept by each leaking step */
#define FIXED_LEAK_BYTES (TEST_FIXED_LEAK_BLOCKS * G_GINT64_CONSTANT (16384))

static char *tmp_dir;
static char *shown_path;
static char *fixed_path;

static TideWindow *
window_open (const char *path)
{
  TideWindow *window = tide_window_new (NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 900);
  gtk_window_present (GTK_WINDOW (window));
  tide_window_open_file (window, file);
  return window;
}

static void
compare_with (TideWindow *window,
              const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;

  g_assert_true (_tide_window_compare_file (window, file, &error));
  g_assert_no_error (error);
}

static gboolean
timeline_drawn (gpointer data)
{
  TideTimelineView *timeline = ((TideWindow *) data)->timeline;

  return gtk_widget_get_width (GTK_WIDGET (timeline)) > 0 && timeline->frame != NULL;
}

typedef struct
{
  TideWindow *window;
  guint32     compare;
} PaletteWait;

static gboolean
palette_has_compare (gpointer data)
{
  PaletteWait *wait = data;

  return tide_timeline_view_get_palette (wait->window->timeline)->compare == wait->compare;
}

/* The live heap lane's row (lane 1) where @value is drawn, on the lane's
 * scale: the larger peak of the two runs. */
static int
heap_row (TideTimelineView *timeline,
          int               width,
          int               height,
          gint64            value)
{
  TideRenderScene scene = {
    .data = tide_timeline_view_get_data (timeline),
    .compare = tide_timeline_view_get_compare_data (timeline),
    .n_transfers = 1,
  };
  TideRenderLayout layout;
  const TideLaneData *heap = g_ptr_array_index (scene.data->lanes, 1);

  g_assert_cmpint (heap->counter, ==, TIDE_COUNTER_HEAP_LIVE);
  g_assert_cmpint (tide_render_lane_peak (&scene, 1), ==, test_heap (TEST_N_STEPS));
  tide_render_layout (&scene, width, height, &layout);
  return (int) tide_render_value_to_y (&layout, 1, value, tide_render_lane_peak (&scene, 1));
}

/* In the middle of step 5 of the shown run (a column where the dash is
 * drawn), the fixed run's step 5 heap is drawn in @compare; in the gap
 * between dashes, the same row is the shown lane's fill.  Aligned by time
 * instead of by step, the fixed run's value there would be its step 10's,
 * 20 MiB, on the shown curve's row. */
static void
assert_overlay (TideWindow *window,
                guint32     compare)
{
  GtkWidget *view = GTK_WIDGET (window->timeline);
  int width = gtk_widget_get_width (view), height = gtk_widget_get_height (view);
  g_autofree guint32 *pixels = tide_test_render_widget (view, width, height);
  const TidePalette *palette = tide_timeline_view_get_palette (window->timeline);
  int y = heap_row (window->timeline, width, height, test_fixed_heap (5));
  int shown_y = heap_row (window->timeline, width, height, test_heap (5));
  int mid = (int) (4.5 * width / TEST_N_STEPS);
  int dash = mid - mid % (2 * TIDE_RENDER_COMPARE_DASH) + 1;
  int gap = dash + TIDE_RENDER_COMPARE_DASH;

  g_assert_null (tide_timeline_view_get_error (window->timeline));
  g_assert_cmpint (shown_y, <, y - 2);
  g_assert_cmphex (pixels[y * width + dash] & 0xffffff, ==, compare);
  g_assert_cmphex (pixels[(y - 1) * width + dash] & 0xffffff, ==, compare);
  g_assert_cmphex (pixels[(y + 1) * width + dash] & 0xffffff, !=, compare);
  g_assert_cmphex (pixels[y * width + gap] & 0xffffff, ==, palette->lane_fill[1]);
  g_assert_cmphex (pixels[shown_y * width + dash] & 0xffffff, ==, palette->lane_line[1]);
}

/* The app (AdwApplication loads its style.css), in the light style. */
static TideApplication *
light_app (void)
{
  TideApplication *app = tide_application_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      ADW_COLOR_SCHEME_FORCE_LIGHT);
  return app;
}

static void
test_overlay (void)
{
  g_autoptr(TideApplication) app = light_app ();
  TideWindow *window = window_open (shown_path);
  PaletteWait wait = { window, 0xdeddda };

  gtk_window_set_application (GTK_WINDOW (window), GTK_APPLICATION (app));
  compare_with (window, fixed_path);
  g_assert_nonnull (tide_session_get_comparison (window->session));
  g_assert_cmpstr (adw_window_title_get_subtitle (window->title), ==,
                   "timeline.tide compared with fixed.tide");
  tide_test_iterate_until (timeline_drawn, window, 30, "the timeline to draw");
  g_assert_true (timeline_drawn (window));
  g_assert_cmphex (tide_timeline_view_get_palette (window->timeline)->compare, ==, 0x3d3846);
  assert_overlay (window, 0x3d3846);

  /* The colour is the stylesheet's named one: style-dark.css's in the
   * dark style. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      ADW_COLOR_SCHEME_FORCE_DARK);
  tide_test_iterate_until (palette_has_compare, &wait, 30, "the compare palette");
  g_assert_true (palette_has_compare (&wait));
  assert_overlay (window, 0xdeddda);
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      ADW_COLOR_SCHEME_FORCE_LIGHT);

  /* Ending the comparison takes the overlay away. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.end-compare", NULL);
  g_assert_null (tide_session_get_comparison (window->session));
  g_assert_null (tide_timeline_view_get_compare_trace (window->timeline));
  gtk_window_destroy (GTK_WINDOW (window));
}

static TideStepsViewRow *
steps_row (TideWindow *window,
           gint        number)
{
  GListModel *model = tide_steps_view_get_model (window->steps_view);

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      TideStepsViewRow *row = g_list_model_get_item (model, i);

      if (tide_steps_view_row_get_step (row)->number == number)
        return row;
      g_object_unref (row);
    }
  g_assert_not_reached ();
}

static GtkColumnViewColumn *
column_titled (TideWindow *window,
               const char *title)
{
  GtkWidget *scroller = gtk_widget_get_first_child (GTK_WIDGET (window->steps_view));
  GtkColumnView *view = GTK_COLUMN_VIEW (gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scroller)));
  GListModel *columns = gtk_column_view_get_columns (view);

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      if (g_strcmp0 (gtk_column_view_column_get_title (column), title) == 0)
        return column;
    }
  g_assert_not_reached ();
}

/* The fixed run keeps half: from the leak's first step on, it retains and
 * grows its heap by LEAK_BYTES - FIXED_LEAK_BYTES less than the shown run,
 * step for step. */
static void
test_difference_columns (void)
{
  TideWindow *window = window_open (shown_path);
  GtkColumnViewColumn *heap = column_titled (window, "Δ heap vs compared");
  GtkColumnViewColumn *retained = column_titled (window, "Δ retained vs compared");

  g_assert_false (gtk_column_view_column_get_visible (heap));
  g_assert_false (gtk_column_view_column_get_visible (retained));
  compare_with (window, fixed_path);
  g_assert_true (gtk_column_view_column_get_visible (heap));
  g_assert_true (gtk_column_view_column_get_visible (retained));
  for (gint k = 1; k <= TEST_N_STEPS; k++)
    {
      g_autoptr(TideStepsViewRow) row = steps_row (window, k);
      gint64 expected = k >= TEST_LEAK_FROM ? FIXED_LEAK_BYTES - LEAK_BYTES : 0;

      g_assert_true (tide_steps_view_column_known (TIDE_STEPS_COLUMN_HEAP_DIFF, row));
      g_assert_cmpint (tide_steps_view_row_get_compared (row)->number, ==, k);
      g_assert_cmpint (tide_steps_view_column_value (TIDE_STEPS_COLUMN_HEAP_DIFF, row), ==,
                       expected);
      g_assert_cmpint (tide_steps_view_column_value (TIDE_STEPS_COLUMN_RETAINED_DIFF, row), ==,
                       expected);
    }

  gtk_widget_activate_action (GTK_WIDGET (window), "win.end-compare", NULL);
  g_assert_false (gtk_column_view_column_get_visible (heap));
  {
    g_autoptr(TideStepsViewRow) row = steps_row (window, 5);
    g_assert_false (tide_steps_view_column_known (TIDE_STEPS_COLUMN_HEAP_DIFF, row));
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The window's Comparison as CSV: `tidemark diff --steps --format csv`'s
 * rows, each step of the shown run against the fixed run's.  A step's RSS
 * change runs from its first sample to the first at or after its end (the
 * next step's; none after the last step); the device counter of these
 * traces is a usage counter, not recorded device blocks, so no step
 * changes device memory. */
static void
test_export_csv (void)
{
  TideWindow *window = window_open (shown_path);
  g_autofree char *path = g_build_filename (tmp_dir, "comparison.csv", NULL);
  g_autofree char *csv = NULL;
  g_autoptr(GString) expected = g_string_new ("step_before,step_after,label,"
                                              "rss_change_before,rss_change_after,rss_change_diff,"
                                              "heap_change_before,heap_change_after,"
                                              "heap_change_diff,device_change_before,"
                                              "device_change_after,device_change_diff,"
                                              "retained_before,retained_after,retained_diff\n");
  g_autoptr(GError) error = NULL;

  compare_with (window, fixed_path);
  g_assert_true (_tide_window_export_compare_csv (window, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &csv, NULL, &error));
  for (gint k = 1; k <= TEST_N_STEPS; k++)
    {
      gint64 rss = k < TEST_N_STEPS ? test_rss (k + 1) - test_rss (k) : 0;
      gint64 fixed_rss = k < TEST_N_STEPS ? test_fixed_rss (k + 1) - test_fixed_rss (k) : 0;
      gint64 leak = k >= TEST_LEAK_FROM ? LEAK_BYTES : 0;
      gint64 fixed_leak = k >= TEST_LEAK_FROM ? FIXED_LEAK_BYTES : 0;

      g_string_append_printf (expected, "%d,%d,,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
                              G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
                              G_GINT64_FORMAT ",0,0,0,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                              ",%" G_GINT64_FORMAT "\n",
                              k, k, rss, fixed_rss, fixed_rss - rss, leak, fixed_leak,
                              fixed_leak - leak, leak, fixed_leak, fixed_leak - leak);
    }
  g_assert_cmpstr (csv, ==, expected->str);
  g_unlink (path);
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
drilldown_loaded (gpointer data)
{
  TideWindow *window = data;

  return !tide_retained_query_get_loading (window->retained) &&
         tide_drilldown_view_get_groups (window->drilldown_view) != NULL;
}

static TideDrilldownNode *
drilldown_node (TideWindow *window,
                const char *label)
{
  GListModel *model = tide_drilldown_view_get_model (window->drilldown_view);

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, i);
      TideDrilldownNode *node = gtk_tree_list_row_get_item (row);

      /* The node lives as long as the model holds it. */
      g_object_unref (node);
      if (strstr (tide_drilldown_node_get_label (node), label) != NULL)
        return node;
    }
  g_error ("no drill-down row %s", label);
}

/* Step 5's drill-down: the leaking stack's bytes in the fixed run's step 5
 * (paired by the stack's frames, as the diff pairs them) and the
 * difference; its frames carry the stack's. */
static void
test_drilldown (void)
{
  TideWindow *window = window_open (shown_path);
  TideDrilldownNode *leak;
  gint64 compared = -1;

  compare_with (window, fixed_path);
  tide_session_set_process_id (window->session, 1);
  tide_session_set_step (window->session, 5);
  tide_test_iterate_until (drilldown_loaded, window, 30, "the drill-down to load");
  g_assert_true (drilldown_loaded (window));
  leak = drilldown_node (window, "leak_feature_cache");
  g_assert_cmpint (tide_drilldown_node_get_bytes (leak), ==, LEAK_BYTES);
  g_assert_true (tide_drilldown_node_get_compared (leak, &compared));
  g_assert_cmpint (compared, ==, FIXED_LEAK_BYTES);
  {
    GListModel *frames = tide_drilldown_node_get_children (leak);
    g_autoptr(TideDrilldownNode) frame = g_list_model_get_item (frames, 0);

    compared = -1;
    g_assert_true (tide_drilldown_node_get_compared (frame, &compared));
    g_assert_cmpint (compared, ==, FIXED_LEAK_BYTES);
  }

  gtk_widget_activate_action (GTK_WIDGET (window), "win.end-compare", NULL);
  leak = drilldown_node (window, "leak_feature_cache");
  g_assert_false (tide_drilldown_node_get_compared (leak, &compared));
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int   argc,
      char *argv[])
{
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  tmp_dir = tide_test_make_dir ("tide-compare");
  g_assert_nonnull (tmp_dir);
  shown_path = tide_test_trace_write (tmp_dir, TRUE, NULL);
  fixed_path = tide_test_fixed_trace_write (tmp_dir);

  g_test_add_func ("/gui-compare/overlay", test_overlay);
  g_test_add_func ("/gui-compare/difference-columns", test_difference_columns);
  g_test_add_func ("/gui-compare/export-csv", test_export_csv);
  g_test_add_func ("/gui-compare/drilldown", test_drilldown);
  status = g_test_run ();

  tide_test_trace_remove (tmp_dir, fixed_path);
  tide_test_trace_remove (tmp_dir, shown_path);
  g_free (shown_path);
  g_free (fixed_path);
  g_free (tmp_dir);
  return status;
}
