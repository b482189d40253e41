/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTimelineView under a display (xvfb): its frame rendered offscreen
 * through GSK, and its input wiring driven by emitting the controllers'
 * own signals (modifiers cannot be faked; they are tested in the model).
 */
#include "config.h"

#include "tide-test-trace.h"
#include "tide-test-util.h"
#include "tide-test-widget.h"
#include "tide-timeline-view-private.h"

#define WIDTH  1000
#define HEIGHT 400

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
  TideSession *session;
  GtkWidget *view;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  int min, nat;

  f->dir = tide_test_make_dir ("tide-view");
  g_assert_no_error (error);
  f->path = tide_test_trace_write (f->dir, TRUE, NULL);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
  f->session = tide_session_new ();
  f->view = g_object_ref_sink (tide_timeline_view_new (f->session));
  tide_session_set_trace (f->session, f->trace);
  gtk_widget_measure (f->view, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
  gtk_widget_measure (f->view, GTK_ORIENTATION_VERTICAL, WIDTH, &min, &nat, NULL, NULL);
  gtk_widget_size_allocate (f->view, &(GtkAllocation) { 0, 0, WIDTH, HEIGHT }, -1);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->view);
  g_clear_object (&f->session);
  g_clear_object (&f->trace);
  tide_test_trace_remove (f->dir, f->path);
  g_free (f->path);
  g_free (f->dir);
}

/* Renders the widget to pixels with the cairo GSK renderer. */
static guint32 *
render (GtkWidget *view)
{
  return tide_test_render_widget (view, WIDTH, HEIGHT);
}

static void
test_render (Fixture       *f,
             gconstpointer  unused)
{
  const TidePalette *p = tide_timeline_view_get_palette (TIDE_TIMELINE_VIEW (f->view));
  g_autofree guint32 *pixels = render (f->view);

  g_assert_null (tide_timeline_view_get_error (TIDE_TIMELINE_VIEW (f->view)));
  g_assert_nonnull (tide_timeline_view_get_data (TIDE_TIMELINE_VIEW (f->view)));
  g_assert_cmpuint (tide_timeline_view_get_data (TIDE_TIMELINE_VIEW (f->view))->window.n_columns,
                    ==, WIDTH);
  /* In the strip, left of each band's number: leak steps red, others grey. */
  for (gint k = 1; k <= TEST_N_STEPS; k++)
    {
      guint32 c = pixels[11 * WIDTH + (k - 1) * 100 + 5] & 0xffffff;
      guint32 expected = k >= TEST_LEAK_FROM ? p->strip_leak
                         : k % 2 ? p->strip_odd : p->strip_even;
      g_assert_cmphex (c, ==, expected);
    }
}

static GtkEventController *
find_controller (GtkWidget *widget,
                 GType      type)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GtkEventController) c = g_list_model_get_item (controllers, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return c;
    }
  g_assert_not_reached ();
}

static void
on_range (TideTimelineView *view,
          gint64            begin,
          gint64            end,
          gint64           *out)
{
  out[0] = begin;
  out[1] = end;
}

static void
test_click_and_drag (Fixture       *f,
                     gconstpointer  unused)
{
  TideTimelineView *view = TIDE_TIMELINE_VIEW (f->view);
  GtkEventController *drag = find_controller (f->view, GTK_TYPE_GESTURE_DRAG);
  gint64 range[2] = { -1, -1 }, begin, end;
  g_autofree guint32 *pixels = render (f->view);

  g_signal_connect (view, "selection-range", G_CALLBACK (on_range), range);

  /* A click at x = 150 (150 ms) selects step 2. */
  g_signal_emit_by_name (drag, "drag-begin", 150.0, 100.0);
  g_signal_emit_by_name (drag, "drag-end", 1.0, 0.0);
  g_assert_cmpint (tide_timeline_view_get_selected_step (view), ==, 2);

  /* A drag from 200 to 500 px selects 200..500 ms and clears the step. */
  g_signal_emit_by_name (drag, "drag-begin", 200.0, 100.0);
  g_signal_emit_by_name (drag, "drag-update", 300.0, 0.0);
  g_signal_emit_by_name (drag, "drag-end", 300.0, 0.0);
  tide_timeline_view_get_selection_range (view, &begin, &end);
  g_assert_cmpint (begin, ==, 2 * TEST_STEP_NS);
  g_assert_cmpint (end, ==, 5 * TEST_STEP_NS);
  g_assert_cmpint (range[0], ==, begin);
  g_assert_cmpint (range[1], ==, end);
  g_assert_cmpint (tide_timeline_view_get_selected_step (view), ==, 0);

  /* Right/Left actions walk the steps. */
  gtk_widget_activate_action (f->view, "timeline.next-step", NULL);
  g_assert_cmpint (tide_timeline_view_get_selected_step (view), ==, 1);
  gtk_widget_activate_action (f->view, "timeline.next-step", NULL);
  gtk_widget_activate_action (f->view, "timeline.next-step", NULL);
  g_assert_cmpint (tide_timeline_view_get_selected_step (view), ==, 3);
  gtk_widget_activate_action (f->view, "timeline.previous-step", NULL);
  g_assert_cmpint (tide_timeline_view_get_selected_step (view), ==, 2);
  tide_timeline_view_get_selection_range (view, &begin, &end);
  g_assert_cmpint (begin, ==, -1);
}

static void
test_zoom_and_pan (Fixture       *f,
                   gconstpointer  unused)
{
  TideTimelineView *view = TIDE_TIMELINE_VIEW (f->view);
  GtkEventController *scroll = find_controller (f->view, GTK_TYPE_EVENT_CONTROLLER_SCROLL);
  g_autofree guint32 *first = render (f->view);
  g_autofree guint32 *second = NULL;
  gint64 begin, end, b2, e2;
  gboolean handled = TRUE;

  tide_timeline_view_zoom_at (view, 300, 4.0);
  tide_timeline_view_get_visible_range (view, &begin, &end);
  g_assert_cmpint (end - begin, ==, TEST_N_STEPS * TEST_STEP_NS / 4);
  /* 300 px was 300 ms and still is. */
  g_assert_cmpint (begin + 300 * (end - begin) / WIDTH, ==, 300000000);

  /* The next frame reads new data for the new range. */
  second = render (f->view);
  g_assert_cmpint (tide_timeline_view_get_data (view)->window.begin_ns, ==, begin);

  /* A horizontal scroll pans; a plain vertical one is left to the parent. */
  g_signal_emit_by_name (scroll, "scroll", 2.0, 0.0, &handled);
  g_assert_true (handled);
  tide_timeline_view_get_visible_range (view, &b2, &e2);
  g_assert_cmpint (b2, >, begin);
  g_assert_cmpint (e2 - b2, ==, end - begin);
  g_signal_emit_by_name (scroll, "scroll", 0.0, 1.0, &handled);
  g_assert_false (handled);

  tide_timeline_view_zoom_fit (view);
  tide_timeline_view_get_visible_range (view, &begin, &end);
  g_assert_cmpint (begin, ==, 0);
  g_assert_cmpint (end, ==, TEST_N_STEPS * TEST_STEP_NS);
  /* Zoom keys are the window's, one set for the whole window
   * (test-gui-window.c): the view has none of its own. */
  g_assert_false (gtk_widget_activate_action (f->view, "timeline.zoom-in", NULL));
}

/* What the view drew from its cache is what a fresh query of the same
 * range returns, column by column. */
static void
assert_same_as_fresh (TideTimelineView *view)
{
  const TideTimelineData *cached = tide_timeline_view_get_data (view);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTimelineData) fresh = NULL;

  g_assert_nonnull (cached);
  fresh = tide_timeline_data_query (tide_session_get_trace (view->session),
                                    tide_timeline_view_get_process_id (view), &cached->window,
                                    &error);
  g_assert_no_error (error);
  g_assert_cmpint (fresh->level, ==, cached->level);
  g_assert_cmpint (fresh->bucket_ns, ==, cached->bucket_ns);
  g_assert_cmpuint (fresh->lanes->len, ==, cached->lanes->len);
  g_assert_cmpuint (fresh->lanes->len, >, 0);
  for (guint i = 0; i < fresh->lanes->len; i++)
    {
      const TideLaneData *a = g_ptr_array_index (fresh->lanes, i);
      const TideLaneData *b = g_ptr_array_index (cached->lanes, i);
      guint n_values = 0;

      g_assert_cmpint (a->counter, ==, b->counter);
      g_assert_cmpint (a->device, ==, b->device);
      g_assert_cmpuint (a->n_columns, ==, b->n_columns);
      g_assert_cmpint (a->has_before, ==, b->has_before);
      if (a->has_before)
        g_assert_cmpint (a->before, ==, b->before);
      g_assert_cmpint (a->peak, ==, b->peak);
      for (guint c = 0; c < a->n_columns; c++)
        {
          g_assert_cmpuint (a->has[c], ==, b->has[c]);
          if (!a->has[c])
            continue;
          g_assert_cmpint (a->min[c], ==, b->min[c]);
          g_assert_cmpint (a->max[c], ==, b->max[c]);
          g_assert_cmpint (a->last[c], ==, b->last[c]);
          n_values++;
        }
      /* The comparison compared something. */
      g_assert_cmpuint (n_values, >, 0);
    }
}

/* Panning back over what was drawn reads no LOD rows from SQLite again,
 * and gives what a fresh query gives. */
static void
test_pan_uses_cache (Fixture       *f,
                     gconstpointer  unused)
{
  TideTimelineView *view = TIDE_TIMELINE_VIEW (f->view);
  guint64 queries;

  tide_timeline_view_zoom_at (view, 500, 4.0);
  g_free (render (f->view));
  tide_timeline_view_pan_by (view, 100);
  g_free (render (f->view));
  tide_timeline_view_pan_by (view, -100);
  g_free (render (f->view));
  queries = tide_timeline_cache_get_queries (view->cache);
  g_assert_cmpuint (queries, >, 0);
  for (guint i = 0; i < 6; i++)
    {
      tide_timeline_view_pan_by (view, i % 2 ? 100 : -100);
      g_free (render (f->view));
      assert_same_as_fresh (view);
    }
  g_assert_cmpuint (tide_timeline_cache_get_queries (view->cache), ==, queries);
  /* A pan into new ground, partly cached, and a zoom: fresh too. */
  tide_timeline_view_pan_by (view, 250);
  g_free (render (f->view));
  assert_same_as_fresh (view);
  tide_timeline_view_zoom_at (view, 300, 2.0);
  g_free (render (f->view));
  assert_same_as_fresh (view);
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              guint      *n)
{
  (*n)++;
}

/* The strip colour of step @k, left of its number (as in test_render). */
static guint32
strip_color (GtkWidget *view,
             gint       k)
{
  g_autofree guint32 *pixels = render (view);

  return pixels[11 * WIDTH + (k - 1) * 100 + 5] & 0xffffff;
}

/* What the properties do, not only what they hold: the session's "step"
 * set through GObject marks the step in the view's strip and notifies
 * once per change; a range selected on the view afterwards clears it. */
static void
test_properties (Fixture       *f,
                 gconstpointer  unused)
{
  const TidePalette *p = tide_timeline_view_get_palette (TIDE_TIMELINE_VIEW (f->view));
  guint n_step_notifies = 0;
  gint64 begin = 0;

  g_signal_connect (f->session, "notify::step", G_CALLBACK (count_notify), &n_step_notifies);
  g_assert_cmphex (strip_color (f->view, 2), ==, p->strip_even);
  g_object_set (f->session, "step", 2, NULL);
  g_assert_cmpuint (n_step_notifies, ==, 1);
  g_assert_cmphex (strip_color (f->view, 2), ==, p->accent);
  g_assert_cmphex (strip_color (f->view, 3), ==, p->strip_odd);
  g_object_set (f->session, "step", 2, NULL);
  g_assert_cmpuint (n_step_notifies, ==, 1);

  tide_timeline_view_set_selection_range (TIDE_TIMELINE_VIEW (f->view), 100, 900);
  g_object_get (f->session, "range-begin", &begin, NULL);
  g_assert_cmpint (begin, ==, 100);
  g_assert_cmpint (tide_timeline_view_get_selected_step (TIDE_TIMELINE_VIEW (f->view)), ==, 0);
  g_assert_cmpuint (n_step_notifies, ==, 2);
  g_assert_cmphex (strip_color (f->view, 2), ==, p->strip_even);
  g_assert_cmpstr (gtk_widget_get_css_name (f->view), ==, "timeline");
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/timeline-view/render", Fixture, NULL, fixture_setup, test_render,
              fixture_teardown);
  g_test_add ("/timeline-view/click-and-drag", Fixture, NULL, fixture_setup,
              test_click_and_drag, fixture_teardown);
  g_test_add ("/timeline-view/zoom-and-pan", Fixture, NULL, fixture_setup, test_zoom_and_pan,
              fixture_teardown);
  g_test_add ("/timeline-view/pan-uses-cache", Fixture, NULL, fixture_setup,
              test_pan_uses_cache, fixture_teardown);
  g_test_add ("/timeline-view/properties", Fixture, NULL, fixture_setup, test_properties,
              fixture_teardown);
  return g_test_run ();
}
