/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The pieces every storage file shares: the statement helper's mapping of
 * SQLite's errors to TideStorageError (on real failures of a real
 * SQLite), the schema's list of every table and index a trace may hold,
 * and the one byte formatter.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "tide-analysis.h"
#include "tide-format-bytes.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace-merge.h"

static void
test_error_kind (void)
{
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_NOTADB), ==, TIDE_STORAGE_ERROR_NOT_SQLITE);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_CORRUPT), ==, TIDE_STORAGE_ERROR_CORRUPT);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_CANTOPEN), ==, TIDE_STORAGE_ERROR_IO);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_IOERR), ==, TIDE_STORAGE_ERROR_IO);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_FULL), ==, TIDE_STORAGE_ERROR_IO);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_PERM), ==, TIDE_STORAGE_ERROR_IO);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_READONLY), ==, TIDE_STORAGE_ERROR_IO);
  /* An extended code maps as its primary code. */
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_IOERR_SHORT_READ), ==, TIDE_STORAGE_ERROR_IO);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_CORRUPT_VTAB), ==, TIDE_STORAGE_ERROR_CORRUPT);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_CONSTRAINT), ==, TIDE_STORAGE_ERROR_SQL);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_ERROR), ==, TIDE_STORAGE_ERROR_SQL);
  g_assert_cmpint (tide_sqlite_error_kind (SQLITE_BUSY), ==, TIDE_STORAGE_ERROR_SQL);
}

static sqlite3 *
open_memory (void)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  return db;
}

static void
test_prepare_error (void)
{
  sqlite3 *db = open_memory ();
  g_autoptr(GError) error = NULL;

  g_assert_null (tide_sqlite_prepare (db, "SELECT nope FROM meta", "cannot query the trace",
                                      &error));
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_SQL);
  g_assert_cmpstr (error->message, ==, "cannot query the trace: no such table: meta");
  sqlite3_close (db);
}

/* A loop's last step decides: DONE and ROW are success, a constraint
 * failure is TIDE_STORAGE_ERROR_SQL with SQLite's words. */
static void
test_finish (void)
{
  sqlite3 *db = open_memory ();
  g_autoptr(GError) error = NULL;
  sqlite3_stmt *stmt;

  g_assert_true (tide_sqlite_exec (db, "CREATE TABLE t (a INTEGER NOT NULL) STRICT;"
                                       "INSERT INTO t VALUES (1), (2);", &error));
  g_assert_no_error (error);

  stmt = tide_sqlite_prepare (db, "SELECT a FROM t ORDER BY a", "cannot read", &error);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_true (tide_sqlite_finish (db, stmt, SQLITE_ROW, "cannot read", &error));
  g_assert_no_error (error);

  stmt = tide_sqlite_prepare (db, "INSERT INTO t VALUES (NULL)", "cannot insert", &error);
  g_assert_true (tide_sqlite_finish (db, stmt, sqlite3_step (stmt), "cannot insert", &error) ==
                 FALSE);
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_SQL);
  g_assert_cmpstr (error->message, ==, "cannot insert: NOT NULL constraint failed: t.a");
  sqlite3_close (db);
}

/* A failed run leaves the statement reset, ready for the next. */
static void
test_step_done (void)
{
  sqlite3 *db = open_memory ();
  g_autoptr(GError) error = NULL;
  sqlite3_stmt *stmt;

  g_assert_true (tide_sqlite_exec (db, "CREATE TABLE t (a INTEGER PRIMARY KEY) STRICT;"
                                       "INSERT INTO t VALUES (1);", NULL));
  stmt = tide_sqlite_prepare (db, "INSERT INTO t VALUES (?1)", "cannot insert", &error);
  sqlite3_bind_int (stmt, 1, 1);
  g_assert_false (tide_sqlite_step_done (db, stmt, "cannot insert", &error));
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_SQL);
  g_assert_cmpstr (error->message, ==, "cannot insert: UNIQUE constraint failed: t.a");
  g_clear_error (&error);
  sqlite3_bind_int (stmt, 1, 2);
  g_assert_true (tide_sqlite_step_done (db, stmt, "cannot insert", &error));
  g_assert_no_error (error);
  sqlite3_finalize (stmt);
  g_assert_cmpint (tide_sqlite_meta_int (db, "absent"), ==, 0);
  sqlite3_close (db);
}

static sqlite3 *
open_file (const char *path,
           int         flags)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, flags, NULL), ==, SQLITE_OK);
  return db;
}

/* Damage, a file that is no database, and a write refused by the file
 * system each have their own kind. */
static void
test_file_errors (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-sqlite");
  g_autofree char *path = g_build_filename (dir, "t.db", NULL);
  g_autofree char *text = g_build_filename (dir, "text.db", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *bytes = NULL;
  gsize len = 0;
  sqlite3 *db;
  sqlite3_stmt *stmt;
  int rc;

  db = open_file (path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  g_assert_true (tide_sqlite_exec (db, "PRAGMA page_size = 4096;"
                                       "CREATE TABLE t (a INTEGER, b TEXT) STRICT;"
                                       "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL"
                                       "  SELECT i + 1 FROM n WHERE i < 2000)"
                                       " INSERT INTO t SELECT i, printf ('%0100d', i) FROM n;",
                                   &error));
  g_assert_no_error (error);
  sqlite3_close (db);

  db = open_file (path, SQLITE_OPEN_READONLY);
  stmt = tide_sqlite_prepare (db, "INSERT INTO t VALUES (0, '')", "cannot write", &error);
  g_assert_false (tide_sqlite_finish (db, stmt, sqlite3_step (stmt), "cannot write", &error));
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO);
  g_assert_cmpstr (error->message, ==, "cannot write: attempt to write a readonly database");
  g_clear_error (&error);
  sqlite3_close (db);

  /* Page 2, the table's root, gets a b-tree page type that does not exist. */
  g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
  g_assert_cmpuint (len, >, 3 * 4096);
  memset (bytes + 4096, 0x55, 4096);
  g_assert_true (g_file_set_contents (path, bytes, (gssize) len, NULL));
  db = open_file (path, SQLITE_OPEN_READONLY);
  stmt = tide_sqlite_prepare (db, "SELECT sum (a) FROM t", "cannot query the trace", &error);
  g_assert_no_error (error);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    ;
  g_assert_false (tide_sqlite_finish (db, stmt, rc, "cannot query the trace", &error));
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_CORRUPT);
  g_assert_cmpstr (error->message, ==, "cannot query the trace: database disk image is malformed");
  g_clear_error (&error);
  sqlite3_close (db);

  g_assert_true (g_file_set_contents (text, "a text file, not a database, long enough to have"
                                            " what would be an SQLite header\n", -1, NULL));
  db = open_file (text, SQLITE_OPEN_READONLY);
  g_assert_null (tide_sqlite_prepare (db, "SELECT 1 FROM t", "cannot read the trace", &error));
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_SQLITE);
  g_assert_cmpstr (error->message, ==, "cannot read the trace: file is not a database");
  sqlite3_close (db);
  tide_test_remove_dir (dir);
}

/* The tables and indexes of @db, in the order they were made. */
static char *
schema_names (sqlite3 *db)
{
  GString *names = g_string_new (NULL);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT name FROM sqlite_schema"
                                                " WHERE name NOT LIKE 'sqlite_%' ORDER BY rowid",
                                            "", NULL);

  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (stmt, 0);

      g_assert_true (tide_schema_declares (name));
      g_string_append_printf (names, "%s%s", names->len > 0 ? " " : "", name);
    }
  sqlite3_finalize (stmt);
  return g_string_free (names, FALSE);
}

#define CORE_NAMES "meta processes threads mappings frames frames_inline modules stacks stack_nodes scopes steps " \
                   "allocations allocation_ranges counter_kinds counters transfers step_residency step_residency_totals cow_sources " \
                   "step_stats step_series counter_lod"

/* Every table and index of a finished recording is declared in
 * tide-schema.c, in the order the writer and the summaries made them. */
static void
test_schema_recording (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-schema");
  g_autofree char *path = g_build_filename (dir, "two-ranks.tide", NULL);
  g_autofree char *names = NULL;
  sqlite3 *db;

  tide_test_write_two_ranks (path);
  db = open_file (path, SQLITE_OPEN_READONLY);
  names = schema_names (db);
  /* The writer keeps counters_by_time and residency_by_step up as rows
   * arrive: made before the rows, not sorted at the end. */
  g_assert_cmpstr (names, ==, CORE_NAMES " counters_by_time residency_by_step"
                              " long_lived_allocations process_ends alloc_failures series_by_step transfers_by_time"
                              " allocation_ranges_by_max live_at_end live_at_end_by_process");
  sqlite3_close (db);
  tide_test_remove_dir (dir);
  g_assert_false (tide_schema_declares ("sqlite_sequence"));
  g_assert_false (tide_schema_declares ("counters_by"));
}

/* A merged trace's tables are declared too: the merge makes its own
 * (merge_sources, merge_processes) through tide_schema_ensure(). */
static void
test_schema_merged (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-schema-merged");
  g_autofree char *a = g_build_filename (dir, "a.tide", NULL);
  g_autofree char *b = g_build_filename (dir, "b.tide", NULL);
  g_autofree char *job = g_build_filename (dir, "job.tide", NULL);
  const char *inputs[] = { a, b, NULL };
  TideMergeOptions options = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *names = NULL;
  sqlite3 *db;

  tide_test_write_two_ranks (a);
  tide_test_write_two_ranks (b);
  g_assert_true (tide_trace_merge (inputs, job, &options, &error));
  g_assert_no_error (error);
  db = open_file (job, SQLITE_OPEN_READONLY);
  names = schema_names (db);
  g_assert_nonnull (strstr (names, " long_lived_allocations merge_sources merge_processes "));
  sqlite3_close (db);
  tide_test_remove_dir (dir);
}

/* A trace written by other means (no writer indexes) gets the indexes its
 * queries need when it is summarized: declared as well. */
static void
test_schema_other_writer (void)
{
  sqlite3 *db = open_memory ();
  g_autoptr(GError) error = NULL;
  g_autofree char *names = NULL;

  g_assert_true (tide_schema_create (db, &error));
  g_assert_true (tide_analysis_build (db, &error));
  g_assert_no_error (error);
  names = schema_names (db);
  g_assert_cmpstr (names, ==, CORE_NAMES " series_by_step residency_by_step counters_by_time"
                              " transfers_by_time allocations_by_alloc allocation_ranges_by_max"
                              " live_at_end live_at_end_by_process");
  sqlite3_close (db);
}

static void
assert_bytes (gint64      bytes,
              const char *expected)
{
  g_autofree char *text = tide_format_bytes (bytes);

  g_assert_cmpstr (text, ==, expected);
}

static void
assert_delta (gint64      bytes,
              const char *expected)
{
  g_autofree char *text = tide_format_delta (bytes);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_format_bytes (void)
{
  assert_bytes (0, "0 B");
  assert_bytes (1, "1 B");
  assert_bytes (1023, "1023 B");
  assert_bytes (1024, "1.00 KiB");
  assert_bytes (1536, "1.50 KiB");
  assert_bytes (6000, "5.86 KiB");
  assert_bytes (1048576, "1.00 MiB");
  assert_bytes (18 * G_GINT64_CONSTANT (1048576), "18.00 MiB");
  assert_bytes (3 * G_GINT64_CONSTANT (1073741824) / 2, "1.50 GiB");
  assert_bytes (G_GINT64_CONSTANT (1) << 40, "1.00 TiB");
  assert_bytes (-1536, "-1.50 KiB");
  assert_bytes (-512, "-512 B");
  /* A damaged trace may hold any value. */
  assert_bytes (G_MININT64, "-8388608.00 TiB");
  assert_bytes (G_MAXINT64, "8388608.00 TiB");
  /* Just under a unit: the next unit, not "1024.00 KiB". */
  assert_bytes (1048575, "1.00 MiB");
  assert_bytes (1048576 - 5 * 1024, "1019.00 KiB");
  assert_bytes (1073741823, "1.00 GiB");
}

static void
test_format_delta (void)
{
  assert_delta (0, "0 B");
  assert_delta (5, "+5 B");
  assert_delta (-5, "-5 B");
  assert_delta (65536, "+64.00 KiB");
  assert_delta (-2621440, "-2.50 MiB");
  assert_delta (G_MININT64, "-8388608.00 TiB");
}

/* A stack's frames as the stacks table keeps them: a JSON array, every
 * id exact, the ends of gint64 included. */
static void
test_schema_stack_frames (void)
{
  static const gint64 ids[] = { 0, 7, -5, 1234567890123, G_MAXINT64, G_MININT64 };
  g_autofree char *none = tide_schema_stack_frames (NULL, 0);
  g_autofree char *one = tide_schema_stack_frames (ids + 1, 1);
  g_autofree char *all = tide_schema_stack_frames (ids, G_N_ELEMENTS (ids));

  g_assert_cmpstr (none, ==, "[]");
  g_assert_cmpstr (one, ==, "[7]");
  g_assert_cmpstr (all, ==, "[0,7,-5,1234567890123,9223372036854775807,-9223372036854775808]");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/storage/sqlite/error-kind", test_error_kind);
  g_test_add_func ("/storage/sqlite/prepare-error", test_prepare_error);
  g_test_add_func ("/storage/sqlite/finish", test_finish);
  g_test_add_func ("/storage/sqlite/step-done", test_step_done);
  g_test_add_func ("/storage/sqlite/file-errors", test_file_errors);
  g_test_add_func ("/storage/schema/recording", test_schema_recording);
  g_test_add_func ("/storage/schema/other-writer", test_schema_other_writer);
  g_test_add_func ("/storage/schema/merged", test_schema_merged);
  g_test_add_func ("/storage/schema/stack-frames", test_schema_stack_frames);
  g_test_add_func ("/storage/format/bytes", test_format_bytes);
  g_test_add_func ("/storage/format/delta", test_format_delta);
  return g_test_run ();
}
