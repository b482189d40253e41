/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Cost is a test, not a hope: every query that the app and the reports
 * run does work that grows with what it returns, never with the trace.
 *
 * Two traces hold the same steps with the same allocations in them; the
 * large one holds ten times the allocations (and counter samples and
 * copies), the extra ones in a warm-up before the first step and a tail
 * after the last, at the same rate.  So every step query returns the same
 * rows from both, and a query that reads rows outside its window (a
 * scan, an index searched on one column of two, a summary read whole)
 * does more work on the large one.  Work is deterministic: SQLite's
 * virtual-machine steps and full-scan steps, summed over every statement
 * a call runs (sqlite3_trace_v2 hands each one over as it finishes).
 *
 * Each trace is checked twice: as the recorder writes it (block ranges,
 * tide-alloc-ranges.h) and as a trace written by other means has it (an
 * index on allocations, built at finish, like tide-gen-trace's).
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-alloc-ranges.h"
#include "tide-analysis.h"
#include "tide-drilldown.h"
#include "tide-live-at.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-timeline-data.h"
#include "tide-trace-private.h"
#include "tide-trace-writer.h"
#include "tide-trace.h"

#define N_STEPS        8
#define STEP_NS        (100 * G_GINT64_CONSTANT (1000000))
#define ALLOC_EVERY_NS (250 * G_GINT64_CONSTANT (1000))   /* 400 a step */
#define COUNTER_EVERY_NS G_GINT64_CONSTANT (1000000)
#define N_STACKS       8
#define LEAK_STACK     (N_STACKS + 1)
#define KIND_MALLOC    1

typedef struct
{
  gint64 alloc_ns;
  gint64 free_ns;   /* 0: live */
  gint64 stack_id;
  gint64 scope_id;
  gint64 size;
} Block;

typedef struct
{
  guint64 vm_steps;
  guint64 full_scan_steps;
  guint64 autoindex_rows;   /* rows put in indexes built for one statement */
} Work;

static gint
by_free (gconstpointer a,
         gconstpointer b)
{
  const Block *x = a, *y = b;
  gint64 fx = x->free_ns ? x->free_ns : G_MAXINT64, fy = y->free_ns ? y->free_ns : G_MAXINT64;

  return fx < fy ? -1 : fx > fy;
}

/* Blocks made at one rate from @begin to @end: most freed after 1 ms
 * (short-lived), one in ten after 30 ms (long-lived, and some live across
 * a step end); inside the steps one block in 50 of LEAK_STACK is never
 * freed, so it leaks a little every step. */
static void
add_blocks (GArray  *blocks,
            gint64   begin,
            gint64   end,
            gboolean in_steps)
{
  gint64 i = 0;

  for (gint64 t = begin; t < end; t += ALLOC_EVERY_NS, i++)
    {
      Block b = { t, t + G_GINT64_CONSTANT (1000000), 2 + i % N_STACKS, 1 + i % 2,
                  64 + 16 * (i % 7) };

      if (i % 10 == 3)
        b.free_ns = t + 30 * G_GINT64_CONSTANT (1000000);
      if (in_steps && i % 50 == 7)
        b = (Block) { t, 0, LEAK_STACK, 1, 4096 };
      g_array_append_val (blocks, b);
    }
}

static void
write_names (TideTraceWriter *w)
{
  TideProcessRow proc = { .id = 1, .pid = 4242, .all_mode = TRUE, .exe = "/usr/bin/train" };

  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_add_scope (w, 1, 1, 0, "encoder", "encoder");
  tide_trace_writer_add_scope (w, 2, 1, 0, "decoder", "decoder");
  for (gint s = 1; s <= LEAK_STACK; s++)
    {
      g_autofree char *name = g_strdup_printf ("site_%d", s);
      TideFrameRow frame = { .id = s, .kind = 1, .function = name, .file = "train.c",
                             .line = 10 * s, .module = "train" };

      tide_trace_writer_add_frame (w, &frame);
      tide_trace_writer_add_stack_node (w, s, s == 1 ? 0 : 1, s, s == 1 ? 1 : 2);
    }
}

/* A trace of N_STEPS steps with @extra_ns of allocations, samples and
 * copies before them and as much after them. */
static char *
write_trace (const char *dir,
             const char *name,
             gint64      extra_ns)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GArray) blocks = g_array_new (FALSE, FALSE, sizeof (Block));
  g_autoptr(TideTraceWriter) w = NULL;
  g_autoptr(GError) error = NULL;
  gint64 first = extra_ns, last = extra_ns + N_STEPS * STEP_NS, end = last + extra_ns;

  w = tide_trace_writer_new (path, &error);
  g_assert_no_error (error);
  write_names (w);
  for (gint k = 1; k <= N_STEPS; k++)
    tide_trace_writer_add_step (w, k, 1, k, "", first + (k - 1) * STEP_NS, first + k * STEP_NS);
  add_blocks (blocks, 0, first, FALSE);
  add_blocks (blocks, first, last, TRUE);
  add_blocks (blocks, last, end, FALSE);
  g_array_sort (blocks, by_free);
  for (guint i = 0; i < blocks->len; i++)
    {
      const Block *b = &g_array_index (blocks, Block, i);
      TideAllocRow row = { .process_id = 1, .alloc_ns = b->alloc_ns, .free_ns = b->free_ns,
                           .address = 0x10000 + 64 * i, .size = b->size, .weight = 1,
                           .stack_id = b->stack_id, .scope_id = b->scope_id, .device = -1,
                           .kind = KIND_MALLOC };

      tide_trace_writer_add_allocation (w, &row);
    }
  for (gint64 t = 0; t < end; t += COUNTER_EVERY_NS)
    {
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, t, (1 << 26) + t / 1000);
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_HEAP_LIVE, -1, t, (1 << 24) + t / 4000);
    }
  for (gint64 t = STEP_NS / 2; t < end; t += STEP_NS)
    tide_trace_writer_add_transfer (w, &(TideTransferRow) { .process_id = 1, .direction = 1,
                                                            .device = 0, .bytes = 1 << 20,
                                                            .start_ns = t, .duration_ns = 1000,
                                                            .stack_id = 2, .scope_id = 1 });
  tide_trace_writer_end_process (w, 1, end, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

/* Makes @path what a trace written by other means is before its
 * summaries (tide-gen-trace's): no block ranges and no index the recorder
 * keeps, then finishes it as tide-gen-trace does. */
static void
make_bare (const char *path)
{
  g_autoptr(GError) error = NULL;
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                     "DROP TABLE long_lived_allocations;"
                     "DROP TABLE IF EXISTS live_at_end;"
                     "DROP INDEX counters_by_time;"
                     "DROP INDEX IF EXISTS transfers_by_time;"
                     "DROP INDEX IF EXISTS allocation_ranges_by_max;"
                     "DELETE FROM allocation_ranges;"
                     "DELETE FROM step_series; DELETE FROM step_stats;"
                     "DELETE FROM meta WHERE key IN ('short_lived_ns', 'range_span_ns');",
                     NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_true (tide_analysis_build (db, &error));
  g_assert_no_error (error);
  sqlite3_close (db);
}

static int
add_statement_work (unsigned  type,
                    void     *user_data,
                    void     *p,
                    void     *x)
{
  Work *work = user_data;

  work->vm_steps += sqlite3_stmt_status (p, SQLITE_STMTSTATUS_VM_STEP, 1);
  work->full_scan_steps += sqlite3_stmt_status (p, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
  work->autoindex_rows += sqlite3_stmt_status (p, SQLITE_STMTSTATUS_AUTOINDEX, 1);
  return 0;
}

typedef enum
{
  Q_OPEN,
  Q_DRILL_FIRST_STEP,
  Q_DRILL_MIDDLE_STEP,
  Q_DRILL_LAST_STEP,
  Q_DRILL_ALL_PROCESSES,
  Q_DRILL_RANGE,
  Q_STEPS,
  Q_SUSPECTS_STACK,
  Q_SUSPECTS_SCOPE,
  Q_RETAINED_STACK,
  Q_RETAINED_SCOPE,
  Q_RETAINED_STEP_STACK,
  Q_RETAINED_STEP_SCOPE,
  Q_TIMELINE_STEPS,
  Q_TIMELINE_LANES,
  Q_GROUP_SERIES,
  Q_JOB_BY_PSS,
  N_QUERIES
} Query;

static const char *query_names[N_QUERIES] = {
  "open the trace", "drill-down of step 1", "drill-down of a middle step", "drill-down of the last step",
  "drill-down of a step, every process", "drill-down of a range", "report --steps",
  "report --suspects", "report --suspects --by scope", "report --retained",
  "report --retained --by scope", "report --retained --step", "report --retained --step --by scope",
  "timeline steps", "timeline lanes of a step", "suspect's series", "job told by PSS or RSS",
};

static gint64
step_start (TideTrace *trace,
            gint       number)
{
  g_autofree char *sql = g_strdup_printf ("SELECT start_ns FROM steps WHERE number = %d",
                                          number);
  return tide_test_query_int (trace, sql) - tide_trace_get_start_ns (trace);
}

static gint64
step_end (TideTrace *trace,
          gint       number)
{
  g_autofree char *sql = g_strdup_printf ("SELECT end_ns FROM steps WHERE number = %d", number);
  return tide_test_query_int (trace, sql) - tide_trace_get_start_ns (trace);
}

static GPtrArray *
drill (TideTrace *trace,
       gint64     process_id,
       gint64     begin_ns,
       gint64     end_ns)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *groups = tide_drilldown_retained (trace, process_id, begin_ns, end_ns, &error);

  g_assert_no_error (error);
  return groups;
}

static GPtrArray *
report (TideTrace *trace,
        Query      q)
{
  g_autoptr(GError) error = NULL;
  TideGroupBy by = (q == Q_SUSPECTS_SCOPE || q == Q_RETAINED_SCOPE || q == Q_RETAINED_STEP_SCOPE)
                   ? TIDE_GROUP_BY_SCOPE : TIDE_GROUP_BY_STACK;
  GPtrArray *rows = NULL;

  if (q == Q_STEPS)
    rows = tide_report_steps (trace, &error);
  else if (q == Q_SUSPECTS_STACK || q == Q_SUSPECTS_SCOPE)
    rows = tide_report_suspects (trace, by, &error);
  else
    rows = tide_report_retained (trace, q >= Q_RETAINED_STEP_STACK ? N_STEPS / 2 : 0, by,
                                 &error);
  g_assert_no_error (error);
  return rows;
}

/* Runs query @q; returns how many rows it returned, and a digest of
 * them (total bytes), which must be the same on both traces. */
static guint
run_query (TideTrace *trace,
           Query      q,
           gint64    *digest)
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GArray) array = NULL;
  g_autoptr(GError) error = NULL;
  gint64 begin = step_start (trace, N_STEPS / 2), end = step_end (trace, N_STEPS / 2);

  *digest = 0;
  switch (q)
    {
    case Q_DRILL_FIRST_STEP:
      rows = drill (trace, 1, step_start (trace, 1), step_end (trace, 1));
      break;
    case Q_DRILL_MIDDLE_STEP:
      rows = drill (trace, 1, begin, end);
      break;
    case Q_DRILL_LAST_STEP:
      rows = drill (trace, 1, step_start (trace, N_STEPS), step_end (trace, N_STEPS));
      break;
    case Q_DRILL_ALL_PROCESSES:
      rows = drill (trace, 0, begin, end);
      break;
    case Q_DRILL_RANGE:
      rows = drill (trace, 1, begin + STEP_NS / 3, end + STEP_NS / 3);
      break;
    case Q_TIMELINE_STEPS:
      array = tide_timeline_steps (trace, 0, &error);
      g_assert_no_error (error);
      return array->len;
    case Q_TIMELINE_LANES:
      {
        TideTimeWindow window = { begin, end, 400 };
        g_autoptr(TideTimelineData) data = tide_timeline_data_query (trace, 1, &window, &error);
        g_assert_no_error (error);
        return 1;
      }
    case Q_GROUP_SERIES:
      array = tide_timeline_group_series (trace, 1, LEAK_STACK, 0, -1, &error);
      g_assert_no_error (error);
      return array->len;
    case Q_JOB_BY_PSS:
      {
        gboolean by_pss = TRUE;

        g_assert_true (tide_report_job_by_pss (trace, &by_pss, &error));
        g_assert_no_error (error);
        *digest = by_pss;
        return 1;
      }
    default:
      rows = report (trace, q);
      break;
    }
  if (q == Q_STEPS)
    for (guint i = 0; i < rows->len; i++)
      *digest += ((TideStepRow *) g_ptr_array_index (rows, i))->retained_bytes;
  else
    for (guint i = 0; i < rows->len; i++)
      *digest += ((TideGroup *) g_ptr_array_index (rows, i))->bytes;
  return rows->len;
}

typedef struct
{
  Work   work;
  guint  n_rows;
  gint64 digest;
} Measure;

static Work *open_work;

/* Registered with sqlite3_auto_extension(), so that the statements of
 * tide_trace_open() count too: it opens its connection itself. */
static int
trace_new_connection (sqlite3                            *db,
                      const char                        **message,
                      const struct sqlite3_api_routines  *api)
{
  sqlite3_trace_v2 (db, SQLITE_TRACE_PROFILE, add_statement_work, open_work);
  return SQLITE_OK;
}

static TideTrace *
open_measured (const char *path,
               Measure    *out)
{
  TideTrace *trace;

  *out = (Measure) { .n_rows = 1 };
  open_work = &out->work;
  g_assert_cmpint (sqlite3_auto_extension ((void (*) (void)) trace_new_connection), ==,
                   SQLITE_OK);
  trace = tide_test_open_trace (path);
  sqlite3_cancel_auto_extension ((void (*) (void)) trace_new_connection);
  sqlite3_trace_v2 (_tide_trace_get_db (trace), 0, NULL, NULL);
  open_work = NULL;
  return trace;
}

static void
measure_all (const char *path,
             Measure     out[N_QUERIES])
{
  g_autoptr(TideTrace) trace = open_measured (path, &out[Q_OPEN]);
  sqlite3 *db = _tide_trace_get_db (trace);

  for (Query q = Q_OPEN + 1; q < N_QUERIES; q++)
    {
      Work work = { 0 };

      sqlite3_trace_v2 (db, SQLITE_TRACE_PROFILE, add_statement_work, &work);
      out[q].n_rows = run_query (trace, q, &out[q].digest);
      sqlite3_trace_v2 (db, 0, NULL, NULL);
      out[q].work = work;
    }
}

/* Work may grow by half, never with the trace's size; full scans not at
 * all.  The end of a window falls in one block range or in two
 * (tide-alloc-ranges.h), so up to two ranges' rows more may be read, at
 * about 12 VM steps a row. */
static gboolean
bounded (guint64 small,
         guint64 large,
         guint64 slack)
{
  return large <= small + small / 2 + slack;
}

static void
check_costs (gboolean bare)
{
  g_autofree char *dir = tide_test_make_dir ("tide-query-cost");
  /* The steps hold 3,200 blocks; the small trace 4,000, the large 40,000. */
  g_autofree char *small = write_trace (dir, "small.tide", STEP_NS);
  g_autofree char *large = write_trace (dir, "large.tide", 46 * STEP_NS);
  Measure s[N_QUERIES], l[N_QUERIES];
  gboolean failed = FALSE;

  if (bare)
    {
      make_bare (small);
      make_bare (large);
    }
  measure_all (small, s);
  measure_all (large, l);
  for (Query q = 0; q < N_QUERIES; q++)
    {
      gboolean ok = bounded (s[q].work.vm_steps, l[q].work.vm_steps,
                             2 * 16 * TIDE_ALLOC_RANGE_ROWS) &&
                    bounded (s[q].work.full_scan_steps, l[q].work.full_scan_steps, 0);

      g_test_message ("%-38s rows %3u  vm steps %8" G_GUINT64_FORMAT " -> %8" G_GUINT64_FORMAT
                      "  full-scan steps %6" G_GUINT64_FORMAT " -> %6" G_GUINT64_FORMAT "%s",
                      query_names[q], s[q].n_rows, s[q].work.vm_steps, l[q].work.vm_steps,
                      s[q].work.full_scan_steps, l[q].work.full_scan_steps,
                      ok ? "" : "  GROWS WITH THE TRACE");
      failed |= !ok;
      /* The same answer from both traces. */
      g_assert_cmpuint (s[q].n_rows, ==, l[q].n_rows);
      g_assert_cmpint (s[q].digest, ==, l[q].digest);
    }
  g_assert_false (failed);
  tide_test_remove_dir (dir);
}

/* A process's heap at other processes' step ends reads its long-lived
 * rows once, which grows with them by design, and the short-lived rows
 * through the block ranges near the times: never a scan of the table, nor
 * an index that SQLite builds for one statement (given "process_id = ?1"
 * in the drill-down's window query, which the first version asked at
 * each time, it built one on every allocation for each). */
static void
test_live_at_reads_no_table (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-query-cost");
  g_autofree char *path = write_trace (dir, "large.tide", 46 * STEP_NS);
  g_autoptr(TideTrace) trace = tide_test_open_trace (path);
  gint64 times[2 * N_STEPS];
  TideLiveBytes live[G_N_ELEMENTS (times)];
  TideLiveAtRequest request = { 1, times, G_N_ELEMENTS (times), live };
  g_autoptr(GError) error = NULL;
  Work work = { 0 };

  for (gint k = 1; k <= N_STEPS; k++)
    {
      times[2 * k - 2] = tide_trace_get_start_ns (trace) + step_start (trace, k);
      times[2 * k - 1] = tide_trace_get_start_ns (trace) + step_end (trace, k);
    }
  sqlite3_trace_v2 (_tide_trace_get_db (trace), SQLITE_TRACE_PROFILE, add_statement_work, &work);
  g_assert_true (tide_trace_live_at (trace, &request, 1, &error));
  sqlite3_trace_v2 (_tide_trace_get_db (trace), 0, NULL, NULL);
  g_assert_no_error (error);
  g_assert_cmpint (live[G_N_ELEMENTS (times) - 1].heap, >, 0);
  g_assert_cmpuint (work.full_scan_steps, ==, 0);
  g_assert_cmpuint (work.autoindex_rows, ==, 0);
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

static void
test_recorded (void)
{
  check_costs (FALSE);
}

static void
test_bare (void)
{
  check_costs (TRUE);
}

/* A trace finished before live_at_end and the range index opens, and its
 * queries read allocations instead, with the same answers. */
static void
test_old_trace_falls_back (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-query-cost");
  g_autofree char *path = write_trace (dir, "old.tide", STEP_NS);
  Measure now[N_QUERIES], old[N_QUERIES];

  measure_all (path, now);
  tide_test_exec_sql (path, "DROP TABLE live_at_end;"
                            "DROP INDEX allocation_ranges_by_max;"
                            "DELETE FROM meta WHERE key = 'range_span_ns';");
  measure_all (path, old);
  for (Query q = 0; q < N_QUERIES; q++)
    {
      g_assert_cmpuint (now[q].n_rows, ==, old[q].n_rows);
      g_assert_cmpint (now[q].digest, ==, old[q].digest);
    }
  /* Still live at the end: every 50th block of the 3,200 in the steps,
   * 4096 bytes each, all of LEAK_STACK. */
  g_assert_cmpint (now[Q_RETAINED_STACK].digest, ==, 64 * 4096);
  /* The fallback reads every row of the process: the summary does not. */
  g_assert_cmpuint (old[Q_RETAINED_STACK].work.full_scan_steps, >, 4000);
  g_assert_cmpuint (now[Q_RETAINED_STACK].work.full_scan_steps, <, 100);
  tide_test_remove_dir (dir);
}

/* A trace of N_STEPS steps where each of @n_stacks stacks keeps one
 * block from the first step on, in one of two scopes. */
static char *
write_live_stacks (const char *dir,
                   const char *name,
                   gint        n_stacks)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(TideTraceWriter) w = NULL;
  g_autoptr(GError) error = NULL;
  TideProcessRow proc = { .id = 1, .pid = 4242, .all_mode = TRUE, .exe = "/usr/bin/train" };

  w = tide_trace_writer_new (path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_add_scope (w, 1, 1, 0, "encoder", "encoder");
  tide_trace_writer_add_scope (w, 2, 1, 0, "decoder", "decoder");
  for (gint k = 1; k <= N_STEPS; k++)
    tide_trace_writer_add_step (w, k, 1, k, "", (k - 1) * STEP_NS, k * STEP_NS);
  for (gint s = 1; s <= n_stacks; s++)
    {
      g_autofree char *function = g_strdup_printf ("site_%d", s);
      TideFrameRow frame = { .id = s, .kind = 1, .function = function, .file = "train.c",
                             .line = s, .module = "train" };
      TideAllocRow row = { .process_id = 1, .alloc_ns = STEP_NS / 2 + s, .address = 0x10000 + 64 * s,
                           .size = 64, .weight = 1, .stack_id = s, .scope_id = 1 + s % 2,
                           .device = -1, .kind = KIND_MALLOC };

      tide_trace_writer_add_frame (w, &frame);
      tide_trace_writer_add_stack_node (w, s, 0, s, 1);
      tide_trace_writer_add_allocation (w, &row);
    }
  tide_trace_writer_end_process (w, 1, N_STEPS * STEP_NS, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

/* The work of `report --retained` (and of diff, which reads every group)
 * grows with the groups it returns, not with their square: each group's
 * scope was one query that read the step series of every stack. */
static void
test_many_stacks (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-query-cost");
  g_autofree char *few = write_live_stacks (dir, "few.tide", 40);
  g_autofree char *many = write_live_stacks (dir, "many.tide", 400);
  Measure f[N_QUERIES], m[N_QUERIES];

  measure_all (few, f);
  measure_all (many, m);
  g_assert_cmpuint (f[Q_RETAINED_STACK].n_rows, ==, 40);
  g_assert_cmpuint (m[Q_RETAINED_STACK].n_rows, ==, 400);
  g_test_message ("report --retained: vm steps %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT,
                  f[Q_RETAINED_STACK].work.vm_steps, m[Q_RETAINED_STACK].work.vm_steps);
  /* Ten times the groups: ten times the work, and some. */
  g_assert_cmpuint (m[Q_RETAINED_STACK].work.vm_steps, <=,
                    15 * f[Q_RETAINED_STACK].work.vm_steps);
  tide_test_remove_dir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/query-cost/recorded", test_recorded);
  g_test_add_func ("/query-cost/bare", test_bare);
  g_test_add_func ("/query-cost/old-trace-falls-back", test_old_trace_falls_back);
  g_test_add_func ("/query-cost/many-stacks", test_many_stacks);
  g_test_add_func ("/query-cost/live-at-reads-no-table", test_live_at_reads_no_table);
  return g_test_run ();
}
