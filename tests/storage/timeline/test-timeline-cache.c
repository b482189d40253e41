/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The timeline's cached queries give what a fresh query gives: a trace of
 * counters that vary within every LOD bucket, read through one small cache
 * (so that chunks are evicted and read again) over ranges that zoom
 * through three LOD levels, pan across chunk edges, start before the
 * trace and end after it; each result is compared, column by column,
 * with tide_timeline_data_query(), which reads SQLite directly.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-timeline-data.h"
#include "tide-trace-writer.h"

#define SPAN_NS    (20 * G_GINT64_CONSTANT (1000000000))
#define SAMPLE_NS  370000   /* not a divisor of any bucket */
#define MiB        G_GINT64_CONSTANT (1048576)

/* A sawtooth with a pseudo-random wobble: min, max and last of a bucket
 * all differ. */
static gint64
value_at (guint   i,
          gint64  base)
{
  return base + (gint64) (i % 977) * 4096 + (gint64) ((i * 2654435761u) % 61) * 512;
}

static char *
write_trace (const char *dir)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (dir, "cache.tide", NULL);
  TideProcessRow proc = { .id = 1, .pid = 4242, .start_ns = 0, .all_mode = TRUE,
                          .exe = "/usr/bin/trainer" };
  TideTraceWriter *w = tide_trace_writer_new (path, &error);
  guint i = 0;

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_set_meta_int (w, "end_ns", SPAN_NS);
  tide_trace_writer_add_process (w, &proc);
  for (gint64 t = SAMPLE_NS; t < SPAN_NS; t += SAMPLE_NS, i++)
    {
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, t, value_at (i, 100 * MiB));
      if (i % 3 == 0)
        tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_HEAP_LIVE, -1, t,
                                       value_at (i / 3 + 17, 10 * MiB));
      if (i % 5 == 0)
        tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_DEVICE_USED, 0, t,
                                       value_at (i / 5 + 5, 50 * MiB));
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  tide_trace_writer_free (w);
  return path;
}

static void
assert_same_lane (const TideLaneData *fresh,
                  const TideLaneData *cached,
                  guint              *n_values)
{
  g_assert_cmpint (fresh->counter, ==, cached->counter);
  g_assert_cmpint (fresh->device, ==, cached->device);
  g_assert_cmpuint (fresh->n_columns, ==, cached->n_columns);
  g_assert_cmpint (fresh->has_before, ==, cached->has_before);
  if (fresh->has_before)
    g_assert_cmpint (fresh->before, ==, cached->before);
  g_assert_cmpint (fresh->peak, ==, cached->peak);
  for (guint c = 0; c < fresh->n_columns; c++)
    {
      g_assert_cmpuint (fresh->has[c], ==, cached->has[c]);
      if (!fresh->has[c])
        continue;
      g_assert_cmpint (fresh->min[c], ==, cached->min[c]);
      g_assert_cmpint (fresh->max[c], ==, cached->max[c]);
      g_assert_cmpint (fresh->last[c], ==, cached->last[c]);
      (*n_values)++;
    }
}

/* Queries [begin, end) in @n columns both ways; returns the LOD level. */
static gint
assert_same (TideTrace         *trace,
             TideTimelineCache *cache,
             gint64             begin,
             gint64             end,
             guint              n)
{
  g_autoptr(GError) error = NULL;
  TideTimeWindow window = { begin, end, n };
  g_autoptr(TideTimelineData) cached = tide_timeline_data_query_cached (trace, cache, 1, &window,
                                                                        &error);
  g_autoptr(TideTimelineData) fresh = NULL;
  guint n_values = 0;

  g_assert_no_error (error);
  fresh = tide_timeline_data_query (trace, 1, &window, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fresh->level, ==, cached->level);
  g_assert_cmpint (fresh->bucket_ns, ==, cached->bucket_ns);
  g_assert_cmpuint (fresh->lanes->len, ==, 3);
  g_assert_cmpuint (cached->lanes->len, ==, fresh->lanes->len);
  for (guint i = 0; i < fresh->lanes->len; i++)
    assert_same_lane (g_ptr_array_index (fresh->lanes, i), g_ptr_array_index (cached->lanes, i),
                      &n_values);
  /* Every lane had values in view. */
  g_assert_cmpuint (n_values, >=, 3);
  return fresh->level;
}

static void
test_cached_equals_fresh (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-timeline-cache");
  g_autofree char *path = write_trace (dir);
  g_autoptr(TideTrace) trace = tide_test_open_trace (path);
  /* Room for a view's chunks, not for all: panning evicts and reads
   * again. */
  g_autoptr(TideTimelineCache) cache = tide_timeline_cache_new (1024 * 1024);
  const gint64 ms = 1000000;
  gboolean levels[3] = { FALSE, FALSE, FALSE };
  guint64 queries;

  levels[MIN (assert_same (trace, cache, 0, SPAN_NS, 1000), 2)] = TRUE;
  levels[MIN (assert_same (trace, cache, 0, SPAN_NS, 333), 2)] = TRUE;
  /* Zoomed to 2 s, panned in steps of 700 ms across the 8.192 s chunks
   * of level 1 (5 ms a column) and the 2.048 s ones of level 0 (2.5 ms),
   * then back at 0.3 s. */
  for (gint64 begin = -500 * ms; begin < SPAN_NS; begin += 700 * ms)
    levels[MIN (assert_same (trace, cache, begin, begin + 2000 * ms, 400), 2)] = TRUE;
  for (gint64 begin = -500 * ms; begin < SPAN_NS; begin += 700 * ms)
    levels[MIN (assert_same (trace, cache, begin, begin + 2000 * ms, 800), 2)] = TRUE;
  for (gint64 begin = SPAN_NS - 300 * ms; begin > -300 * ms; begin -= 1100 * ms)
    levels[MIN (assert_same (trace, cache, begin, begin + 300 * ms, 1200), 2)] = TRUE;
  /* Edges inside buckets, at every level. */
  for (gint64 begin = 1234567; begin < SPAN_NS; begin += 1777777777)
    {
      assert_same (trace, cache, begin, begin + 1999999999, 400);
      assert_same (trace, cache, begin, begin + 1999999999, 800);
      assert_same (trace, cache, begin, begin + 19999999999, 1000);
    }
  g_assert_true (levels[0]);
  g_assert_true (levels[1]);
  g_assert_true (levels[2]);
  g_assert_cmpuint (tide_timeline_cache_get_bytes (cache), <=, 1024 * 1024);

  /* The same range again reads nothing: the cache was used at all. */
  assert_same (trace, cache, 4000 * ms, 4300 * ms, 1200);
  queries = tide_timeline_cache_get_queries (cache);
  assert_same (trace, cache, 4000 * ms, 4300 * ms, 1200);
  g_assert_cmpuint (tide_timeline_cache_get_queries (cache), ==, queries);

  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/storage/timeline/cached-equals-fresh", test_cached_equals_fresh);
  return g_test_run ();
}
