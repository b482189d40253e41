/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The statement helper of tide-sqlite.h.  A statement ends in
 * tide_sqlite_finish() whether its loop ran to the end or broke off, so
 * that no error path forgets to finalize and no success path forgets to
 * look at the last step's code.
 */
#include "config.h"

#include "tide-sqlite.h"

/* The kind of error, for the one sentence the user reads (tide-trace.c):
 * damage, a file that is not a database, or the disk, apart from an SQL
 * statement that failed for any other reason. */
TideStorageError
tide_sqlite_error_kind (int code)
{
  switch (code & 0xff)
    {
    case SQLITE_NOTADB:
      return TIDE_STORAGE_ERROR_NOT_SQLITE;
    case SQLITE_CORRUPT:
      return TIDE_STORAGE_ERROR_CORRUPT;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return TIDE_STORAGE_ERROR_IO;
    default:
      return TIDE_STORAGE_ERROR_SQL;
    }
}

/**
 * tide_sqlite_dup_errmsg:
 * @db: (nullable): NULL when opening it ran out of memory
 *
 * Returns: @db's last error message on one line. SQLite quotes names out
 * of the file in it ("malformed database schema (NAME)"), and a hostile
 * trace can name an index with a line break: each control character
 * becomes a '?'.
 */
char *
tide_sqlite_dup_errmsg (sqlite3 *db)
{
  char *message = g_strdup (db != NULL ? sqlite3_errmsg (db) : "out of memory");

  for (char *c = message; *c != '\0'; c++)
    if ((unsigned char) *c < 0x20 || *c == 0x7f)
      *c = '?';
  return message;
}

/* Sets @error to "@what: <SQLite's message>" from @db's last error. */
void
tide_sqlite_set_error (GError     **error,
                       sqlite3     *db,
                       const char  *what)
{
  g_autofree char *message = tide_sqlite_dup_errmsg (db);

  g_set_error (error, TIDE_STORAGE_ERROR, tide_sqlite_error_kind (sqlite3_errcode (db)),
               "%s: %s", what, message);
}

static sqlite3_stmt *
prepare_with_flags (sqlite3      *db,
                    const char   *sql,
                    unsigned int  flags,
                    const char   *what,
                    GError      **error)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v3 (db, sql, -1, flags, &stmt, NULL) != SQLITE_OK)
    {
      tide_sqlite_set_error (error, db, what);
      return NULL;
    }
  return stmt;
}

/* Returns NULL with @error set to "@what: <SQLite's message>" on failure. */
sqlite3_stmt *
tide_sqlite_prepare (sqlite3     *db,
                     const char  *sql,
                     const char  *what,
                     GError     **error)
{
  return prepare_with_flags (db, sql, 0, what, error);
}

/* tide_sqlite_prepare() of a statement run many times for the life of the
 * connection (the writer's inserts), which SQLite then keeps out of its
 * lookaside memory. */
sqlite3_stmt *
tide_sqlite_prepare_persistent (sqlite3     *db,
                                const char  *sql,
                                const char  *what,
                                GError     **error)
{
  return prepare_with_flags (db, sql, SQLITE_PREPARE_PERSISTENT, what, error);
}

/**
 * tide_sqlite_finish:
 * @stmt: (transfer full) (nullable): finalized here
 * @rc: what the last sqlite3_step() returned: %SQLITE_DONE, or
 *   %SQLITE_ROW for a loop that stopped at a row it wanted
 *
 * Returns: %FALSE with @error set when @rc is an error
 */
gboolean
tide_sqlite_finish (sqlite3       *db,
                    sqlite3_stmt  *stmt,
                    int            rc,
                    const char    *what,
                    GError       **error)
{
  gboolean ok = rc == SQLITE_DONE || rc == SQLITE_ROW;

  /* The message first: finalizing may reset the connection's error. */
  if (!ok)
    tide_sqlite_set_error (error, db, what);
  sqlite3_finalize (stmt);
  return ok;
}

/**
 * tide_sqlite_read_rows:
 * @stmt: (transfer full) (nullable): prepared and bound; %NULL where
 *   tide_sqlite_prepare() failed, with @error already set
 * @row_size: the size of an element of the array
 *
 * The rows of @stmt, each read by @read_row into an element of its own:
 * the loop of every query that loads a table's rows into an array.
 *
 * Returns: (transfer full): one element per row, or %NULL with @error set
 */
GArray *
tide_sqlite_read_rows (sqlite3            *db,
                       sqlite3_stmt       *stmt,
                       guint               row_size,
                       TideSqliteReadRow   read_row,
                       gpointer            user_data,
                       const char         *what,
                       GError            **error)
{
  g_autoptr(GArray) rows = NULL;
  int rc;

  if (stmt == NULL)
    return NULL;
  rows = g_array_new (FALSE, TRUE, row_size);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_array_set_size (rows, rows->len + 1);
      read_row (stmt, rows->data + (gsize) (rows->len - 1) * row_size, user_data);
    }
  if (!tide_sqlite_finish (db, stmt, rc, what, error))
    return NULL;
  return g_steal_pointer (&rows);
}

/* Runs @stmt, which returns no row (an insert, an update), and resets it
 * for the next run. */
gboolean
tide_sqlite_step_done (sqlite3       *db,
                       sqlite3_stmt  *stmt,
                       const char    *what,
                       GError       **error)
{
  int rc = sqlite3_step (stmt);

  if (rc != SQLITE_DONE)
    tide_sqlite_set_error (error, db, what);
  sqlite3_reset (stmt);
  return rc == SQLITE_DONE;
}

/* tide_sqlite_step_done() of a statement run once: @stmt is finalized. */
gboolean
tide_sqlite_run_once (sqlite3       *db,
                      sqlite3_stmt  *stmt,
                      const char    *what,
                      GError       **error)
{
  gboolean ok = tide_sqlite_step_done (db, stmt, what, error);

  sqlite3_finalize (stmt);
  return ok;
}

/**
 * tide_sqlite_read_int:
 * @stmt: (transfer full) (nullable): prepared and bound; %NULL where
 *   tide_sqlite_prepare() failed, with @error already set
 * @fallback: @out where @stmt returns no row, a NULL, or fails
 *
 * The one integer that @stmt returns (a count, a step number) into @out,
 * then finishes it: the statements that tide_sqlite_query_int() cannot
 * run because they have parameters.
 */
gboolean
tide_sqlite_read_int (sqlite3       *db,
                      sqlite3_stmt  *stmt,
                      gint64         fallback,
                      gint64        *out,
                      const char    *what,
                      GError       **error)
{
  int rc;

  *out = fallback;
  if (stmt == NULL)
    return FALSE;
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    *out = sqlite3_column_int64 (stmt, 0);
  return tide_sqlite_finish (db, stmt, rc, what, error);
}

/* Runs @sql, which returns one integer (a count, a pragma), into @out: 0
 * when it returns no row, or when it fails. */
gboolean
tide_sqlite_query_int (sqlite3     *db,
                       const char  *sql,
                       const char  *what,
                       gint64      *out,
                       GError     **error)
{
  return tide_sqlite_read_int (db, tide_sqlite_prepare (db, sql, what, error), 0, out, what,
                               error);
}

gboolean
tide_sqlite_exec (sqlite3     *db,
                  const char  *sql,
                  GError     **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      tide_sqlite_set_error (error, db, "cannot run statement");
      return FALSE;
    }
  return TRUE;
}

/* The text of meta key @key, or NULL when it is missing or NULL. */
char *
tide_sqlite_meta_text (sqlite3    *db,
                       const char *key)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT value FROM meta WHERE key = ?1", "",
                                            NULL);
  char *value = NULL;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  return value;
}

/* The integer value of meta key @key, or 0 when it is missing. */
gint64
tide_sqlite_meta_int (sqlite3    *db,
                      const char *key)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT value FROM meta WHERE key = ?1",
                                            "", NULL);
  gint64 value = 0;

  if (stmt != NULL &&
      sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return value;
}

/* Whether the schema of @db holds a @type ("table", "index") named @name:
 * what a trace made by an older version may lack. */
gboolean
tide_sqlite_has (sqlite3    *db,
                 const char *type,
                 const char *name)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT 1 FROM sqlite_schema"
                                                " WHERE type = ?1 AND name = ?2", "", NULL);
  gboolean found;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, type, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 2, name, -1, SQLITE_STATIC);
  found = sqlite3_step (stmt) == SQLITE_ROW;
  sqlite3_finalize (stmt);
  return found;
}
