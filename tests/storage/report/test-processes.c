/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Roles of a job's processes, the job's steps and `report --processes`, on
 * a trace written here with exactly known contents: a launcher that
 * spawned a resource tracker and two ranks, where rank 1 leaks 64 KiB per
 * step from step 2 and has a DataLoader worker that starts halfway through
 * step 3.  Also read as a schema 2 trace, which stored no roles.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tide-job-lane.h"
#include "tide-processes.h"
#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-test-util.h"
#include "tide-trace-writer.h"
#include "tide-trace.h"

#define MS        G_GINT64_CONSTANT (1000000)
#define MIB       G_GINT64_CONSTANT (1048576)
#define N_STEPS   6
#define LEAK      65536
#define LAUNCHER_CMD "/usr/bin/python3 /src/train.py --epochs 3"
#define TRACKER_CMD  "/usr/bin/python3 -B -c from multiprocessing.resource_tracker import main;main(9)"
#define SPAWN_CMD    "/usr/bin/python3 -B -c from multiprocessing.spawn import spawn_main"

enum { LAUNCHER = 1, TRACKER, RANK0, RANK1, WORKER };

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static void
add_process (TideTraceWriter *w,
             gint64           id,
             gint64           parent_id,
             gint64           start_ns,
             const char      *cmdline)
{
  TideProcessRow row = { .id = id, .pid = 9 + id, .ppid = parent_id ? 9 + parent_id : 1,
                         .parent_id = parent_id, .start_ns = start_ns, .all_mode = TRUE,
                         .exe = "/usr/bin/python3.11", .cmdline = cmdline };

  tide_trace_writer_add_process (w, &row);
  tide_trace_writer_end_process (w, id, 10 * MS, &tide_test_exited_0, 0);
}

/* Rank @id: steps k = 1..N_STEPS span ((k-1) ms, k ms], RSS (@base + k
 * @per_step) MiB at each step end; rank 1 keeps a block per step from 2. */
static void
add_rank (TideTraceWriter *w,
          gint64           id,
          gint             rank,
          gint64           base,
          gint64           per_step)
{
  add_process (w, id, LAUNCHER, 0, SPAWN_CMD);
  tide_trace_writer_set_process_rank (w, id, rank);
  for (gint k = 1; k <= N_STEPS; k++)
    {
      tide_trace_writer_add_step (w, id * 100 + k, id, k, "", (k - 1) * MS, k * MS);
      tide_trace_writer_add_counter (w, id, TIDE_COUNTER_RSS, -1, k * MS - 1,
                                     (base + k * per_step) * MIB);
      if (rank == 1 && k >= 2)
        {
          TideAllocRow a = { .process_id = id, .alloc_ns = (k - 1) * MS + 100,
                             .address = 0x100000 * k, .size = LEAK, .weight = 1,
                             .stack_id = 1, .device = -1, .kind = 1 };
          tide_trace_writer_add_allocation (w, &a);
        }
    }
}

/* A heap block of process @id; @free_ns 0: never freed. */
static void
add_block (TideTraceWriter *w,
           gint64           id,
           gint64           alloc_ns,
           gint64           free_ns,
           gint64           size)
{
  TideAllocRow a = { .process_id = id, .alloc_ns = alloc_ns, .free_ns = free_ns,
                     .address = 0x7000000 * id + alloc_ns, .size = size, .weight = 1,
                     .stack_id = 1, .device = -1, .kind = 1 };

  tide_trace_writer_add_allocation (w, &a);
}

static void
write_job (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideFrameRow frame = { .id = 1, .kind = TIDE_FRAME_PYTHON, .function = "run",
                         .file = "/src/train.py", .line = 25 };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_frame (w, &frame);
  tide_trace_writer_add_stack_node (w, 1, 0, 1, 1);

  add_process (w, LAUNCHER, 0, 0, LAUNCHER_CMD);
  tide_trace_writer_add_counter (w, LAUNCHER, TIDE_COUNTER_RSS, -1, MS / 2, 20 * MIB);
  tide_trace_writer_add_counter (w, LAUNCHER, TIDE_COUNTER_RSS, -1, 5 * MS + MS / 2, 25 * MIB);
  add_process (w, TRACKER, LAUNCHER, 0, TRACKER_CMD);
  add_rank (w, RANK0, 0, 30, 1);
  add_rank (w, RANK1, 1, 40, 2);

  /* A forked worker of rank 1: no rank of its own, no steps. */
  add_process (w, WORKER, RANK1, 2 * MS + MS / 2, LAUNCHER_CMD);
  tide_trace_writer_set_process_worker (w, WORKER, 0);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS, -1, 2600000, 50 * MIB);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS, -1, 4 * MS - 1, 51 * MIB);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS, -1, 6 * MS - 1, 53 * MIB);
  /* Its high-water mark, above every reading: 58 MiB at once. */
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS_PEAK, -1, 6 * MS - 1, 58 * MIB);
  /* Its heap: 1 MiB from 2.6 ms and 1 MiB more from 5 ms, and 8 MiB that
   * lived across rank 1's fourth step end, from 3.9 to 4.1 ms.  The
   * recorder polled its heap as its records came, which it sends late:
   * the counter never held the 8 MiB, nor the first MiB by 4 ms. */
  add_block (w, WORKER, 2600000, 0, MIB);
  add_block (w, WORKER, 5 * MS - 1, 0, MIB);
  add_block (w, WORKER, 3900000, 4100000, 8 * MIB);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_HEAP_LIVE, -1, 4500000, MIB);

  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = tide_test_make_dir ("tide-processes");
  f->path = g_build_filename (f->dir, "job.tide", NULL);
  write_job (f->path);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *old = g_build_filename (f->dir, "old.tide", NULL);

  g_clear_object (&f->trace);
  g_unlink (f->path);
  g_unlink (old);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

/* "role,rank,worker" of every process row, as stored, by id. */
static char *
stored_roles (const char *path)
{
  g_autoptr(GString) out = g_string_new (NULL);
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT coalesce (role, ''), coalesce (rank, ''),"
                                           " coalesce (worker, '') FROM processes ORDER BY id",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    g_string_append_printf (out, "%s,%s,%s;", sqlite3_column_text (stmt, 0),
                            sqlite3_column_text (stmt, 1), sqlite3_column_text (stmt, 2));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static char *
labels (TideTrace *trace)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) processes = tide_trace_list_processes (trace, &error);
  g_autoptr(GString) out = g_string_new (NULL);

  g_assert_no_error (error);
  for (guint i = 0; i < processes->len; i++)
    {
      g_autofree char *desc = tide_process_describe (g_ptr_array_index (processes, i));
      g_string_append_printf (out, "%s [%d]; ", desc,
                              ((TideProcess *) g_ptr_array_index (processes, i))->dist_rank);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
test_roles (Fixture       *f,
            gconstpointer  data)
{
  g_autofree char *stored = stored_roles (f->path);
  g_autofree char *names = labels (f->trace);

  /* launcher, helper, rank 0, rank 1, and a worker that works for rank 1. */
  g_assert_cmpstr (stored, ==, "3,,;4,,;1,0,;1,1,;2,1,0;");
  g_assert_cmpstr (names, ==, "launcher (pid 10) [-1]; helper (pid 11) [-1]; "
                              "rank 0 (pid 12) [0]; rank 1 (pid 13) [1]; "
                              "DataLoader worker 0 (pid 14) [1]; ");
}

static void
test_suspects_name_rank (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, &error);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) csv = g_string_new (NULL);
  TideGroup *g;

  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  g = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (g->process.pid, ==, 13);
  g_assert_cmpstr (g->process.role, ==, "rank 1");
  g_assert_cmpint (g->process.dist_rank, ==, 1);
  g_assert_cmpint (g->bytes, ==, 5 * LEAK);

  tide_format_groups (text, suspects, TIDE_GROUPS_SUSPECTS, TIDE_GROUP_BY_STACK, 0,
                      TIDE_FORMAT_TEXT);
  g_assert_true (g_str_has_prefix (text->str, "Leak suspects by stack (steady growth step over "
                                   "step), fastest first:\n  1. train.py:25 run\n"
                                   "       +64.00 KiB/step since step 2, 320.00 KiB live at the "
                                   "last step, in rank 1 (pid 13) on host\n"));
  tide_format_groups (csv, suspects, TIDE_GROUPS_SUSPECTS, TIDE_GROUP_BY_STACK, 0,
                      TIDE_FORMAT_CSV);
  g_assert_true (g_str_has_prefix (csv->str, "position,pid,role,dist_rank,device,bytes,"));
  g_assert_nonnull (strstr (csv->str, "\n1,13,rank 1,1,host,327680,"));
}

/* Own steps of the ranks; the launcher and the tracker at rank 0's steps;
 * the worker at rank 1's, from the step it started in. */
static void
test_job_steps (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = tide_report_job_steps (f->trace, &error);
  g_autoptr(GString) shape = g_string_new (NULL);
  g_autoptr(GString) worker = g_string_new (NULL);
  TideStepRow *launcher_last;

  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2 * N_STEPS + 2 * N_STEPS + 4);
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      if (r->number <= 3)
        g_string_append_printf (shape, "%d:%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT " ",
                                r->number, r->process.pid, r->steps_pid);
      if (r->process.pid == 14)
        g_string_append_printf (worker, "%d %s %d %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "; ", r->number,
                                r->process.role, r->process.dist_rank, r->rss_end / MIB,
                                r->rss_delta / MIB, r->heap_end / MIB, r->heap_delta / MIB);
    }
  g_assert_cmpstr (shape->str, ==, "1:10/12 1:11/12 1:12/12 1:13/13 "
                                   "2:10/12 2:11/12 2:12/12 2:13/13 "
                                   "3:10/12 3:11/12 3:12/12 3:13/13 3:14/13 ");
  /* Its heap at each step end from its blocks' own times (before: from
   * the counter, "4 ... 1 0" and "5 ... 1 0"). */
  g_assert_cmpstr (worker->str, ==, "3 DataLoader worker 0 1 50 50 1 1; "
                                    "4 DataLoader worker 0 1 51 1 9 8; "
                                    "5 DataLoader worker 0 1 51 0 2 -7; "
                                    "6 DataLoader worker 0 1 53 2 2 0; ");
  launcher_last = g_ptr_array_index (rows, rows->len - 5);
  g_assert_cmpint (launcher_last->process.pid, ==, 10);
  g_assert_true (launcher_last->borrowed);
  g_assert_cmpint (launcher_last->rss_end, ==, 25 * MIB);
  g_assert_cmpint (launcher_last->rss_delta, ==, 5 * MIB);
}

/* A launcher that grows before its rank's first step, and a worker whose
 * RSS at fork is its parent's. */
static void
write_late_job (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  add_process (w, LAUNCHER, 0, 0, LAUNCHER_CMD);
  tide_trace_writer_add_counter (w, LAUNCHER, TIDE_COUNTER_RSS, -1, 0, 4 * MIB);
  /* The import, before the rank starts. */
  tide_trace_writer_add_counter (w, LAUNCHER, TIDE_COUNTER_RSS, -1, 5 * MS, 100 * MIB);
  add_block (w, LAUNCHER, 5 * MS, 0, 90 * MIB);
  tide_trace_writer_add_counter (w, LAUNCHER, TIDE_COUNTER_RSS, -1, 7 * MS, 101 * MIB);
  add_block (w, LAUNCHER, 7 * MS, 0, MIB);
  add_process (w, RANK0, LAUNCHER, 6 * MS, SPAWN_CMD);
  tide_trace_writer_set_process_rank (w, RANK0, 0);
  tide_trace_writer_add_step (w, 1, RANK0, 1, "", 6 * MS, 8 * MS);
  tide_trace_writer_add_step (w, 2, RANK0, 2, "", 8 * MS, 9 * MS);
  tide_trace_writer_add_counter (w, RANK0, TIDE_COUNTER_RSS, -1, 6 * MS, 4 * MIB);
  /* Forked within step 1 with 60 MiB of its parent's pages. */
  add_process (w, WORKER, RANK0, 7 * MS, LAUNCHER_CMD);
  tide_trace_writer_set_process_worker (w, WORKER, 0);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS, -1, 7 * MS, 60 * MIB);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS, -1, 8 * MS - 1, 62 * MIB);
  tide_trace_writer_add_counter (w, WORKER, TIDE_COUNTER_RSS, -1, 9 * MS - 1, 63 * MIB);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
}

/* Each one's first borrowed step counts from its own start: RSS, heap,
 * and the kin that started. */
static void
test_job_steps_from_start (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-processes-start");
  g_autofree char *path = g_build_filename (dir, "late.tide", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  TideStepRow *launcher_first;

  write_late_job (path);
  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      if (r->borrowed)
        g_string_append_printf (seen, "%d %" G_GINT64_FORMAT ": rss %+" G_GINT64_FORMAT
                                " heap %+" G_GINT64_FORMAT " started %u; ", r->number, r->process.pid,
                                r->rss_delta / MIB, r->heap_delta / MIB, r->kin_started->len);
    }
  /* The launcher's row of step 1 also names the rank that started with
   * the step, after the launcher's own start. */
  g_assert_cmpstr (seen->str, ==, "1 10: rss +97 heap +91 started 1; "
                                  "1 14: rss +2 heap +0 started 0; "
                                  "2 10: rss +0 heap +0 started 0; "
                                  "2 14: rss +1 heap +0 started 0; ");
  launcher_first = g_ptr_array_index (rows, 0);
  g_assert_cmpint (launcher_first->process.pid, ==, 10);
  g_assert_cmpstr (g_ptr_array_index (launcher_first->kin_started, 0), ==, "rank 0");
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

/* A wrapper shell that exec()s Python, its image ending @sh_end_ns in,
 * before or after the readings of every live process at 20 ms. */
static void
write_exec_wrapper_job (const char *path,
                        gint64      sh_end_ns)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideProcessRow sh = { .id = 1, .pid = 50, .ppid = 1, .start_ns = 0, .all_mode = TRUE,
                        .exe = "/usr/bin/dash", .cmdline = "sh -c exec python3 train.py" };
  TideProcessRow py = { .id = 2, .pid = 50, .ppid = 1, .start_ns = sh_end_ns, .all_mode = TRUE,
                        .exe = "/usr/bin/python3.11", .cmdline = "python3 train.py" };
  TideProcessRow helper = { .id = 3, .pid = 51, .ppid = 1, .start_ns = 0, .all_mode = TRUE,
                            .exe = "/usr/bin/python3.11", .cmdline = "python3 helper.py" };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &sh);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, 0, 2 * MIB);
  tide_trace_writer_end_process (w, 1, sh_end_ns, &tide_test_exited_0, 0);
  tide_trace_writer_add_process (w, &py);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS, -1, 30 * MS, 100 * MIB);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_PSS, -1, 40 * MS, 80 * MIB);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS, -1, 50 * MS, 200 * MIB);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_PSS, -1, 60 * MS, 150 * MIB);
  tide_trace_writer_end_process (w, 2, 100 * MS, &tide_test_exited_0, 0);
  /* A helper, read at 20 ms with every live process. */
  tide_trace_writer_add_process (w, &helper);
  tide_trace_writer_add_counter (w, 3, TIDE_COUNTER_RSS, -1, 0, MIB);
  tide_trace_writer_add_counter (w, 3, TIDE_COUNTER_PSS, -1, 20 * MS, MIB);
  tide_trace_writer_end_process (w, 3, 100 * MS, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
}

/* The job is told by PSS, in the peak and the job lane alike, although the
 * shell that its wrapper exec()ed had no PSS reading: it lived at no moment
 * that PSS was read at.  A process that did, unread, leaves RSS. */
static void
test_job_peak_exec_wrapper (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-processes-wrapper");
  g_autofree char *path = g_build_filename (dir, "wrapper.tide", NULL);
  g_autofree char *late = g_build_filename (dir, "unread.tide", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(TideTrace) unread = NULL;
  g_autoptr(TideJobLane) lane = NULL;
  TideJobPeak peak;

  write_exec_wrapper_job (path, 4 * MS);
  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (tide_report_job_peak (trace, &peak, &error));
  g_assert_no_error (error);
  g_assert_true (peak.known && peak.by_pss);
  g_assert_cmpint (peak.bytes, ==, 151 * MIB);
  g_assert_cmpint (peak.ts_ns, ==, 60 * MS);
  lane = tide_job_lane_query_job (trace, &(TideTimeWindow) { 0, 100 * MS, 10 }, &error);
  g_assert_no_error (error);
  g_assert_true (lane->by_pss);
  g_assert_cmpint (lane->peak, ==, 151 * MIB);
  g_assert_cmpint (((TideJobBand *) g_ptr_array_index (lane->bands, 0))->last[0], ==, 0);

  /* The shell read at 20 ms had no PSS: the job is told by RSS. */
  write_exec_wrapper_job (late, 25 * MS);
  unread = tide_trace_open (late, &error);
  g_assert_no_error (error);
  g_assert_true (tide_report_job_peak (unread, &peak, &error));
  g_assert_false (peak.by_pss);
  g_assert_cmpint (peak.bytes, ==, 201 * MIB);

  g_clear_object (&trace);
  g_clear_object (&unread);
  tide_test_remove_dir (dir);
}

/* A job of one process (id 1) whose PSS is read at 40 ms and 95 ms; with
 * @with_child, a forked child that shares 60 MiB of its anonymous pages
 * while its PSS is read at 40 ms, and whose RSS rises by 60 MiB of its
 * parent's file pages at 60 ms; with @anon_rises, the process maps 80 MiB
 * of anonymous memory more by 70 ms. */
static void
write_rise_job (const char *path,
                gboolean    with_child,
                gboolean    anon_rises)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideProcessRow py = { .id = 1, .pid = 60, .ppid = 1, .start_ns = 0, .all_mode = TRUE,
                        .exe = "/usr/bin/python3.11", .cmdline = "python3 train.py" };
  TideProcessRow child = { .id = 2, .pid = 61, .ppid = 60, .parent_id = 1, .start_ns = 20 * MS,
                           .all_mode = TRUE, .exe = "/usr/bin/python3.11",
                           .cmdline = "python3 train.py" };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &py);
  for (gint n = 1; n <= 3; n++)
    tide_trace_writer_add_step (w, n, 1, n, NULL, (n - 1) * 30 * MS, n * 30 * MS);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, 0, 10 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, 40 * MS, 104 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS_ANON, -1, 40 * MS, 94 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_PSS, -1, 40 * MS, 100 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, 70 * MS, 190 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS_ANON, -1, 70 * MS,
                                 anon_rises ? 174 * MIB : 94 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, 95 * MS, 10 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS_ANON, -1, 95 * MS, 4 * MIB);
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_PSS, -1, 95 * MS, 9 * MIB);
  tide_trace_writer_end_process (w, 1, 100 * MS, &tide_test_exited_0, 0);
  if (with_child)
    {
      tide_trace_writer_add_process (w, &child);
      tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS, -1, 20 * MS, 60 * MIB);
      tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS_ANON, -1, 20 * MS, 60 * MIB);
      tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_PSS, -1, 40 * MS, 0);
      tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS, -1, 60 * MS, 120 * MIB);
      tide_trace_writer_end_process (w, 2, 80 * MS, &tide_test_exited_0, 0);
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
}

/* The job peak of write_rise_job()'s trace at @path, and its rise in words. */
static char *
rise_of_job (const char  *path,
             TideJobPeak *peak)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);

  g_assert_no_error (error);
  g_assert_true (tide_report_job_peak (trace, peak, &error));
  g_assert_no_error (error);
  g_assert_cmpint (peak->bytes, ==, 100 * MIB);
  return tide_job_peak_describe_rise (peak);
}

/* One process whose PSS was read at 40 ms, in step 2, and next as it
 * exited, once it had freed what it kept: its RSS rose 86 MiB after the
 * peak's reading, to its top in step 3, which the peak says.  Where it
 * shared pages with a forked child at that reading, their RSS summed is
 * no measure of the job's memory (the child's rose reading its parent's
 * file): their anonymous memory says the rise, where there was one. */
static void
test_job_peak_rise (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-processes-rise");
  g_autofree char *path = g_build_filename (dir, "rise.tide", NULL);
  g_autofree char *shared = g_build_filename (dir, "shared.tide", NULL);
  g_autofree char *anon = g_build_filename (dir, "anon.tide", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) json = g_string_new (NULL);
  g_autoptr(GPtrArray) summaries = NULL;
  g_autofree char *rise = NULL;
  g_autofree char *rise_shared = NULL;
  g_autofree char *rise_anon = NULL;
  TideJobPeak peak;

  write_rise_job (path, FALSE, TRUE);
  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (tide_report_job_peak (trace, &peak, &error));
  g_assert_no_error (error);
  g_assert_true (peak.known && peak.by_pss);
  g_assert_cmpint (peak.bytes, ==, 100 * MIB);
  g_assert_cmpint (peak.step, ==, 2);
  g_assert_cmpint (peak.rise_bytes, ==, 86 * MIB);
  g_assert_false (peak.rise_anon);
  g_assert_cmpint (peak.rise_ns, ==, 70 * MS);
  g_assert_cmpint (peak.rise_step, ==, 3);
  rise = tide_job_peak_describe_rise (&peak);
  g_assert_cmpstr (rise, ==, "its RSS rose 86.00 MiB more after that reading, by step 3");

  summaries = tide_report_processes (trace, &error);
  g_assert_no_error (error);
  tide_format_processes (text, summaries, &peak, TIDE_FORMAT_TEXT);
  g_assert_nonnull (strstr (text->str, "\nJob peak PSS: 100.00 MiB, in step 2; its RSS rose 86.00 MiB"
                                       " more after that reading, by step 3\n"));
  tide_format_processes (json, summaries, &peak, TIDE_FORMAT_JSON);
  g_assert_nonnull (strstr (json->str, "\"step\":2,\"rss_rise_after_bytes\":90177536,"
                                       "\"rss_rise_step\":3,\"rise_of\":\"rss\"}"));

  write_rise_job (shared, TRUE, FALSE);
  rise_shared = rise_of_job (shared, &peak);
  g_assert_cmpint (peak.rise_bytes, ==, 0);
  g_assert_null (rise_shared);

  write_rise_job (anon, TRUE, TRUE);
  rise_anon = rise_of_job (anon, &peak);
  g_assert_cmpint (peak.rise_bytes, ==, 80 * MIB);
  g_assert_true (peak.rise_anon);
  g_assert_cmpint (peak.rise_step, ==, 3);
  g_assert_cmpstr (rise_anon, ==, "its anonymous memory rose 80.00 MiB more after that reading, "
                                  "by step 3");
  g_string_truncate (json, 0);
  tide_format_processes (json, summaries, &peak, TIDE_FORMAT_JSON);
  g_assert_nonnull (strstr (json->str, "\"rss_rise_after_bytes\":83886080,\"rss_rise_step\":3,"
                                       "\"rise_of\":\"rss_anon\"}"));

  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

static void
test_job_steps_text (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(GPtrArray) rows = tide_report_job_steps (f->trace, NULL);
  g_autoptr(GHashTable) ids = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(GStrv) lines = NULL;
  TideProcessSpec spec;

  g_assert_true (tide_process_spec_parse ("14", &spec));
  ids = tide_report_process_ids (f->trace, &spec, NULL);
  tide_report_keep_steps (rows, ids);
  tide_format_steps (out, rows, TIDE_FORMAT_TEXT);
  lines = g_strsplit (out->str, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "Steps of DataLoader worker 0 (pid 14)");
  g_assert_cmpstr (lines[2], ==, "    3             DataLoader worker 0 (pid 14)     2.0 ms"
                                 "     1.0 ms    50.00 MiB   +50.00 MiB     1.00 MiB    +1.00 MiB"
                                 "            -            -            -");
  g_assert_cmpuint (g_strv_length (lines), ==, 2 + 4 + 2 + 1);
}

static void
test_process_spec (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) ids = NULL;
  g_autoptr(GPtrArray) groups = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, NULL);
  TideProcessSpec spec;
  gint64 rank1 = RANK1;

  g_assert_false (tide_process_spec_parse ("rank:x", &spec));
  g_assert_false (tide_process_spec_parse ("0", &spec));
  g_assert_false (tide_process_spec_parse ("-3", &spec));
  g_assert_false (tide_process_spec_parse ("rank:", &spec));
  g_assert_false (tide_process_spec_parse ("13x", &spec));

  g_assert_true (tide_process_spec_parse ("rank:1", &spec));
  ids = tide_report_process_ids (f->trace, &spec, &error);
  g_assert_no_error (error);
  /* The rank itself, not its worker. */
  g_assert_cmpuint (g_hash_table_size (ids), ==, 1);
  g_assert_true (g_hash_table_contains (ids, &rank1));
  tide_report_keep_groups (groups, ids);
  g_assert_cmpuint (groups->len, ==, 1);
  g_clear_pointer (&ids, g_hash_table_unref);

  g_assert_true (tide_process_spec_parse ("rank:0", &spec));
  ids = tide_report_process_ids (f->trace, &spec, NULL);
  tide_report_keep_groups (groups, ids);
  g_assert_cmpuint (groups->len, ==, 0);
  g_clear_pointer (&ids, g_hash_table_unref);

  g_assert_true (tide_process_spec_parse ("rank:7", &spec));
  g_assert_null (tide_report_process_ids (f->trace, &spec, &error));
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_FOUND);
  g_assert_true (g_str_has_suffix (error->message, "job.tide has no process with rank 7"));
}

static void
test_processes_report (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) summaries = tide_report_processes (f->trace, &error);
  g_autoptr(GString) csv = g_string_new (NULL);
  g_autoptr(GString) json = g_string_new (NULL);
  g_autoptr(GString) text = g_string_new (NULL);

  g_assert_no_error (error);
  tide_format_processes (csv, summaries, NULL, TIDE_FORMAT_CSV);
  g_assert_cmpstr (csv->str, ==,
    "pid,parent_pid,role,dist_rank,peak_rss_bytes,peak_rss_read_bytes,rss_growth_bytes,steps,suspects,end,exit_code,signal,signal_name,core_dumped,oom_killed,oom_scope,oom_limit_bytes,end_step,device_oom,command\n"
    "10,,launcher,,26214400,26214400,5242880,0,0,exited,0,,,0,0,,,,,python3 /src/train.py --epochs 3\n"
    "11,10,helper,,,,,0,0,exited,0,,,0,0,,,,,python3 -B -c from multiprocessing.resource_tracker import main;main(9)\n"
    "12,10,rank 0,0,37748736,37748736,5242880,6,0,exited,0,,,0,0,,,,,python3 -B -c from multiprocessing.spawn import spawn_main\n"
    "13,10,rank 1,1,54525952,54525952,10485760,6,1,exited,0,,,0,0,,,,,python3 -B -c from multiprocessing.spawn import spawn_main\n"
    "14,13,DataLoader worker 0,1,60817408,55574528,3145728,0,0,exited,0,,,0,0,,,,,python3 /src/train.py --epochs 3\n");
  /* The worker's peak came between two readings of its RSS: the text says so. */
  tide_format_processes (text, summaries, NULL, TIDE_FORMAT_TEXT);
  g_assert_nonnull (strstr (text->str, "\nDataLoader worker 0 (pid 14) held 58.00 MiB resident at"
                                       " its peak, between two readings of its RSS (the highest"
                                       " read 53.00 MiB)\n"));
  tide_format_processes (json, summaries, NULL, TIDE_FORMAT_JSON);
  g_assert_true (g_str_has_prefix (json->str,
    "{\"processes\":[{\"pid\":10,\"parent_pid\":null,\"role\":\"launcher\",\"dist_rank\":null,"
    "\"peak_rss_bytes\":26214400,\"peak_rss_read_bytes\":26214400,\"rss_growth_bytes\":5242880,"
    "\"steps\":0,\"suspects\":0,"
    "\"end\":\"exited\",\"exit_code\":0,\"signal\":null,\"signal_name\":null,\"core_dumped\":false,"
    "\"oom_killed\":false,\"oom_scope\":null,\"oom_limit_bytes\":null,\"end_step\":null,"
    "\"job_bytes_at_end\":null,\"device_ooms\":[],\"command\":\"python3 /src/train.py --epochs 3\"},{\"pid\":11,"));
}

/* The job as schema 2 stored it: no role or worker columns, and a worker
 * that said nothing of a rank. */
static char *
make_schema_2_copy (Fixture *f)
{
  g_autofree char *contents = NULL;
  char *old = g_build_filename (f->dir, "old.tide", NULL);
  gsize len = 0;
  sqlite3 *db = NULL;

  g_assert_true (g_file_get_contents (f->path, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (old, contents, len, NULL));
  g_assert_cmpint (sqlite3_open (old, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "UPDATE processes SET rank = NULL WHERE worker IS NOT NULL;"
                                     "ALTER TABLE processes DROP COLUMN role;"
                                     "ALTER TABLE processes DROP COLUMN worker;"
                                     "PRAGMA user_version = 2;", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  return old;
}

static void
test_schema_2 (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *old = make_schema_2_copy (f);
  g_autoptr(TideTrace) trace = tide_trace_open (old, &error);
  g_autofree char *names = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) rows = NULL;

  g_assert_no_error (error);
  names = labels (trace);
  /* Roles from the ranks and command lines; the worker is its command. */
  g_assert_cmpstr (names, ==, "launcher (pid 10) [-1]; helper (pid 11) [-1]; "
                              "rank 0 (pid 12) [0]; rank 1 (pid 13) [1]; "
                              "python3 train.py --epochs 3 (pid 14) [-1]; ");
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  g_assert_cmpstr (((TideGroup *) g_ptr_array_index (suspects, 0))->process.role, ==, "rank 1");
  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2 * N_STEPS + 2 * N_STEPS + 4);
}

/* Hostile rows: a role that does not exist, a worker role without a
 * worker, parents in a cycle.  Roles fall back to the command and the
 * job's steps still end. */
static void
test_damaged_rows (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *copy = g_build_filename (f->dir, "old.tide", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *names = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  gsize len = 0;
  sqlite3 *db = NULL;

  g_assert_true (g_file_get_contents (f->path, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (copy, contents, len, NULL));
  g_assert_cmpint (sqlite3_open (copy, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "UPDATE processes SET role = 99 WHERE id = 1;"
                                     "UPDATE processes SET role = 2, worker = NULL WHERE id = 2;"
                                     "UPDATE processes SET parent_id = 5 WHERE id = 1;"
                                     "UPDATE processes SET parent_id = 2 WHERE id = 2;",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  trace = tide_trace_open (copy, &error);
  g_assert_no_error (error);
  names = labels (trace);
  g_assert_cmpstr (names, ==, "python3 train.py --epochs 3 (pid 10) [-1]; "
                              "python3 -B -c from multiprocessing.reso… (pid 11) [-1]; "
                              "rank 0 (pid 12) [0]; rank 1 (pid 13) [1]; "
                              "DataLoader worker 0 (pid 14) [1]; ");
  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2 * N_STEPS + 2 * N_STEPS + 4);
}

/* The app's picker names a merged trace's process with its host, whatever
 * its role: a plain command too. */
static void
test_picker_name_host (void)
{
  TideProcess merged = { .role = TIDE_ROLE_COMMAND, .dist_rank = -1, .worker = -1,
                         .command = "/usr/bin/train --ddp", .label = "train --ddp on node-a",
                         .host = "node-a" };
  TideProcess alone = { .role = TIDE_ROLE_COMMAND, .dist_rank = -1, .worker = -1,
                        .command = "/usr/bin/train --ddp", .label = "train --ddp" };
  g_autofree char *merged_name = tide_process_picker_name (&merged, 2);
  g_autofree char *alone_name = tide_process_picker_name (&alone, 0);

  g_assert_cmpstr (merged_name, ==, "train --ddp on node-a · 2 suspects");
  g_assert_cmpstr (alone_name, ==, "train --ddp");
}

/* In the text of `report --processes`, a process named by its command has
 * a role still: the job's first one is its main one (and so is the image
 * it exec'd into), a process that it forked (neither rank nor worker) a
 * child.  Each row says how the
 * process ended, and a line after the table says more of each death. */
static void
test_processes_text_roles (void)
{
  TideProcess main_process = { .id = 1, .pid = 20, .role = TIDE_ROLE_COMMAND, .dist_rank = -1,
                               .worker = -1, .command = "python3 train.py",
                               .label = "python3 train.py",
                               .end = { .kind = TIDE_END_EXEC } };
  TideProcess execed = { .id = 4, .pid = 20, .parent_id = 1, .role = TIDE_ROLE_COMMAND,
                         .dist_rank = -1, .worker = -1, .command = "python3 train.py",
                         .label = "python3 train.py", .end = { .kind = TIDE_END_EXITED } };
  TideProcess child = { .id = 2, .pid = 21, .role = TIDE_ROLE_COMMAND, .dist_rank = -1, .worker = -1,
                        .command = "python3 train.py", .label = "python3 train.py",
                        .end = { .kind = TIDE_END_SIGNALED, .signal = 11, .core_dumped = TRUE } };
  TideProcess failed = { .id = 5, .pid = 23, .role = TIDE_ROLE_COMMAND, .dist_rank = -1,
                         .worker = -1, .command = "python3 eval.py", .label = "python3 eval.py",
                         .end = { .kind = TIDE_END_EXITED, .exit_code = 3 } };
  TideProcess worker = { .id = 3, .pid = 22, .role = TIDE_ROLE_LOADER_WORKER, .dist_rank = -1,
                         .worker = 0, .command = "python3 train.py",
                         .label = "DataLoader worker 0",
                         .end = { .kind = TIDE_END_SIGNALED, .signal = 9, .oom = TIDE_OOM_CGROUP_V2,
                                  .limit_bytes = 600 * MIB } };
  TideProcessSummary rows[] = {
    { .process = &main_process, .n_steps = 3, .job_bytes_at_end = -1 },
    { .process = &child, .parent_pid = 20, .end_step = 2, .job_bytes_at_end = -1 },
    { .process = &worker, .parent_pid = 20, .end_step = 3, .job_bytes_at_end = 598 * MIB,
      .job_bytes_by_pss = TRUE },
    { .process = &execed, .parent_pid = 20, .n_steps = 3, .job_bytes_at_end = -1 },
    { .process = &failed, .parent_pid = 20, .end_step = 4, .job_bytes_at_end = 12 * MIB },
  };
  g_autoptr(GPtrArray) summaries = g_ptr_array_new ();
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_ptr_array_add (summaries, &rows[i]);
  tide_format_processes (text, summaries, NULL, TIDE_FORMAT_TEXT);
  g_assert_cmpstr (text->str, ==,
    "Processes of the job: 5\n"
    "     PID   PARENT  ROLE                    RANK     PEAK RSS   RSS GROWTH  STEPS SUSPECTS  END                    COMMAND\n"
    "      20        -  main                       -            -            -      3        0  exec                   python3 train.py\n"
    "      21       20  child                      -            -            -      0        0  SIGSEGV core step 2    python3 train.py\n"
    "      22       20  DataLoader worker 0        -            -            -      0        0  SIGKILL (OOM) step 3   python3 train.py\n"
    "      20       20  main                       -            -            -      3        0  exit 0                 python3 train.py\n"
    "      23       20  child                      -            -            -      0        0  exit 3 step 4          python3 eval.py\n"
    "python3 train.py (pid 21) was killed by SIGSEGV (core dumped) in step 2\n"
    "DataLoader worker 0 (pid 22) was killed by SIGKILL in step 3: the kernel's OOM killer, at the "
    "cgroup's limit of 600.00 MiB; the job held 598.00 MiB (PSS)\n"
    "python3 eval.py (pid 23) exited with status 3 in step 4; the job held 12.00 MiB (RSS summed "
    "over processes)\n");

  /* CSV and JSON give each the role that the text does. */
  {
    static const char *const roles[] = { "main", "child", "DataLoader worker 0", "main", "child" };
    g_autoptr(GString) csv = g_string_new (NULL);
    g_autoptr(GString) json = g_string_new (NULL);
    g_autoptr(GRegex) role = g_regex_new ("\"role\":\"([^\"]*)\"", 0, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    g_auto(GStrv) lines = NULL;
    guint n = 0;

    tide_format_processes (csv, summaries, NULL, TIDE_FORMAT_CSV);
    tide_format_processes (json, summaries, NULL, TIDE_FORMAT_JSON);
    lines = g_strsplit (csv->str, "\n", -1);
    for (guint i = 0; i < G_N_ELEMENTS (roles); i++)
      {
        g_auto(GStrv) cells = g_strsplit (lines[1 + i], ",", -1);

        g_assert_cmpstr (cells[2], ==, roles[i]);
      }
    for (g_regex_match (role, json->str, 0, &match); g_match_info_matches (match);
         g_match_info_next (match, NULL))
      {
        g_autofree char *value = g_match_info_fetch (match, 1);

        g_assert_cmpuint (n, <, G_N_ELEMENTS (roles));
        g_assert_cmpstr (value, ==, roles[n++]);
      }
    g_assert_cmpuint (n, ==, G_N_ELEMENTS (roles));
  }
}

/* An unlabelled step is "step 3", not "step 3 " before a comma. */
static void
test_step_row_describe (void)
{
  TideStepRow unlabelled = { .number = 3, .label = (char *) "" };
  TideStepRow no_label = { .number = 4 };
  TideStepRow labelled = { .number = 5, .label = (char *) "heap" };
  g_autofree char *a = tide_step_row_describe (&unlabelled);
  g_autofree char *b = tide_step_row_describe (&no_label);
  g_autofree char *c = tide_step_row_describe (&labelled);

  g_assert_cmpstr (a, ==, "step 3");
  g_assert_cmpstr (b, ==, "step 4");
  g_assert_cmpstr (c, ==, "step 5 heap");
}

/* A process's peak above every reading of its RSS gets a line, by more
 * than a sixteenth and a MiB; none where a reading met it, nor where no
 * reading was taken at all. */
static void
test_unread_peak (void)
{
  TideProcess p = { .pid = 11899, .label = (char *) "rss-spike" };
  TideProcessSummary missed = { .process = &p, .has_rss = TRUE, .peak_rss = 50 * MIB,
                                .peak_rss_read = 28 * MIB };
  TideProcessSummary met = { .process = &p, .has_rss = TRUE, .peak_rss = 50 * MIB,
                             .peak_rss_read = 48 * MIB };
  TideProcessSummary unread = { .process = &p, .has_rss = TRUE, .peak_rss = 50 * MIB };
  g_autofree char *line = tide_process_summary_describe_unread_peak (&missed);
  g_autofree char *none = tide_process_summary_describe_unread_peak (&met);
  g_autofree char *never = tide_process_summary_describe_unread_peak (&unread);

  g_assert_cmpstr (line, ==, "rss-spike (pid 11899) held 50.00 MiB resident at its peak, between"
                             " two readings of its RSS (the highest read 28.00 MiB)");
  g_assert_null (none);
  g_assert_null (never);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/storage/processes/roles", test_roles);
  ADD ("/storage/processes/suspects-name-rank", test_suspects_name_rank);
  ADD ("/storage/processes/job-steps", test_job_steps);
  ADD ("/storage/processes/job-steps-text", test_job_steps_text);
  ADD ("/storage/processes/process-spec", test_process_spec);
  ADD ("/storage/processes/report", test_processes_report);
  ADD ("/storage/processes/schema-2", test_schema_2);
  ADD ("/storage/processes/damaged-rows", test_damaged_rows);
#undef ADD
  g_test_add_func ("/storage/processes/picker-name-host", test_picker_name_host);
  g_test_add_func ("/storage/processes/text-roles", test_processes_text_roles);
  g_test_add_func ("/storage/processes/step-row-describe", test_step_row_describe);
  g_test_add_func ("/storage/processes/unread-peak", test_unread_peak);
  g_test_add_func ("/storage/processes/job-steps-from-start", test_job_steps_from_start);
  g_test_add_func ("/storage/processes/job-peak-exec-wrapper", test_job_peak_exec_wrapper);
  g_test_add_func ("/storage/processes/job-peak-rise", test_job_peak_rise);
  return g_test_run ();
}
