/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>

#include "tide-test-util.h"
#include "tide-trace-private.h"

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

/* The innermost frame's function of a stack group, or NULL. */
const char *
tide_test_top_function (TideGroup *group)
{
  if (group->frames == NULL || group->frames->len == 0)
    return NULL;
  return ((TideFrame *) g_ptr_array_index (group->frames, 0))->function;
}
