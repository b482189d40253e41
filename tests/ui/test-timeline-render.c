/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The timeline queries and the cairo drawing on a trace written here (see
 * tide-test-trace.h), offscreen, without a display: lane values and colours
 * at known times, one band per step, the leak steps' bands highlighted, and
 * the PNG export decoded again.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>

#include <sqlite3.h>
#include <string.h>

#include "tide-drilldown.h"
#include "tide-render.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-png.h"
#include "tide-test-trace.h"
#include "tide-test-util.h"
#include "tide-timeline-data.h"
#include "tide-trace-private.h"
#include "tide-trace-writer.h"

#define WIDTH  1000
#define HEIGHT 400

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = tide_test_make_dir ("tide-timeline");
  g_assert_no_error (error);
  f->path = tide_test_trace_write (f->dir, TRUE, NULL);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->trace);
  tide_test_trace_remove (f->dir, f->path);
  g_free (f->path);
  g_free (f->dir);
}

static gint64
column_time (gint64 span,
             guint  width,
             guint  column)
{
  return (gint64) column * span / width;
}

static void
test_lanes (Fixture       *f,
            gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  gint64 span = TEST_N_STEPS * TEST_STEP_NS;
  g_autoptr(TideTimelineData) data = tide_timeline_data_query (f->trace, 0,
                                                               &(TideTimeWindow) { 0, span, WIDTH },
                                                               &error);
  const TideLaneData *rss, *heap, *device;

  g_assert_no_error (error);
  /* 1 s over 1000 columns: 1 ms a column, the finest level. */
  g_assert_cmpint (data->level, ==, 0);
  g_assert_cmpuint (data->lanes->len, ==, 3);
  rss = g_ptr_array_index (data->lanes, 0);
  heap = g_ptr_array_index (data->lanes, 1);
  device = g_ptr_array_index (data->lanes, 2);
  g_assert_cmpint (rss->counter, ==, TIDE_COUNTER_RSS);
  g_assert_cmpstr (rss->name, ==, "Host RSS");
  g_assert_cmpint (heap->counter, ==, TIDE_COUNTER_HEAP_LIVE);
  g_assert_cmpint (device->counter, ==, TIDE_COUNTER_DEVICE_USED);
  g_assert_cmpint (device->device, ==, 0);
  g_assert_cmpstr (device->name, ==, "cuda:0 used");
  g_assert_cmpint (rss->peak, ==, test_rss (TEST_N_STEPS));

  /* Every column of step k shows step k's values, carried between samples. */
  for (guint c = 0; c < WIDTH; c++)
    {
      gint k = (gint) (column_time (span, WIDTH, c) / TEST_STEP_NS) + 1;
      gint64 v;

      g_assert_true (tide_lane_data_value_at (rss, c, &v));
      g_assert_cmpint (v, ==, test_rss (k));
      g_assert_true (tide_lane_data_value_at (heap, c, &v));
      g_assert_cmpint (v, ==, test_heap (k));
      g_assert_true (tide_lane_data_value_at (device, c, &v));
      g_assert_cmpint (v, ==, test_device (k));
    }
}

static void
test_lod_level (Fixture       *f,
                gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTimelineData) narrow = NULL;
  g_autoptr(TideTimelineData) zoomed = NULL;
  gint64 v;

  /* 1 s over 50 columns: 20 ms a column, level 2 (16 ms buckets). */
  narrow = tide_timeline_data_query (f->trace, 1,
                                     &(TideTimeWindow) { 0, TEST_N_STEPS * TEST_STEP_NS, 50 },
                                     &error);
  g_assert_no_error (error);
  g_assert_cmpint (narrow->level, ==, 2);
  g_assert_cmpint (narrow->bucket_ns, ==, 16000000);
  g_assert_cmpint (tide_timeline_data_pick_level (999999), ==, 0);
  g_assert_cmpint (tide_timeline_data_pick_level (4000000), ==, 1);
  /* Column 9 is 180..200 ms: buckets of steps 2 and 3 meet in it. */
  g_assert_true (tide_lane_data_value_at (g_ptr_array_index (narrow->lanes, 0), 9, &v));
  g_assert_cmpint (v, ==, test_rss (3));
  g_assert_cmpint (((TideLaneData *) g_ptr_array_index (narrow->lanes, 0))->max[9], ==,
                   test_rss (3));
  g_assert_cmpint (((TideLaneData *) g_ptr_array_index (narrow->lanes, 0))->min[9], ==,
                   test_rss (2));

  /* Zoomed into step 5's middle, finer than a bucket: carried from before. */
  zoomed = tide_timeline_data_query (f->trace, 1, &(TideTimeWindow) { 450000000, 450100000, 100 },
                                     &error);
  g_assert_no_error (error);
  g_assert_true (((TideLaneData *) g_ptr_array_index (zoomed->lanes, 0))->has_before);
  for (guint c = 0; c < 100; c++)
    {
      g_assert_true (tide_lane_data_value_at (g_ptr_array_index (zoomed->lanes, 0), c, &v));
      g_assert_cmpint (v, ==, test_rss (5));
    }
}

static void
assert_same_data (const TideTimelineData *a,
                  const TideTimelineData *b)
{
  g_assert_cmpint (a->level, ==, b->level);
  g_assert_cmpuint (a->lanes->len, ==, b->lanes->len);
  for (guint i = 0; i < a->lanes->len; i++)
    {
      const TideLaneData *x = g_ptr_array_index (a->lanes, i);
      const TideLaneData *y = g_ptr_array_index (b->lanes, i);

      g_assert_cmpint (x->counter, ==, y->counter);
      g_assert_cmpint (x->device, ==, y->device);
      g_assert_cmpstr (x->name, ==, y->name);
      g_assert_cmpint (x->has_before, ==, y->has_before);
      g_assert_cmpint (x->before, ==, y->before);
      g_assert_cmpint (x->peak, ==, y->peak);
      g_assert_cmpmem (x->has, x->n_columns, y->has, y->n_columns);
      g_assert_cmpmem (x->min, x->n_columns * 8, y->min, y->n_columns * 8);
      g_assert_cmpmem (x->max, x->n_columns * 8, y->max, y->n_columns * 8);
      g_assert_cmpmem (x->last, x->n_columns * 8, y->last, y->n_columns * 8);
    }
}

/* The cache gives what the plain query gives, at every level and edge;
 * a view read once (or panned within read chunks) costs no query; the
 * budget holds. */
static void
test_lod_cache (Fixture       *f,
                gconstpointer  unused)
{
  static const TideTimeWindow windows[] = {
    { 0, 1000000000, 1000 }, { 0, 1000000000, 50 }, { 450000000, 450100000, 100 },
    { 950000000, 1200000000, 300 }, { 0, 3000000, 200 }, { 123456789, 723456789, 640 },
    { 0, 1000000000, 1 },
  };
  g_autoptr(TideTimelineCache) cache = tide_timeline_cache_new (64 * 1024 * 1024);
  g_autoptr(TideTimelineCache) small = tide_timeline_cache_new (1);
  g_autoptr(GError) error = NULL;
  guint64 queries;

  for (guint i = 0; i < G_N_ELEMENTS (windows); i++)
    for (gint64 process = 0; process <= 1; process++)
      {
        g_autoptr(TideTimelineData) plain = NULL;
        g_autoptr(TideTimelineData) cached = NULL;
        g_autoptr(TideTimelineData) evicted = NULL;

        plain = tide_timeline_data_query (f->trace, process, &windows[i], &error);
        g_assert_no_error (error);
        cached = tide_timeline_data_query_cached (f->trace, cache, process, &windows[i], &error);
        g_assert_no_error (error);
        evicted = tide_timeline_data_query_cached (f->trace, small, process, &windows[i], &error);
        g_assert_no_error (error);
        assert_same_data (plain, cached);
        assert_same_data (plain, evicted);
      }
  queries = tide_timeline_cache_get_queries (cache);
  g_assert_cmpuint (queries, >, 0);
  for (guint i = 0; i < G_N_ELEMENTS (windows); i++)
    {
      g_autoptr(TideTimelineData) again = NULL;
      g_autoptr(TideTimelineData) panned = NULL;
      /* 1 ms right: the same level, within the chunks already read. */
      TideTimeWindow right = { windows[i].begin_ns + 1000000, windows[i].end_ns + 1000000,
                               windows[i].n_columns };

      again = tide_timeline_data_query_cached (f->trace, cache, 1, &windows[i], &error);
      g_assert_no_error (error);
      panned = tide_timeline_data_query_cached (f->trace, cache, 1, &right, &error);
      g_assert_no_error (error);
    }
  g_assert_cmpuint (tide_timeline_cache_get_queries (cache), ==, queries);
  g_assert_cmpuint (tide_timeline_cache_get_bytes (cache), >, 0);
  /* One chunk at most is kept over the budget: the one just read. */
  g_assert_cmpuint (tide_timeline_cache_get_bytes (small), <=, 256 + 2048 * 32);
}

static int
collect_allocation_queries (unsigned  type,
                            void     *data,
                            void     *p,
                            void     *x)
{
  const char *sql = sqlite3_sql (p);

  if (strstr (sql, "allocations") != NULL &&
      !g_ptr_array_find_with_equal_func (data, sql, g_str_equal, NULL))
    g_ptr_array_add (data, g_strdup (sql));
  return 0;
}

/* How SQLite reaches the allocations table in @sql, from its query plan:
 * counts "SEARCH allocations ..." lines and "SCAN allocations ..." ones. */
static void
count_allocation_plan (sqlite3    *db,
                       const char *sql,
                       guint      *searches,
                       guint      *scans)
{
  g_autofree char *explain = g_strconcat ("EXPLAIN QUERY PLAN ", sql, NULL);
  sqlite3_stmt *stmt = NULL;

  g_assert_cmpint (sqlite3_prepare_v2 (db, explain, -1, &stmt, NULL), ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *detail = (const char *) sqlite3_column_text (stmt, 3);

      *searches += g_str_has_prefix (detail, "SEARCH allocations ");
      *scans += g_str_has_prefix (detail, "SCAN allocations");
    }
  sqlite3_finalize (stmt);
}

/* A step's drill-down searches the allocations (the index of long-lived
 * rows, rowid ranges of short-lived ones), for one process and for all:
 * it never scans the whole table. */
static void
test_drilldown_uses_index (Fixture       *f,
                           gconstpointer  unused)
{
  sqlite3 *db = _tide_trace_get_db (f->trace);
  g_autoptr(GPtrArray) queries = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  guint searches = 0, scans = 0;

  sqlite3_trace_v2 (db, SQLITE_TRACE_PROFILE, collect_allocation_queries, queries);
  for (gint64 process = 0; process <= 1; process++)
    {
      g_autoptr(GPtrArray) groups = tide_drilldown_retained (f->trace, process,
                                                             (TEST_LEAK_FROM - 1) * TEST_STEP_NS,
                                                             TEST_LEAK_FROM * TEST_STEP_NS,
                                                             &error);
      const TideGroup *top;

      g_assert_no_error (error);
      g_assert_cmpuint (groups->len, ==, 1);
      top = g_ptr_array_index (groups, 0);
      g_assert_cmpint (top->bytes, ==, 96 * 16384);
      g_assert_cmpint (top->count, ==, 96);
    }
  sqlite3_trace_v2 (db, 0, NULL, NULL);
  g_assert_cmpuint (queries->len, >, 0);
  for (guint i = 0; i < queries->len; i++)
    count_allocation_plan (db, g_ptr_array_index (queries, i), &searches, &scans);
  g_assert_cmpuint (scans, ==, 0);
  g_assert_cmpuint (searches, ==, 2 * queries->len);
}

static void
test_steps_and_leak (Fixture       *f,
                     gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) steps = tide_timeline_steps (f->trace, 0, &error);
  g_autoptr(GArray) transfers = tide_timeline_transfers (f->trace, 0, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, TEST_N_STEPS);
  for (guint i = 0; i < steps->len; i++)
    {
      const TideStepSpan *s = &g_array_index (steps, TideStepSpan, i);

      g_assert_cmpint (s->number, ==, i + 1);
      g_assert_cmpint (s->start_ns, ==, i * TEST_STEP_NS);
      g_assert_cmpint (s->end_ns, ==, (i + 1) * TEST_STEP_NS);
      g_assert_cmpint (s->leak, ==, s->number >= TEST_LEAK_FROM);
    }
  g_assert_cmpuint (transfers->len, ==, 1);
  g_assert_cmpint (g_array_index (transfers, TideTransferMark, 0).bytes, ==, 64 * TEST_MIB);
  g_assert_cmpint (g_array_index (transfers, TideTransferMark, 0).direction, ==, 1);
}

typedef struct
{
  TideTimelineData *data;
  GArray           *steps;
  GArray           *transfers;
  TideRenderScene   scene;
} Scene;

static void
scene_load (Scene     *s,
            TideTrace *trace,
            int        width)
{
  g_autoptr(GError) error = NULL;

  s->data = tide_timeline_data_query (trace, 0,
                                      &(TideTimeWindow) { 0, TEST_N_STEPS * TEST_STEP_NS, width },
                                      &error);
  s->steps = tide_timeline_steps (trace, 0, &error);
  s->transfers = tide_timeline_transfers (trace, 0, &error);
  g_assert_no_error (error);
  s->scene = (TideRenderScene) {
    .data = s->data, .steps = (TideStepSpan *) s->steps->data, .n_steps = s->steps->len,
    .transfers = (TideTransferMark *) s->transfers->data, .n_transfers = s->transfers->len,
    .begin_ns = 0, .end_ns = TEST_N_STEPS * TEST_STEP_NS, .selection_begin = -1,
    .palette = &tide_palette_light,
  };
}

static void
scene_clear (Scene *s)
{
  tide_timeline_data_free (s->data);
  g_array_unref (s->steps);
  g_array_unref (s->transfers);
}

static cairo_surface_t *
draw (const TideRenderScene *scene)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, WIDTH, HEIGHT);
  cairo_t *cr = cairo_create (surface);

  tide_render_timeline (cr, scene, WIDTH, HEIGHT);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  return surface;
}

/* The curve of each lane at the middle of every step: the line's colour on
 * the value's row, the fill below it, the band colour above it. */
static void
test_render_lanes (Fixture       *f,
                   gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  Scene s;
  cairo_surface_t *surface;
  TideRenderLayout l;

  scene_load (&s, f->trace, WIDTH);
  surface = draw (&s.scene);
  tide_render_layout (&s.scene, WIDTH, HEIGHT, &l);
  g_assert_cmpuint (l.n_lanes, ==, 3);

  for (gint k = 1; k <= TEST_N_STEPS; k++)
    {
      int x = (int) ((k - 0.5) * TEST_STEP_NS * WIDTH / (TEST_N_STEPS * TEST_STEP_NS));
      gint64 values[3] = { test_rss (k), test_heap (k), test_device (k) };
      guint colors[3] = { 0, 1, tide_render_lane_color_index (TIDE_COUNTER_DEVICE_USED, 0) };
      guint32 band = k >= TEST_LEAK_FROM ? p->band_leak : k % 2 ? p->band_odd : p->band_even;

      for (guint lane = 0; lane < 3; lane++)
        {
          gint64 peak = ((TideLaneData *) g_ptr_array_index (s.data->lanes, lane))->peak;
          int y = (int) tide_render_value_to_y (&l, lane, values[lane], peak);

          g_assert_cmphex (tide_test_pixel (surface, x, y), ==, p->lane_line[colors[lane]]);
          g_assert_cmphex (tide_test_pixel (surface, x, y - 1), ==, p->lane_line[colors[lane]]);
          g_assert_cmphex (tide_test_pixel (surface, x, y + 2), ==, p->lane_fill[colors[lane]]);
          g_assert_cmphex (tide_test_pixel (surface, x, y - 3), ==, band);
        }
    }
  /* Higher values sit higher: the RSS curve of step 10 above step 1's. */
  g_assert_cmpfloat (tide_render_value_to_y (&l, 0, test_rss (10), test_rss (10)), <,
                     tide_render_value_to_y (&l, 0, test_rss (1), test_rss (10)));
  cairo_surface_destroy (surface);
  scene_clear (&s);
}

/* Runs of step colour along the strip: one per step, leak steps red. */
static void
test_render_bands (Fixture       *f,
                   gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  Scene s;
  cairo_surface_t *surface;
  guint bands = 0, leak_bands = 0;
  guint32 prev = p->background;

  scene_load (&s, f->trace, WIDTH);
  s.scene.selected_step = 2;
  surface = draw (&s.scene);
  for (int x = 0; x < WIDTH; x++)
    {
      guint32 c = tide_test_pixel (surface, x, 11);

      if (c != p->background && c != prev)
        {
          bands++;
          leak_bands += c == p->strip_leak;
        }
      prev = c;
    }
  g_assert_cmpuint (bands, ==, TEST_N_STEPS);
  g_assert_cmpuint (leak_bands, ==, TEST_N_STEPS - TEST_LEAK_FROM + 1);
  g_assert_cmphex (tide_test_pixel (surface, 50, 11), ==, p->strip_odd);      /* step 1 */
  g_assert_cmphex (tide_test_pixel (surface, 150, 11), ==, p->accent);        /* step 2, selected */
  g_assert_cmphex (tide_test_pixel (surface, 250, 11), ==, p->strip_odd);     /* step 3 */
  g_assert_cmphex (tide_test_pixel (surface, 350, 11), ==, p->strip_leak);    /* step 4, leaking */
  g_assert_cmphex (tide_test_pixel (surface, 950, 11), ==, p->strip_leak);
  cairo_surface_destroy (surface);
  scene_clear (&s);
}

/* The leak suspect of the test trace: leak_feature_cache, 96 x 16 KiB a
 * step from TEST_LEAK_FROM on.  Its series, drawn over the live heap lane
 * from its growth step on, with those steps tinted; nothing before. */
static void
test_render_highlight (Fixture       *f,
                       gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, &error);
  g_autoptr(GArray) series = NULL;
  const TideGroup *suspect;
  const TideLaneData *heap;
  cairo_surface_t *surface;
  TideRenderLayout l;
  Scene s;

  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, >=, 1);
  suspect = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (suspect->growth_step, ==, TEST_LEAK_FROM);
  series = tide_timeline_group_series (f->trace, suspect->process.id, suspect->stack_id, 0,
                                       suspect->device, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (series->len, ==, TEST_N_STEPS);
  for (guint i = 0; i < series->len; i++)
    {
      const TideSeriesPoint *point = &g_array_index (series, TideSeriesPoint, i);
      gint k = (gint) i + 1;

      g_assert_cmpint (point->number, ==, k);
      g_assert_cmpint (point->start_ns, ==, i * TEST_STEP_NS);
      g_assert_cmpint (point->end_ns, ==, k * TEST_STEP_NS);
      g_assert_cmpint (point->live_bytes, ==, MAX (k - TEST_LEAK_FROM + 1, 0) * 96 * 16384);
    }

  scene_load (&s, f->trace, WIDTH);
  s.scene.highlight_step = suspect->growth_step;
  s.scene.highlight_device = -1;
  s.scene.highlight_series = (const TideSeriesPoint *) series->data;
  s.scene.n_highlight = series->len;
  surface = draw (&s.scene);
  tide_render_layout (&s.scene, WIDTH, HEIGHT, &l);
  heap = g_ptr_array_index (s.data->lanes, 1);
  g_assert_cmpint (heap->counter, ==, TIDE_COUNTER_HEAP_LIVE);
  for (gint k = 1; k <= TEST_N_STEPS; k++)
    {
      int x = (int) ((k - 0.5) * WIDTH / TEST_N_STEPS);
      const TideSeriesPoint *point = &g_array_index (series, TideSeriesPoint, k - 1);
      int y = (int) tide_render_value_to_y (&l, 1, point->live_bytes, heap->peak);
      guint overlay = 0, tint = 0;

      for (int row = (int) l.lanes_y; row < (int) (l.lanes_y + 3 * l.lane_h); row++)
        {
          overlay += tide_test_pixel (surface, x, row) == p->highlight;
          tint += tide_test_pixel (surface, x, row) == p->band_highlight;
        }
      if (k < TEST_LEAK_FROM)
        {
          g_assert_cmpuint (overlay, ==, 0);
          g_assert_cmpuint (tint, ==, 0);
          continue;
        }
      /* A 2 px tread on the value's row, only in the live heap lane. */
      g_assert_cmpuint (overlay, ==, 2);
      g_assert_cmphex (tide_test_pixel (surface, x, y), ==, p->highlight);
      g_assert_cmphex (tide_test_pixel (surface, x, y - 1), ==, p->highlight);
      g_assert_cmpuint (tint, >, 0);
      g_assert_cmphex (tide_test_pixel (surface, x, (int) l.lanes_y + 1), ==, p->band_highlight);
    }
  /* The growth step's first column has it, the column before does not. */
  g_assert_cmphex (tide_test_pixel (surface, (TEST_LEAK_FROM - 1) * WIDTH / TEST_N_STEPS,
                          (int) tide_render_value_to_y (&l, 1, 96 * 16384, heap->peak)), ==,
                   p->highlight);
  g_assert_cmphex (tide_test_pixel (surface, (TEST_LEAK_FROM - 1) * WIDTH / TEST_N_STEPS - 2,
                          (int) tide_render_value_to_y (&l, 1, 96 * 16384, heap->peak)), !=,
                   p->highlight);
  cairo_surface_destroy (surface);
  scene_clear (&s);
}

static void
test_png_export (Fixture       *f,
                 gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "timeline.png", NULL);
  g_autoptr(GHashTable) colors = g_hash_table_new (NULL, NULL);
  guint rss = 0, heap = 0, device = 0, leak = 0;
  cairo_surface_t *image;

  g_assert_true (tide_render_timeline_png (f->trace, png, 640, 360, &error));
  g_assert_no_error (error);
  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (image), ==, 640);
  g_assert_cmpint (cairo_image_surface_get_height (image), ==, 360);
  for (int y = 0; y < 360; y++)
    for (int x = 0; x < 640; x++)
      {
        guint32 c = tide_test_pixel (image, x, y);

        g_hash_table_add (colors, GUINT_TO_POINTER (c));
        rss += c == p->lane_line[0];
        heap += c == p->lane_line[1];
        device += c == p->lane_line[tide_render_lane_color_index (TIDE_COUNTER_DEVICE_USED, 0)];
        leak += c == p->strip_leak;
      }
  g_assert_cmpuint (g_hash_table_size (colors), >, 20);
  /* Each curve crosses the whole width at least once (2 px thick). */
  g_assert_cmpuint (rss, >=, 2 * 640);
  g_assert_cmpuint (heap, >=, 2 * 640);
  g_assert_cmpuint (device, >=, 2 * 640);
  g_assert_cmpuint (leak, >, 0);
  cairo_surface_destroy (image);
  g_unlink (png);

  g_assert_false (tide_render_timeline_png (f->trace, png, 10, 360, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
}

/* The comparison's PNG: the fixed run's heap at its step 5 drawn dashed
 * in the palette's compare colour over the middle of the shown step 5,
 * on the scale of the larger peak (the shown run's). */
static void
test_png_export_compare (Fixture       *f,
                         gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "comparison.png", NULL);
  g_autofree char *fixed_path = tide_test_fixed_trace_write (f->dir);
  g_autoptr(TideTrace) fixed = tide_trace_open (fixed_path, &error);
  g_autoptr(TideTimelineData) data = NULL;
  TideRenderScene scene = { .n_transfers = 1, .show_legend = TRUE };
  TideRenderLayout layout;
  int x = 4 * WIDTH / 10 + WIDTH / 20, y;
  cairo_surface_t *image;

  g_assert_no_error (error);
  g_assert_true (tide_render_compare_png (f->trace, 0, fixed, png, WIDTH, HEIGHT, &error));
  g_assert_no_error (error);
  data = tide_timeline_data_query (f->trace, 1,
                                   &(TideTimeWindow) { 0, TEST_N_STEPS * TEST_STEP_NS, WIDTH },
                                   &error);
  g_assert_no_error (error);
  scene.data = data;
  tide_render_layout (&scene, WIDTH, HEIGHT, &layout);
  y = (int) tide_render_value_to_y (&layout, 1, test_fixed_heap (5), test_heap (TEST_N_STEPS));
  x -= x % (2 * TIDE_RENDER_COMPARE_DASH);
  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmphex (tide_test_pixel (image, x, y), ==, tide_palette_light.compare);
  g_assert_cmphex (tide_test_pixel (image, x, y - 1), ==, tide_palette_light.compare);
  g_assert_cmphex (tide_test_pixel (image, x + TIDE_RENDER_COMPARE_DASH, y), ==,
                   tide_palette_light.lane_fill[1]);
  cairo_surface_destroy (image);
  g_unlink (png);
  g_clear_object (&fixed);
  g_unlink (fixed_path);
}

static guint
count_color (const char *png,
             guint32     color)
{
  cairo_surface_t *image = cairo_image_surface_create_from_png (png);
  guint n;

  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (image), ==, 320);
  n = tide_test_count_pixels (image, color);
  cairo_surface_destroy (image);
  return n;
}

/* The app's export draws the process it shows: the test trace's process
 * has the RSS curve; a process without rows has no lanes at all. */
static void
test_png_export_process (Fixture       *f,
                         gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "process.png", NULL);

  g_assert_true (tide_render_process_png (f->trace, 1, png, 320, 200, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_color (png, p->lane_line[0]), >=, 2 * 320);
  g_assert_true (tide_render_process_png (f->trace, 2, png, 320, 200, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_color (png, p->lane_line[0]), ==, 0);
  g_unlink (png);
}

/* A trace still being written has no summaries on disk; it opens all the
 * same and the timeline has its lanes. */
static void
test_live_trace (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tide_test_make_dir ("tide-timeline");
  gpointer writer = NULL;
  g_autofree char *path = tide_test_trace_write (dir, FALSE, &writer);
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);
  g_autoptr(TideTimelineData) data = NULL;
  g_autoptr(GArray) steps = NULL;
  gint64 v;

  g_assert_no_error (error);
  g_assert_false (tide_trace_is_complete (trace));
  data = tide_timeline_data_query (trace, 0,
                                   &(TideTimeWindow) { 0, TEST_N_STEPS * TEST_STEP_NS, 100 },
                                   &error);
  g_assert_no_error (error);
  g_assert_cmpuint (data->lanes->len, ==, 3);
  g_assert_true (tide_lane_data_value_at (g_ptr_array_index (data->lanes, 0), 99, &v));
  g_assert_cmpint (v, ==, test_rss (TEST_N_STEPS));
  steps = tide_timeline_steps (trace, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, TEST_N_STEPS);

  g_clear_object (&trace);
  tide_trace_writer_free (writer);
  tide_test_trace_remove (dir, path);
}

/* An axis that ends at the last nanosecond a gint64 holds draws in bounded
 * time: its ticks are counted, at most one a pixel (WIDTH), so the 1000
 * ticks of a day each (a day is 1/106751 of the span) cover x 0 to 9 and
 * the rest of the axis row is the background.  Drawn in a subprocess with a time limit, since the
 * failure is a hang. */
static void
test_render_axis_int64_end (void)
{
  if (g_test_subprocess ())
    {
      TideRenderScene scene = { .begin_ns = 0, .end_ns = G_MAXINT64, .selection_begin = -1,
                                .palette = &tide_palette_light };
      cairo_surface_t *surface = draw (&scene);
      TideRenderLayout l;

      tide_render_layout (&scene, WIDTH, HEIGHT, &l);
      g_assert_cmphex (tide_test_pixel (surface, 0, (int) l.axis_y + 3), ==,
                       tide_palette_light.grid);
      g_assert_cmphex (tide_test_pixel (surface, 9, (int) l.axis_y + 3), ==,
                       tide_palette_light.grid);
      g_assert_cmphex (tide_test_pixel (surface, 10, (int) l.axis_y + 3), ==,
                       tide_palette_light.background);
      g_assert_cmphex (tide_test_pixel (surface, WIDTH / 2, (int) l.axis_y + 3), ==,
                       tide_palette_light.background);
      cairo_surface_destroy (surface);
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/timeline/lanes", Fixture, NULL, fixture_setup, test_lanes, fixture_teardown);
  g_test_add ("/timeline/lod-level", Fixture, NULL, fixture_setup, test_lod_level,
              fixture_teardown);
  g_test_add ("/timeline/lod-cache", Fixture, NULL, fixture_setup, test_lod_cache,
              fixture_teardown);
  g_test_add ("/timeline/drilldown-uses-index", Fixture, NULL, fixture_setup,
              test_drilldown_uses_index, fixture_teardown);
  g_test_add ("/timeline/steps-and-leak", Fixture, NULL, fixture_setup, test_steps_and_leak,
              fixture_teardown);
  g_test_add ("/timeline/render-lanes", Fixture, NULL, fixture_setup, test_render_lanes,
              fixture_teardown);
  g_test_add ("/timeline/render-bands", Fixture, NULL, fixture_setup, test_render_bands,
              fixture_teardown);
  g_test_add ("/timeline/render-highlight", Fixture, NULL, fixture_setup, test_render_highlight,
              fixture_teardown);
  g_test_add ("/timeline/png-export", Fixture, NULL, fixture_setup, test_png_export,
              fixture_teardown);
  g_test_add ("/timeline/png-export-process", Fixture, NULL, fixture_setup,
              test_png_export_process, fixture_teardown);
  g_test_add ("/timeline/png-export-compare", Fixture, NULL, fixture_setup,
              test_png_export_compare, fixture_teardown);
  g_test_add_func ("/timeline/live-trace", test_live_trace);
  g_test_add_func ("/timeline/render-axis-int64-end", test_render_axis_int64_end);
  return g_test_run ();
}
