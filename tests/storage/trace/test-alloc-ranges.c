/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * allocation_ranges and the long-lived index (tide-alloc-ranges.h) find
 * exactly the rows a scan of the whole table finds: "made in (t0, t1] and
 * live at t1", for windows that end inside short lifetimes, on their
 * bounds, and across processes.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-alloc-ranges.h"
#include "tide-test-util.h"
#include "tide-drilldown.h"
#include "tide-live-at.h"
#include "tide-report.h"
#include "tide-trace-private.h"
#include "tide-trace-writer.h"
#include "tide-trace.h"

#define T TIDE_SHORT_LIVED_NS

static void
test_range_add (void)
{
  TideAllocRange r = { 0 };

  g_assert_true (tide_alloc_range_add (&r, 10, 5000, 5000 + T));       /* short: on the bound */
  g_assert_true (tide_alloc_range_add (&r, 11, 1000, 1000 + T + 1));   /* long */
  g_assert_true (tide_alloc_range_add (&r, 12, 9000, 0));              /* live */
  g_assert_true (tide_alloc_range_add (&r, 13, 7000, 7001));           /* short */
  g_assert_cmpint (r.first_id, ==, 10);
  g_assert_cmpint (r.last_id, ==, 13);
  g_assert_cmpuint (r.n_short, ==, 2);
  g_assert_cmpint (r.min_alloc_ns, ==, 5000);
  g_assert_cmpint (r.max_alloc_ns, ==, 7000);

  /* Not the next id: the caller closes the range first. */
  g_assert_false (tide_alloc_range_add (&r, 15, 100, 200));
  g_assert_cmpint (r.last_id, ==, 13);

  tide_alloc_range_reset (&r);
  for (gint64 id = 1; id <= TIDE_ALLOC_RANGE_ROWS; id++)
    g_assert_true (tide_alloc_range_add (&r, id, id, id + 1));
  g_assert_false (tide_alloc_range_add (&r, TIDE_ALLOC_RANGE_ROWS + 1, 1, 2));
  g_assert_cmpuint (r.n_short, ==, TIDE_ALLOC_RANGE_ROWS);
}

typedef struct
{
  gint64 process_id;
  gint64 alloc_ns;
  gint64 free_ns;
  gint64 size;
} Row;

static gint
by_free (gconstpointer a,
         gconstpointer b)
{
  const Row *x = a, *y = b;
  gint64 fx = x->free_ns ? x->free_ns : G_MAXINT64, fy = y->free_ns ? y->free_ns : G_MAXINT64;

  return fx < fy ? -1 : fx > fy;
}

/* Lifetimes: most short (some exactly T, some T + 1), some long, some
 * never freed; rows handed over in free order, as the recorder does. */
static char *
write_trace (const char *dir,
             GRand      *rand)
{
  g_autofree char *path = g_build_filename (dir, "ranges.tide", NULL);
  g_autoptr(GArray) rows = g_array_new (FALSE, FALSE, sizeof (Row));
  g_autoptr(TideTraceWriter) w = NULL;
  g_autoptr(GError) error = NULL;

  w = tide_trace_writer_new (path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  for (gint64 p = 1; p <= 2; p++)
    {
      TideProcessRow proc = { .id = p, .pid = 100 * p, .all_mode = TRUE, .exe = "/bin/x" };
      tide_trace_writer_add_process (w, &proc);
    }
  for (guint i = 0; i < 30000; i++)
    {
      gint64 alloc_ns = g_rand_int_range (rand, 1, 2000000) * (gint64) 1000;
      gint kind = g_rand_int_range (rand, 0, 100);
      gint64 life;
      Row row;

      if (kind < 70)
        life = g_rand_int_range (rand, 0, T);
      else if (kind < 75)
        life = T;
      else if (kind < 80)
        life = T + 1;
      else if (kind < 95)
        life = g_rand_int_range (rand, T + 2, 100 * T);
      else
        life = -1;
      row = (Row) { 1 + (i % 2), alloc_ns, life < 0 ? 0 : alloc_ns + life,
                    16 + g_rand_int_range (rand, 0, 4096) };
      g_array_append_val (rows, row);
    }
  g_array_sort (rows, by_free);
  for (guint i = 0; i < rows->len; i++)
    {
      const Row *r = &g_array_index (rows, Row, i);
      TideAllocRow row = { .process_id = r->process_id, .alloc_ns = r->alloc_ns,
                           .free_ns = r->free_ns, .size = r->size, .weight = 1,
                           .stack_id = 1 + i % 3, .device = -1, .kind = 1 };
      tide_trace_writer_add_allocation (w, &row);
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

static void
scan_totals (sqlite3 *db,
             gint64   process_id,
             gint64   t0,
             gint64   t1,
             gint64  *bytes,
             gint64  *count)
{
  sqlite3_stmt *stmt = NULL;

  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT total (size), count (*) FROM allocations"
                                           " NOT INDEXED WHERE (?1 = 0 OR process_id = ?1)"
                                           " AND alloc_ns > ?2 AND alloc_ns <= ?3"
                                           " AND (free_ns IS NULL OR free_ns > ?3)",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int64 (stmt, 2, t0);
  sqlite3_bind_int64 (stmt, 3, t1);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  *bytes = (gint64) sqlite3_column_double (stmt, 0);
  *count = sqlite3_column_int64 (stmt, 1);
  sqlite3_finalize (stmt);
}

/* 200 random windows: the drill-down's retained rows are those of a
 * full scan. */
static void
check_windows (const char *path,
               guint32     seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);
  guint nonempty = 0;
  sqlite3 *db;

  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *stmt = NULL;

  g_assert_no_error (error);
  db = _tide_trace_get_db (trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocation_ranges"), >=,
                   30000 * 7 / 10 / TIDE_ALLOC_RANGE_ROWS);
  /* Window ends on rows' own times, where < and <= differ. */
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT alloc_ns FROM allocations", -1, &stmt, NULL),
                   ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      gint64 t = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (times, t);
    }
  sqlite3_finalize (stmt);
  for (guint i = 0; i < 200; i++)
    {
      gint64 t1 = i % 2 == 0
        ? g_array_index (times, gint64, g_rand_int_range (rand, 0, times->len))
        : g_rand_int_range (rand, 1, 2100000) * (gint64) 1000 + g_rand_int_range (rand, 0, 3);
      gint64 t0 = i % 4 == 0 ? 0 : t1 - g_rand_int_range (rand, 1, i % 4 == 1 ? 20 : 2000) * (gint64) 10000;

      /* And starts on them, where > and >= differ. */
      if (i % 8 == 2)
        {
          t0 = g_array_index (times, gint64, g_rand_int_range (rand, 0, times->len));
          t1 = t0 + g_rand_int_range (rand, 1, 2000) * (gint64) 10000;
        }
      gint64 process_id = i % 3;
      g_autoptr(GPtrArray) groups = tide_drilldown_retained (trace, process_id, t0, t1, &error);
      gint64 bytes = 0, count = 0, want_bytes, want_count;

      g_assert_no_error (error);
      for (guint g = 0; g < groups->len; g++)
        {
          const TideGroup *group = g_ptr_array_index (groups, g);
          bytes += group->bytes;
          count += group->count;
        }
      scan_totals (db, process_id, t0, t1, &want_bytes, &want_count);
      g_assert_cmpint (count, ==, want_count);
      g_assert_cmpint (bytes, ==, want_bytes);
      nonempty += want_count > 0;
    }
  /* The windows did find rows, short-lived ones among them. */
  g_assert_cmpuint (nonempty, >, 150);
}

/* Makes the trace what the writer made before long_lived_allocations: a
 * partial index of the long-lived rows instead. */
static void
make_old_layout (const char *path)
{
  tide_test_exec_sql (path, "DROP TABLE long_lived_allocations;"
                            "CREATE INDEX allocations_long_lived"
                            " ON allocations (process_id, alloc_ns)"
                            " WHERE " TIDE_LONG_LIVED_WHERE ";");
}

static void
test_retained_matches_scan (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-ranges");
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  g_autofree char *path = write_trace (dir, rand);
  g_autoptr(GError) error = NULL;
  TideTrace *trace = tide_trace_open (path, &error);
  gint64 long_lived;

  /* long_lived_allocations holds the long-lived rows, and only them. */
  g_assert_no_error (error);
  long_lived = tide_test_query_int (trace, "SELECT count (*) FROM allocations WHERE "
                                           TIDE_LONG_LIVED_WHERE);
  g_assert_cmpint (long_lived, >, 1000);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM long_lived_allocations"),
                   ==, long_lived);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM long_lived_allocations l"
                                               " JOIN allocations a ON a.id = l.id"
                                               " AND a.process_id = l.process_id"
                                               " AND a.alloc_ns = l.alloc_ns"
                                               " WHERE a.free_ns IS NULL OR a.free_ns - a.alloc_ns > "
                                               G_STRINGIFY (TIDE_SHORT_LIVED_NS)), ==, long_lived);
  g_object_unref (trace);

  check_windows (path, 11);
  make_old_layout (path);
  check_windows (path, 11);
  g_remove (path);
  g_rmdir (dir);
}

/* What a scan of every row of @process_id gives at @t: the heap, or the
 * mapped bytes. */
static gint64
scan_live_at (sqlite3 *db,
              gint64   process_id,
              gint64   t,
              gboolean mapped)
{
  sqlite3_stmt *stmt = NULL;
  gint64 bytes;

  g_assert_cmpint (sqlite3_prepare_v2 (db, mapped
                                           ? "SELECT total (size) FROM allocations NOT INDEXED"
                                             " WHERE process_id = ?1 AND kind IN (2, 3, 6)"
                                             " AND alloc_ns <= ?2 AND (free_ns IS NULL OR free_ns > ?2)"
                                           : "SELECT total (size) FROM allocations NOT INDEXED"
                                             " WHERE process_id = ?1 AND kind IN (1, 10)"
                                             " AND alloc_ns <= ?2 AND (free_ns IS NULL OR free_ns > ?2)",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int64 (stmt, 2, t);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  bytes = (gint64) sqlite3_column_double (stmt, 0);
  sqlite3_finalize (stmt);
  return bytes;
}

/* 100 times, half of them rows' own, each process's live heap and
 * mappings at each: tide_trace_live_at() gives what a full scan does. */
static void
check_live_at (const char *path,
               guint32     seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);
  gint64 times[100];
  TideLiveBytes live[2][G_N_ELEMENTS (times)];
  TideLiveAtRequest requests[2];
  guint nonempty = 0;

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    {
      g_autofree char *own = g_strdup_printf ("SELECT %s FROM allocations WHERE id = %d",
                                              i % 4 == 0 ? "alloc_ns" : "coalesce (free_ns, 5)",
                                              g_rand_int_range (rand, 1, 30000));

      times[i] = i % 2 == 0
        ? tide_test_query_int (trace, own)
        : g_rand_int_range (rand, 1, 2100000) * (gint64) 1000 + g_rand_int_range (rand, 0, 3);
    }
  /* Both processes in one call, which reads the short-lived rows once
   * for both. */
  for (guint p = 0; p < 2; p++)
    requests[p] = (TideLiveAtRequest) { p + 1, times, G_N_ELEMENTS (times), live[p] };
  g_assert_true (tide_trace_live_at (trace, requests, 2, &error));
  g_assert_no_error (error);
  for (gint64 process_id = 1; process_id <= 2; process_id++)
    for (guint i = 0; i < G_N_ELEMENTS (times); i++)
      {
        const TideLiveBytes *l = &live[process_id - 1][i];

        g_assert_cmpint (l->heap, ==,
                         scan_live_at (_tide_trace_get_db (trace), process_id, times[i], FALSE));
        g_assert_cmpint (l->mapped, ==,
                         scan_live_at (_tide_trace_get_db (trace), process_id, times[i], TRUE));
        nonempty += l->heap > 0 && l->mapped > 0;
      }
  g_assert_cmpuint (nonempty, >, 150);
}

/* Rows of every kind: heap (malloc, Python objects), mappings (mmap,
 * brk), and neither (CPython's arenas, device blocks). */
static void
vary_kinds (const char *path)
{
  tide_test_exec_sql (path, "UPDATE allocations SET kind = CASE id % 6"
                            " WHEN 0 THEN 1 WHEN 1 THEN 10 WHEN 2 THEN 2"
                            " WHEN 3 THEN 3 WHEN 4 THEN 11 ELSE 4 END;");
}

/* A process's heap at another's step end is read from its rows, not from
 * the counter the recorder polls (tide-live-at.c): the long-lived rows in
 * one pass, the recent ones through the ranges, for every layout a trace
 * may have. */
static void
test_live_at_matches_scan (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-ranges");
  g_autoptr(GRand) rand = g_rand_new_with_seed (5);
  g_autofree char *path = write_trace (dir, rand);

  vary_kinds (path);
  check_live_at (path, 3);
  make_old_layout (path);
  check_live_at (path, 4);
  /* No ranges: every row found through the index. */
  tide_test_exec_sql (path, "DROP TABLE allocation_ranges;"
                            "CREATE INDEX allocations_by_alloc"
                            " ON allocations (process_id, alloc_ns);");
  check_live_at (path, 5);
  g_remove (path);
  g_rmdir (dir);
}

/* The same rows without the ranges: the query a trace without them gets. */
static void
test_sql_without_ranges (void)
{
  g_autofree char *with = tide_alloc_ranges_retained_sql (TIDE_RETAINED_BY_RANGES, T, -1,
                                                          "process_id = ?1");
  g_autofree char *without = tide_alloc_ranges_retained_sql (TIDE_RETAINED_BY_INDEX, 0, -1,
                                                             "process_id = ?1");

  g_assert_nonnull (strstr (with, "allocation_ranges"));
  g_assert_nonnull (strstr (with, TIDE_LONG_LIVED_WHERE));
  g_assert_null (strstr (without, "allocation_ranges"));
  g_assert_null (strstr (without, "free_ns - alloc_ns"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/alloc-ranges/add", test_range_add);
  g_test_add_func ("/alloc-ranges/retained-matches-scan", test_retained_matches_scan);
  g_test_add_func ("/alloc-ranges/sql-without-ranges", test_sql_without_ranges);
  g_test_add_func ("/alloc-ranges/live-at-matches-scan", test_live_at_matches_scan);
  return g_test_run ();
}
