/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-row-feed.h: hands SQLite a run of rows held in memory, as an
 * eponymous virtual table, so that one "INSERT INTO t (...) SELECT * FROM
 * feed" writes them all.
 *
 * Why: binding parameters was a large part of what an allocation row cost
 * the trace writer.  Each sqlite3_bind_*() releases the old value and
 * checks the statement, and each row of a multi-row VALUES then copies
 * its parameters into registers.  A column of a virtual table is set once,
 * in place, and a stand-alone insert benchmark of the allocations table
 * found it the cheaper per row (bench/README.md).
 *
 * The feed is registered on one connection and read on that connection's
 * thread only.  It has no xCreate, so no schema can name it: a trace never
 * refers to it and opens without it.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Sets column @column of @row with sqlite3_result_*(). */
typedef void (*TideRowFeedColumn) (sqlite3_context *ctx,
                                   const void      *row,
                                   int              column);

typedef struct _TideRowFeed TideRowFeed;

TideRowFeed *tide_row_feed_register (sqlite3            *db,
                                     const char         *name,
                                     const char         *columns,
                                     TideRowFeedColumn   column,
                                     gsize               row_size,
                                     GError            **error);
void         tide_row_feed_set_rows (TideRowFeed        *feed,
                                     const void         *rows,
                                     guint               n_rows);

G_END_DECLS
