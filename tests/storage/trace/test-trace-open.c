/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Opening traces that are not what they claim: every case gives its own
 * error code and one sentence, never a crash.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <unistd.h>

#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-test-util.h"
#include "tide-trace-writer.h"
#include "tide-trace.h"

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = tide_test_make_dir ("tide-open");
  g_assert_nonnull (f->dir);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
}

static char *
write_small_trace (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (f->dir, "small.tide", NULL);
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideProcessRow proc = { .id = 1, .pid = 42, .start_ns = 1000, .sample_bytes = 0,
                          .all_mode = TRUE, .exe = "/bin/true" };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 1000);
  tide_trace_writer_add_process (w, &proc);
  /* Enough rows that the file spans many pages, so truncation is visible. */
  for (int i = 0; i < 5000; i++)
    tide_trace_writer_add_counter (w, 1, 1, -1, 1000 + i * 20000000LL, 4096 * (i + 1));
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return path;
}

static void
assert_open_fails (const char       *path,
                   TideStorageError  code,
                   const char       *message_part)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);

  g_assert_null (trace);
  g_assert_error (error, TIDE_STORAGE_ERROR, code);
  g_assert_nonnull (strstr (error->message, message_part));
  g_assert_null (strchr (error->message, '\n'));
}

static void
test_open_good (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *path = write_small_trace (f);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);

  g_assert_no_error (error);
  g_assert_true (tide_trace_is_complete (trace));
  g_assert_cmpint (tide_trace_get_start_ns (trace), ==, 1000);
  g_assert_cmpint (tide_trace_get_end_ns (trace), ==, 1000 + 4999 * 20000000LL);
  /* A finished trace is one file. */
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
}

static void
test_open_missing (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, "nothing.tide", NULL);

  assert_open_fails (path, TIDE_STORAGE_ERROR_IO, "No such file");
}

static void
test_open_not_sqlite (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, "text.tide", NULL);
  g_autofree char *empty = g_build_filename (f->dir, "empty.tide", NULL);

  g_assert_true (g_file_set_contents (path, "step,rss\n1,100\n2,200\n", -1, NULL));
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  assert_open_fails (path, TIDE_STORAGE_ERROR_NOT_SQLITE, "not an SQLite database");
  assert_open_fails (empty, TIDE_STORAGE_ERROR_NOT_SQLITE, "not an SQLite database");
}

static void
test_open_foreign (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, "foreign.db", NULL);
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE songs (title TEXT);"
                                     "INSERT INTO songs VALUES ('tide');", NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (db);
  assert_open_fails (path, TIDE_STORAGE_ERROR_FOREIGN, "not a Tidemark trace");
}

static void
test_open_truncated (Fixture       *f,
                     gconstpointer  data)
{
  g_autofree char *path = write_small_trace (f);
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_size, >, 8192);
  g_assert_cmpint (truncate (path, st.st_size / 2), ==, 0);
  assert_open_fails (path, TIDE_STORAGE_ERROR_TRUNCATED, "is truncated");
}

static void
test_open_newer_schema (Fixture       *f,
                        gconstpointer  data)
{
  g_autofree char *path = write_small_trace (f);
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA user_version = 7", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  assert_open_fails (path, TIDE_STORAGE_ERROR_NEWER_SCHEMA, "newer Tidemark (trace schema 7");
}

static void
test_open_garbage_pages (Fixture       *f,
                         gconstpointer  data)
{
  g_autofree char *path = write_small_trace (f);
  g_autofree char *contents = NULL;
  gsize len;

  /* Keep the header, scribble over every page after the first. */
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  for (gsize i = 4096; i < len; i++)
    contents[i] = (char) (i * 31);
  g_assert_true (g_file_set_contents (path, contents, len, NULL));
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TideTrace) trace = tide_trace_open (path, &error);

    g_assert_null (trace);
    g_assert_true (g_error_matches (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_CORRUPT) ||
                   g_error_matches (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_SQLITE));
    g_assert_null (strchr (error->message, '\n'));
  }
}

/* A recorder that died leaves WAL-mode pages and no summaries: the trace
 * still opens, marked incomplete, summarized in memory. */
static void
test_open_unfinished (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (f->dir, "unfinished.tide", NULL);
  TideTraceWriter *w = tide_trace_writer_new (path, &error);
  TideProcessRow proc = { .id = 1, .pid = 42, .start_ns = 0, .all_mode = TRUE, .exe = "x" };
  g_autoptr(TideTrace) trace = NULL;

  g_assert_no_error (error);
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_add_step (w, 1, 1, 1, "", 0, 100);
  tide_trace_writer_flush (w);

  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  g_assert_false (tide_trace_is_complete (trace));
  tide_trace_writer_free (w);
}

typedef struct
{
  TideTraceWriter *writer;
  GError          *error;
  gboolean         ok;
  gint             tid;     /* of the finishing thread, once known */
  gint             done;
} Finishing;

static gpointer
finish_in_thread (gpointer data)
{
  Finishing *f = data;

  g_atomic_int_set (&f->tid, (gint) gettid ());
  f->ok = tide_trace_writer_finish (f->writer, &f->error);
  g_atomic_int_set (&f->done, 1);
  return NULL;
}

/* Whether the trace at @path has its finish-time summaries, read afresh:
 * what the finish writes last before it leaves WAL mode. */
static gboolean
has_summaries (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gboolean complete = FALSE;

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2 (db, "SELECT count (*) FROM sqlite_schema WHERE name = 'live_at_end'",
                          -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    complete = sqlite3_column_int (stmt, 0) == 1;
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return complete;
}

/* Whether thread @tid of this process is asleep (state S). */
static gboolean
thread_sleeps (gint tid)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d/stat", tid);
  g_autofree char *stat = NULL;
  const char *paren;

  return g_file_get_contents (path, &stat, NULL, NULL) &&
         (paren = strrchr (stat, ')')) != NULL && paren[1] == ' ' && paren[2] == 'S';
}

/* The live view reads the trace while it is written; when the recording
 * ends during one of its reads, finishing (which leaves WAL mode, and so
 * needs the file to itself) waits for the read instead of failing with
 * "database is locked". */
static void
test_finish_while_read (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (f->dir, "read.tide", NULL);
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideProcessRow proc = { .id = 1, .pid = 42, .start_ns = 0, .all_mode = TRUE, .exe = "x" };
  g_autoptr(TideTrace) trace = NULL;
  sqlite3 *reader = NULL;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  Finishing finishing;
  GThread *thread;

  g_assert_no_error (error);
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_flush (w);
  g_assert_cmpint (sqlite3_open_v2 (path, &reader, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (reader, "BEGIN; SELECT count (*) FROM processes;",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  finishing = (Finishing) { .writer = w };
  thread = g_thread_new ("finish", finish_in_thread, &finishing);
  /* Handshake: the finish has built its summaries, and its thread sleeps:
   * in SQLite's busy handler, as the checkpoint that follows waits for the
   * read.  Only then does the read end. */
  while (!has_summaries (path) && !g_atomic_int_get (&finishing.done) &&
         g_get_monotonic_time () < deadline)
    g_usleep (1000);
  while (!thread_sleeps (g_atomic_int_get (&finishing.tid)) &&
         !g_atomic_int_get (&finishing.done) && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_cmpint (g_get_monotonic_time (), <, deadline);
  /* It must not have given up while the read went on. */
  g_assert_false (g_atomic_int_get (&finishing.done));
  g_assert_cmpint (sqlite3_exec (reader, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (reader);
  g_thread_join (thread);
  g_assert_no_error (finishing.error);
  g_assert_true (finishing.ok);

  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (tide_trace_is_complete (trace));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/storage/open/good", Fixture, NULL, fixture_setup, test_open_good,
              fixture_teardown);
  g_test_add ("/storage/open/missing", Fixture, NULL, fixture_setup, test_open_missing,
              fixture_teardown);
  g_test_add ("/storage/open/not-sqlite", Fixture, NULL, fixture_setup, test_open_not_sqlite,
              fixture_teardown);
  g_test_add ("/storage/open/foreign", Fixture, NULL, fixture_setup, test_open_foreign,
              fixture_teardown);
  g_test_add ("/storage/open/truncated", Fixture, NULL, fixture_setup, test_open_truncated,
              fixture_teardown);
  g_test_add ("/storage/open/newer-schema", Fixture, NULL, fixture_setup, test_open_newer_schema,
              fixture_teardown);
  g_test_add ("/storage/open/garbage-pages", Fixture, NULL, fixture_setup,
              test_open_garbage_pages, fixture_teardown);
  g_test_add ("/storage/open/finish-while-read", Fixture, NULL, fixture_setup,
              test_finish_while_read, fixture_teardown);
  g_test_add ("/storage/open/unfinished", Fixture, NULL, fixture_setup, test_open_unfinished,
              fixture_teardown);
  return g_test_run ();
}
