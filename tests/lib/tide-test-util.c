/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tide-test-util.h"

#include "tide-schema.h"
#include "tide-trace-private.h"
#include "tide-trace-writer.h"

/* A new folder under the temporary directory, never the current one. */
char *
tide_test_make_dir (const char *prefix)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpl = g_strconcat (prefix, "-XXXXXX", NULL);
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

/* Removes the folder and the files a test left in it (traces, WAL, shm). */
void
tide_test_remove_dir (const char *dir)
{
  g_autoptr(GDir) handle = g_dir_open (dir, 0, NULL);
  const char *name;

  while (handle != NULL && (name = g_dir_read_name (handle)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

/* A fresh folder named after @prefix, for one recording. */
void
tide_test_recording_init (TideTestRecording *recording,
                          const char        *prefix)
{
  memset (recording, 0, sizeof *recording);
  recording->dir = tide_test_make_dir (prefix);
  recording->path = g_build_filename (recording->dir, "run.tide", NULL);
}

/* Closes the trace and removes the folder with what is in it. */
void
tide_test_recording_clear (TideTestRecording *recording)
{
  g_clear_object (&recording->trace);
  if (recording->dir != NULL)
    tide_test_remove_dir (recording->dir);
  g_clear_pointer (&recording->dir, g_free);
  g_clear_pointer (&recording->path, g_free);
  g_clear_pointer (&recording->out, g_free);
  g_clear_pointer (&recording->err, g_free);
}

TideTrace *
tide_test_open_trace (const char *path)
{
  g_autoptr(GError) error = NULL;
  TideTrace *trace = tide_trace_open (path, &error);

  g_assert_no_error (error);
  return trace;
}

/* The first column of the first row of @sql; -1 when there is no row. */
gint64
tide_test_query_int (TideTrace  *trace,
                     const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  gint64 value = -1;

  g_assert_cmpint (sqlite3_prepare_v2 (_tide_trace_get_db (trace), sql, -1, &stmt, NULL), ==,
                   SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return value;
}

/* The first column of the first row of @sql on the SQLite file at @path,
 * opened read-only as a plain database: a trace that TideTrace would not
 * open (damaged on purpose) or that a recording still writes.  There must
 * be a row. */
gint64
tide_test_query_file_int (const char *path,
                          const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 value;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* The first column of the first row of @sql as text; NULL when there is no
 * row or the value is NULL. */
char *
tide_test_query_text (TideTrace  *trace,
                      const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  char *value = NULL;

  g_assert_cmpint (sqlite3_prepare_v2 (_tide_trace_get_db (trace), sql, -1, &stmt, NULL), ==,
                   SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  return value;
}

/* The first line of the file at @path (relative: from the repository
 * root) that holds @text, counted from 1, so that a test's expected line
 * numbers follow edits; the test fails where none does. */
gint
tide_test_source_line (const char *path,
                       const char *text)
{
  g_autofree char *full = g_path_is_absolute (path) ? g_strdup (path)
                                                    : g_build_filename (TIDE_SOURCE_ROOT, path, NULL);
  g_autofree char *source = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents (full, &source, NULL, NULL));
  lines = g_strsplit (source, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], text) != NULL)
      return (gint) i + 1;
  g_error ("no line of %s holds '%s'", path, text);
}

/* The innermost frame's function of a stack group, or NULL. */
const char *
tide_test_top_function (TideGroup *group)
{
  if (group->frames == NULL || group->frames->len == 0)
    return NULL;
  return ((TideFrame *) g_ptr_array_index (group->frames, 0))->function;
}

/* A trace of two ranks, pids 500 and 501, of ten 1 ms steps each; rank 1
 * keeps 1 MiB a step from step 4, its only leak suspect. */
void
tide_test_write_two_ranks (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideFrameRow frame = { .id = 1, .kind = TIDE_FRAME_NATIVE, .function = "keep_outputs",
                         .file = "/src/train.c", .line = 25, .module = "/usr/bin/train" };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_frame (w, &frame);
  tide_trace_writer_add_stack_node (w, 1, 0, 1, 1);
  for (gint rank = 0; rank < 2; rank++)
    {
      gint64 id = rank + 1;
      TideProcessRow proc = { .id = id, .pid = 500 + rank, .ppid = 1, .start_ns = 0,
                              .all_mode = TRUE, .exe = "/usr/bin/train",
                              .cmdline = "/usr/bin/train --ddp" };

      tide_trace_writer_add_process (w, &proc);
      tide_trace_writer_set_process_rank (w, id, rank);
      for (gint k = 1; k <= 10; k++)
        {
          gint64 end = k * G_GINT64_CONSTANT (1000000);
          TideAllocRow a = { .process_id = id, .alloc_ns = end - 1000, .address = 0x100000 * k,
                             .size = 1048576, .weight = 1, .stack_id = 1, .device = -1, .kind = 1 };

          tide_trace_writer_add_step (w, id * 100 + k, id, k, "", end - 1000000, end);
          tide_trace_writer_add_counter (w, id, TIDE_COUNTER_RSS, -1, end - 1, (100 + k) * G_GINT64_CONSTANT (1048576));
          if (rank == 1 && k >= 4)
            tide_trace_writer_add_allocation (w, &a);
        }
      tide_trace_writer_end_process (w, id, 10 * G_GINT64_CONSTANT (1000000), &tide_test_exited_0, 0);
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
}

/* Runs @argv (NULL-terminated), which must exit 0 and say nothing on
 * stderr; returns its stdout. */
char *
tide_test_spawn_ok (const char * const *argv)
{
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                &error);
  g_assert_no_error (error);
  g_assert_cmpstr (err, ==, "");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return out;
}

/* Runs @sql on the trace file at @path, as a test that damages or
 * amends one does. */
void
tide_test_exec_sql (const char *path,
                    const char *sql)
{
  sqlite3 *db = NULL;
  char *message = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
  sqlite3_close (db);
}

/* Whether @python can import @module: the suites that need torch or
 * numpy skip without them. */
gboolean
tide_test_python_imports (const char *python,
                          const char *module)
{
  g_autofree char *code = g_strdup_printf ("import %s", module);
  const char *argv[] = { python, "-c", code, NULL };
  int status = -1;

  return g_spawn_sync (NULL, (char **) argv, NULL,
                       G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                       NULL, NULL, &status, NULL) &&
         g_spawn_check_wait_status (status, NULL);
}

/* The value of @column in CSV row @row (1: the first after the header);
 * the tests' fields hold no commas or quotes before the stack column. */
char *
tide_test_csv_cell (const char *csv,
                    guint       row,
                    const char *column)
{
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);
  g_auto(GStrv) header = g_strsplit (lines[0], ",", -1);
  g_auto(GStrv) cells = NULL;

  g_assert_cmpuint (g_strv_length (lines), >, row);
  cells = g_strsplit (lines[row], ",", -1);
  for (guint i = 0; header[i] != NULL; i++)
    if (g_str_equal (header[i], column))
      {
        g_assert_cmpuint (g_strv_length (cells), >, i);
        return g_strdup (cells[i]);
      }
  g_error ("no column %s in %s", column, lines[0]);
}

/* A TCP port on the loopback that nothing listens on now, for a
 * distributed job's rendezvous. */
int
tide_test_free_tcp_port (void)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof addr;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &addr, &len), ==, 0);
  close (fd);
  return ntohs (addr.sin_port);
}

/* Whether `tidemark attach` can run here: as root, on a kernel with BTF.
 * Skips the test, saying why, where it cannot. */
gboolean
tide_test_can_attach (void)
{
  if (geteuid () != 0)
    {
      g_test_skip ("attaching needs root: run the bpf suite as root");
      return FALSE;
    }
  if (!g_file_test ("/sys/kernel/btf/vmlinux", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("this kernel has no BTF (/sys/kernel/btf/vmlinux)");
      return FALSE;
    }
  return TRUE;
}
