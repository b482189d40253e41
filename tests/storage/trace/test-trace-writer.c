/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTraceWriter's allocation rows: every column comes back as written,
 * in runs of every length between other rows (the writer hands each run
 * to SQLite through a row feed, tide-row-feed.h), and across changes of
 * the columns that a run's rows share (process, kind, device, scope).
 * And a trace that reaches its file size limit still says why it ends.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tide-test-util.h"
#include "tide-trace-private.h"
#include "tide-trace-writer.h"

#define GROUP 256

/* A counter row goes before allocation row i where this holds: runs of 1,
 * 2 and 63 rows, and a long one. */
#define COUNTER_BEFORE(i) ((i) < GROUP && ((i) % 67 == 0 || (i) % 67 == 1 || (i) % 67 == 3))

/* Four groups of GROUP rows, all plain (host, no scope, weight 1) but for
 * one row in each group after the first (weight, device, scope), then 5
 * plain rows. */
static GArray *
make_rows (void)
{
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (TideAllocRow));

  for (guint i = 0; i < 4 * GROUP + 5; i++)
    {
      TideAllocRow row = {
        .process_id = 1 + (i / 50) % 2,
        .thread_id = i % 5 == 0 ? 0 : 10 + i % 3,
        .alloc_ns = 1000 + 10 * (gint64) i,
        .free_ns = i % 4 == 0 ? 0 : 2000 + 10 * (gint64) i + (i % 7 == 0 ? 20000000 : 0),
        .address = 0x7f0000000000ull + 0x40ull * i,
        .size = 16 + i * 3,
        .weight = 1.0,
        .stack_id = i % 6 == 0 ? 0 : 100 + i % 4,
        .scope_id = 0,
        .device = -1,
        .kind = 1 + (i / 30) % 2,
      };

      if (i == GROUP + 5)
        row.weight = 2.5;
      else if (i == 2 * GROUP + 7)
        row.device = 0;
      else if (i == 3 * GROUP + 9)
        row.scope_id = 3;
      g_array_append_val (rows, row);
    }
  return rows;
}

/* The allocations table is not STRICT (tide-schema.c): the types are the
 * writer's to get right. */
static void
assert_int (sqlite3_stmt *stmt,
            int           column,
            gint64        expected)
{
  g_assert_cmpint (sqlite3_column_type (stmt, column), ==, SQLITE_INTEGER);
  g_assert_cmpint (sqlite3_column_int64 (stmt, column), ==, expected);
}

static void
assert_int_or_null (sqlite3_stmt *stmt,
                    int           column,
                    gint64        expected)
{
  if (expected == 0)
    g_assert_cmpint (sqlite3_column_type (stmt, column), ==, SQLITE_NULL);
  else
    assert_int (stmt, column, expected);
}

/* Every counter row comes back as written, between the runs of allocation
 * rows that it interrupted: the k-th one went before allocation row i and
 * holds (ts 500 + i, value k). */
static void
assert_counters (TideTrace *trace,
                 guint      n_written)
{
  sqlite3_stmt *stmt = NULL;
  guint i = 0, k = 0;

  g_assert_cmpint (sqlite3_prepare_v2 (_tide_trace_get_db (trace),
                                       "SELECT process_id, counter, device, ts_ns, value"
                                       " FROM counters ORDER BY rowid", -1, &stmt, NULL),
                   ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      while (i < GROUP && !COUNTER_BEFORE (i))
        i++;
      g_assert_cmpuint (i, <, GROUP);
      assert_int (stmt, 0, 1);
      assert_int (stmt, 1, 1);
      assert_int (stmt, 2, -1);
      assert_int (stmt, 3, 500 + i);
      assert_int (stmt, 4, k);
      i++;
      k++;
    }
  sqlite3_finalize (stmt);
  g_assert_cmpuint (k, ==, n_written);
}

static void
test_allocation_columns (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-writer");
  g_autofree char *path = g_build_filename (dir, "rows.tide", NULL);
  g_autoptr(GArray) rows = make_rows ();
  g_autoptr(GError) error = NULL;
  TideTraceWriter *w = tide_trace_writer_new (path, &error);
  g_autoptr(TideTrace) trace = NULL;
  sqlite3_stmt *stmt = NULL;
  guint n = 0, n_counters = 0;

  g_assert_no_error (error);
  for (guint i = 0; i < rows->len; i++)
    {
      if (COUNTER_BEFORE (i))
        tide_trace_writer_add_counter (w, 1, 1, -1, 500 + i, n_counters++);
      tide_trace_writer_add_allocation (w, &g_array_index (rows, TideAllocRow, i));
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  tide_trace_writer_free (w);

  trace = tide_test_open_trace (path);
  g_assert_cmpint (sqlite3_prepare_v2 (_tide_trace_get_db (trace), "SELECT process_id, thread_id, kind, device, address,"
                                       " size, alloc_ns, free_ns, stack_id, scope_id, weight"
                                       " FROM allocations ORDER BY id", -1, &stmt, NULL),
                   ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const TideAllocRow *row = &g_array_index (rows, TideAllocRow, n);

      g_assert_cmpuint (n, <, rows->len);
      assert_int (stmt, 0, row->process_id);
      assert_int_or_null (stmt, 1, row->thread_id);
      assert_int (stmt, 2, row->kind);
      assert_int (stmt, 3, row->device);
      assert_int (stmt, 4, (gint64) row->address);
      assert_int (stmt, 5, (gint64) row->size);
      assert_int (stmt, 6, row->alloc_ns);
      assert_int_or_null (stmt, 7, row->free_ns);
      assert_int_or_null (stmt, 8, row->stack_id);
      assert_int_or_null (stmt, 9, row->scope_id);
      g_assert_cmpint (sqlite3_column_type (stmt, 10), ==, SQLITE_FLOAT);
      g_assert_cmpfloat (sqlite3_column_double (stmt, 10), ==, row->weight);
      n++;
    }
  g_assert_cmpuint (n, ==, rows->len);
  sqlite3_finalize (stmt);
  /* SQLite ignores page_size once the file is in WAL mode, silently. */
  g_assert_cmpint (tide_test_query_int (trace, "PRAGMA page_size"), ==, 16384);
  assert_counters (trace, n_counters);
  g_clear_object (&trace);
  g_unlink (path);
  g_rmdir (dir);
}

/* A reader of the growing file (the app's live view) that stays open for
 * a while, then closes: as the app's view does between two refreshes. */
static gpointer
close_later (gpointer db)
{
  g_usleep (300 * G_TIME_SPAN_MILLISECOND);
  sqlite3_close (db);
  return NULL;
}

/* The writer's finish leaves WAL mode, which needs the file to itself: a
 * reader that has it open then makes it wait, never fail ("database is
 * locked" failed a live capture in the app). */
static void
test_finish_waits_for_reader (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-writer");
  g_autofree char *path = g_build_filename (dir, "live.tide", NULL);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autoptr(GError) error = NULL;
  TideTraceWriter *w = tide_trace_writer_new (path, &error);
  g_autoptr(TideTrace) trace = NULL;
  sqlite3 *reader = NULL;
  sqlite3_stmt *stmt = NULL;
  GThread *closer;

  g_assert_no_error (error);
  tide_trace_writer_add_counter (w, 1, 1, -1, 500, 7);
  tide_trace_writer_flush (w);
  g_assert_cmpint (sqlite3_open_v2 (path, &reader, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (reader, "SELECT count (*) FROM meta", -1, &stmt, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  sqlite3_finalize (stmt);
  closer = g_thread_new ("close-later", close_later, reader);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  g_thread_join (closer);
  tide_trace_writer_free (w);

  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  trace = tide_test_open_trace (path);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta WHERE key = 'complete'"),
                   ==, 1);
  g_clear_object (&trace);
  g_unlink (path);
  g_rmdir (dir);
}

/* Writes rows until the file system refuses them, under a 2 MiB
 * RLIMIT_FSIZE and SIGXFSZ ignored, as the recorder runs, in small
 * commits, as a recording of a slow program makes them: the checkpoints
 * grow the database to the limit, then the WAL grows to it too. */
static void
write_past_file_size_limit (const char *path)
{
  struct rlimit limit = { 2 * 1024 * 1024, 2 * 1024 * 1024 };
  g_autoptr(GError) error = NULL;
  TideTraceWriter *w;

  signal (SIGXFSZ, SIG_IGN);
  if (setrlimit (RLIMIT_FSIZE, &limit) != 0 || (w = tide_trace_writer_new (path, &error)) == NULL)
    _exit (2);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  for (guint i = 0; i < 200000; i++)
    {
      TideAllocRow row = { .process_id = 1, .alloc_ns = i, .address = 0x10000 + 16 * (guint64) i,
                           .size = 16 + i % 4096, .weight = 1, .stack_id = 1 + i % 97,
                           .device = -1, .kind = 1 };

      tide_trace_writer_add_allocation (w, &row);
      if (i % 200 == 199)
        tide_trace_writer_flush (w);
    }
  _exit (tide_trace_writer_finish (w, NULL) && tide_trace_writer_describe_early_end (w) != NULL
         ? 0 : 3);
}

/* Wherever the limit struck, the database or its WAL, the trace says why
 * it ended: the writer keeps room below the limit for the rows that
 * describe the end, as it keeps a reserve of disk space. */
static void
test_file_size_limit (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-writer");
  g_autofree char *path = g_build_filename (dir, "limited.tide", NULL);
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *reason = NULL;
  int status = 0;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    write_past_file_size_limit (path);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);

  trace = tide_test_open_trace (path);
  reason = tide_test_query_text (trace, "SELECT value FROM meta WHERE key = 'stopped_reason'");
  g_assert_cmpstr (reason, ==, "file size limit reached");
  g_assert_false (tide_trace_is_complete (trace));
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/storage/writer/allocation-columns", test_allocation_columns);
  g_test_add_func ("/storage/writer/finish-waits-for-reader", test_finish_waits_for_reader);
  g_test_add_func ("/storage/writer/file-size-limit", test_file_size_limit);
  return g_test_run ();
}
