/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The one way storage runs a statement: prepare it, bind with SQLite's own
 * sqlite3_bind_*(), step, then finish it, which finalizes the statement
 * and turns SQLite's error, if any, into a TideStorageError that says what
 * failed ("cannot query the trace: database disk image is malformed").
 * Every storage file goes through these, so a damaged trace reads as the
 * same error kind whichever query met the damage first.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "tide-storage-error.h"

G_BEGIN_DECLS

TideStorageError tide_sqlite_error_kind (int          code);
char         *tide_sqlite_dup_errmsg   (sqlite3     *db);
void          tide_sqlite_set_error    (GError     **error,
                                        sqlite3     *db,
                                        const char  *what);
sqlite3_stmt *tide_sqlite_prepare      (sqlite3     *db,
                                        const char  *sql,
                                        const char  *what,
                                        GError     **error);
sqlite3_stmt *tide_sqlite_prepare_persistent (sqlite3     *db,
                                              const char  *sql,
                                              const char  *what,
                                              GError     **error);
gboolean      tide_sqlite_finish       (sqlite3       *db,
                                        sqlite3_stmt  *stmt,
                                        int            rc,
                                        const char    *what,
                                        GError       **error);
/* Reads the row @stmt stands on into @row, an element of the array that
 * tide_sqlite_read_rows() fills, zeroed before. */
typedef void (*TideSqliteReadRow) (sqlite3_stmt *stmt,
                                   gpointer      row,
                                   gpointer      user_data);

GArray       *tide_sqlite_read_rows    (sqlite3            *db,
                                        sqlite3_stmt       *stmt,
                                        guint               row_size,
                                        TideSqliteReadRow   read_row,
                                        gpointer            user_data,
                                        const char         *what,
                                        GError            **error);
gboolean      tide_sqlite_step_done    (sqlite3       *db,
                                        sqlite3_stmt  *stmt,
                                        const char    *what,
                                        GError       **error);
gboolean      tide_sqlite_run_once     (sqlite3       *db,
                                        sqlite3_stmt  *stmt,
                                        const char    *what,
                                        GError       **error);
gboolean      tide_sqlite_read_int     (sqlite3       *db,
                                        sqlite3_stmt  *stmt,
                                        gint64         fallback,
                                        gint64        *out,
                                        const char    *what,
                                        GError       **error);
gboolean      tide_sqlite_query_int    (sqlite3     *db,
                                        const char  *sql,
                                        const char  *what,
                                        gint64      *out,
                                        GError     **error);
gboolean      tide_sqlite_exec         (sqlite3     *db,
                                        const char  *sql,
                                        GError     **error);
char         *tide_sqlite_meta_text    (sqlite3    *db,
                                        const char *key);
gint64        tide_sqlite_meta_int     (sqlite3    *db,
                                        const char *key);
gboolean      tide_sqlite_has          (sqlite3    *db,
                                        const char *type,
                                        const char *name);

G_END_DECLS
