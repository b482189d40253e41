/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <string.h>

#include "tide-row-feed.h"
#include "tide-schema.h"

struct _TideRowFeed
{
  char              *schema;    /* CREATE TABLE x (columns) */
  TideRowFeedColumn  column;
  gsize              row_size;
  const guint8      *rows;
  guint              n_rows;
};

typedef struct
{
  sqlite3_vtab  base;
  TideRowFeed  *feed;
} FeedTable;

typedef struct
{
  sqlite3_vtab_cursor  base;
  TideRowFeed         *feed;
  guint                row;
} FeedCursor;

static int
feed_connect (sqlite3            *db,
              void               *aux,
              int                 argc,
              const char * const *argv,
              sqlite3_vtab      **out,
              char              **err)
{
  TideRowFeed *feed = aux;
  FeedTable *table;
  int rc;

  (void) argc;
  (void) argv;
  (void) err;
  rc = sqlite3_declare_vtab (db, feed->schema);
  if (rc != SQLITE_OK)
    return rc;
  /* Not from triggers or views: only the writer's own statement. */
  sqlite3_vtab_config (db, SQLITE_VTAB_DIRECTONLY);
  table = sqlite3_malloc (sizeof *table);
  if (table == NULL)
    return SQLITE_NOMEM;
  memset (table, 0, sizeof *table);
  table->feed = feed;
  *out = &table->base;
  return SQLITE_OK;
}

static int
feed_disconnect (sqlite3_vtab *vtab)
{
  sqlite3_free (vtab);
  return SQLITE_OK;
}

/* One plan: every row, in order. */
static int
feed_best_index (sqlite3_vtab       *vtab,
                 sqlite3_index_info *info)
{
  (void) vtab;
  info->estimatedCost = 1e6;
  info->orderByConsumed = 0;
  return SQLITE_OK;
}

static int
feed_open (sqlite3_vtab         *vtab,
           sqlite3_vtab_cursor **out)
{
  FeedCursor *cursor = sqlite3_malloc (sizeof *cursor);

  if (cursor == NULL)
    return SQLITE_NOMEM;
  memset (cursor, 0, sizeof *cursor);
  cursor->feed = ((FeedTable *) vtab)->feed;
  *out = &cursor->base;
  return SQLITE_OK;
}

static int
feed_close (sqlite3_vtab_cursor *cursor)
{
  sqlite3_free (cursor);
  return SQLITE_OK;
}

static int
feed_filter (sqlite3_vtab_cursor  *cursor,
             int                   index_num,
             const char           *index_str,
             int                   argc,
             sqlite3_value       **argv)
{
  (void) index_num;
  (void) index_str;
  (void) argc;
  (void) argv;
  ((FeedCursor *) cursor)->row = 0;
  return SQLITE_OK;
}

static int
feed_next (sqlite3_vtab_cursor *cursor)
{
  ((FeedCursor *) cursor)->row++;
  return SQLITE_OK;
}

static int
feed_eof (sqlite3_vtab_cursor *cursor)
{
  FeedCursor *c = (FeedCursor *) cursor;

  return c->row >= c->feed->n_rows;
}

static int
feed_column (sqlite3_vtab_cursor *cursor,
             sqlite3_context     *ctx,
             int                  column)
{
  FeedCursor *c = (FeedCursor *) cursor;

  c->feed->column (ctx, c->feed->rows + c->row * c->feed->row_size, column);
  return SQLITE_OK;
}

static int
feed_rowid (sqlite3_vtab_cursor *cursor,
            sqlite3_int64       *rowid)
{
  *rowid = ((FeedCursor *) cursor)->row;
  return SQLITE_OK;
}

/* No xCreate: an eponymous-only table, which no schema can name. */
static const sqlite3_module feed_module = {
  .iVersion = 0,
  .xConnect = feed_connect,
  .xBestIndex = feed_best_index,
  .xDisconnect = feed_disconnect,
  .xOpen = feed_open,
  .xClose = feed_close,
  .xFilter = feed_filter,
  .xNext = feed_next,
  .xEof = feed_eof,
  .xColumn = feed_column,
  .xRowid = feed_rowid,
};

static void
feed_free (void *data)
{
  TideRowFeed *feed = data;

  g_free (feed->schema);
  g_free (feed);
}

/* Registers the table @name with @columns (as in CREATE TABLE) on @db.
 * The feed lives as long as @db; it is empty until tide_row_feed_set_rows(). */
TideRowFeed *
tide_row_feed_register (sqlite3            *db,
                        const char         *name,
                        const char         *columns,
                        TideRowFeedColumn   column,
                        gsize               row_size,
                        GError            **error)
{
  TideRowFeed *feed = g_new0 (TideRowFeed, 1);

  feed->schema = g_strdup_printf ("CREATE TABLE x (%s)", columns);
  feed->column = column;
  feed->row_size = row_size;
  /* On failure SQLite has already called feed_free. */
  if (sqlite3_create_module_v2 (db, name, &feed_module, feed, feed_free) != SQLITE_OK)
    {
      tide_sqlite_set_error (error, db, "cannot register the trace writer's row feed");
      return NULL;
    }
  return feed;
}

/* What the next statement that reads the feed sees.  @rows stays the
 * caller's and must outlive that statement. */
void
tide_row_feed_set_rows (TideRowFeed *feed,
                        const void  *rows,
                        guint        n_rows)
{
  feed->rows = rows;
  feed->n_rows = n_rows;
}
