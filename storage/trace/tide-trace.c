/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTrace: a trace opened for reading.  Traces come from other machines and
 * other people, so they are untrusted input: the file header is checked
 * before SQLite sees it, the connection is read-only with defensive mode on
 * and trusted_schema off, and every failure becomes one sentence.
 *
 * A trace whose recording did not finish (the recorder died, or it is still
 * being written) has no summaries yet.  It is copied into memory and
 * summarized there, so the file on disk is never modified by a reader.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tide-alloc-ranges.h"
#include "tide-analysis.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-bounds.h"
#include "tide-trace-private.h"


#define SQLITE_HEADER_SIZE 100
#define READ_WHAT "cannot read the trace"

struct _TideTrace
{
  GObject  parent_instance;

  char    *path;
  sqlite3 *db;
  gint64   start_ns;
  gint64   end_ns;
  gint64   short_lived_ns;  /* tide-alloc-ranges.h; 0: no allocation_ranges */
  gint64   range_span_ns;   /* tide-alloc-ranges.h; -1: not indexed at finish */
  guint    has_live_at_end : 1;
  TideRetainedPlan retained_plan;
  gint     has_inline;      /* -1: not looked up yet */
  gint     has_stacks;      /* -1: not looked up yet */
  gint     has_residency_totals; /* -1: not looked up yet */
  guint    complete : 1;

  /* A second connection to the same file for queries off the main thread
   * (_tide_trace_lock_reader); opened on first use. */
  GMutex     reader_lock;
  TideTrace *reader;
};

G_DEFINE_FINAL_TYPE (TideTrace, tide_trace, G_TYPE_OBJECT)

static guint32
read_be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

/* Checks what can be checked without SQLite: the magic string and, when the
 * header's page count is valid and no WAL holds newer pages, the length. */
static gboolean
check_file_header (const char  *path,
                   GError     **error)
{
  guint8 header[SQLITE_HEADER_SIZE];
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  struct stat st;
  ssize_t n;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO,
                   "cannot open %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO,
                   "cannot open %s: not a regular file", path);
      return FALSE;
    }
  n = pread (fd, header, sizeof header, 0);
  close (fd);

  if (n != sizeof header || memcmp (header, "SQLite format 3", 16) != 0)
    {
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_SQLITE,
                   "%s is not a Tidemark trace (not an SQLite database)", path);
      return FALSE;
    }

  if (!g_file_test (wal, G_FILE_TEST_EXISTS))
    {
      guint32 page_size = ((guint32) header[16] << 8) | header[17];
      guint32 pages = read_be32 (header + 28);
      gboolean count_valid = read_be32 (header + 24) == read_be32 (header + 92);
      gint64 expected;

      if (page_size == 1)
        page_size = 65536;
      expected = (gint64) page_size * pages;
      if (count_valid && pages > 0 && expected > st.st_size)
        {
          g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_TRUNCATED,
                       "%s is truncated: %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                       " bytes are there", path, (gint64) st.st_size, expected);
          return FALSE;
        }
    }
  return TRUE;
}

/* Rewrites an SQLite error into the sentence a user should see. */
static void
explain_error (const char *path,
               GError     *error)
{
  char *message = NULL;

  if (error->domain != TIDE_STORAGE_ERROR)
    return;
  if (error->code == TIDE_STORAGE_ERROR_NOT_SQLITE)
    message = g_strdup_printf ("%s is not a Tidemark trace (not an SQLite database)", path);
  else if (error->code == TIDE_STORAGE_ERROR_CORRUPT)
    message = g_strdup_printf ("%s is damaged or truncated (%s)", path, error->message);
  if (message != NULL)
    {
      g_free (error->message);
      error->message = message;
    }
}

static gboolean
check_identity (TideTrace  *self,
                GError    **error)
{
  gint64 app_id, version, n_tables;

  if (!tide_sqlite_query_int (self->db, "PRAGMA application_id", READ_WHAT, &app_id, error) ||
      !tide_sqlite_query_int (self->db, "PRAGMA user_version", READ_WHAT, &version, error) ||
      !tide_sqlite_query_int (self->db, "SELECT count(*) FROM sqlite_schema", READ_WHAT,
                              &n_tables, error))
    return FALSE;

  if (app_id != TIDE_APPLICATION_ID)
    {
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_FOREIGN,
                   "%s is an SQLite database but not a Tidemark trace", self->path);
      return FALSE;
    }
  if (version > TIDE_SCHEMA_VERSION)
    {
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NEWER_SCHEMA,
                   "%s was written by a newer Tidemark (trace schema %" G_GINT64_FORMAT
                   "; this version reads schema %d): update Tidemark to open it",
                   self->path, version, TIDE_SCHEMA_VERSION);
      return FALSE;
    }
  if (version < 1 || n_tables == 0)
    {
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_CORRUPT,
                   "%s is damaged: it has no trace schema", self->path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
open_untrusted (TideTrace  *self,
                GError    **error)
{
  int rc = sqlite3_open_v2 (self->path, &self->db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);

  if (rc != SQLITE_OK)
    {
      g_autofree char *message = tide_sqlite_dup_errmsg (self->db);

      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO, "cannot open %s: %s",
                   self->path, message);
      return FALSE;
    }
  sqlite3_extended_result_codes (self->db, 0);
  sqlite3_db_config (self->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (self->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (self->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
  sqlite3_db_config (self->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
  return TRUE;
}

/* Replaces the on-disk connection by a summarized in-memory copy. */
static gboolean
summarize_in_memory (TideTrace  *self,
                     GError    **error)
{
  sqlite3 *mem = NULL;
  sqlite3_backup *backup;
  int rc;

  if (sqlite3_open_v2 (":memory:", &mem, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      sqlite3_close (mem);
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO, "out of memory");
      return FALSE;
    }
  backup = sqlite3_backup_init (mem, "main", self->db, "main");
  rc = backup ? sqlite3_backup_step (backup, -1) : SQLITE_NOMEM;
  sqlite3_backup_finish (backup);
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, self->db, READ_WHAT);
      sqlite3_close (mem);
      return FALSE;
    }
  sqlite3_close (self->db);
  self->db = mem;
  sqlite3_db_config (self->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (self->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  return tide_analysis_build (self->db, error);
}

/* What tide_analysis_build() adds at finish that traces finished by an
 * older version lack; their queries fall back to reading allocations. */
static gboolean
load_finish_summaries (TideTrace  *self,
                       GError    **error)
{
  gint64 has_live, has_span_index;

  if (!tide_sqlite_query_int (self->db,
                              "SELECT EXISTS (SELECT 1 FROM sqlite_schema"
                              " WHERE type = 'table' AND name = 'live_at_end')",
                              READ_WHAT, &has_live, error) ||
      !tide_sqlite_query_int (self->db,
                              "SELECT EXISTS (SELECT 1 FROM sqlite_schema"
                              " WHERE type = 'index' AND name = 'allocation_ranges_by_max')",
                              READ_WHAT, &has_span_index, error) ||
      !tide_sqlite_query_int (self->db,
                              "SELECT coalesce ((SELECT value FROM meta"
                              " WHERE key = 'range_span_ns'), -1)",
                              READ_WHAT, &self->range_span_ns, error))
    return FALSE;
  self->has_live_at_end = has_live != 0;
  if (!has_span_index)
    self->range_span_ns = -1;
  return TRUE;
}

static gboolean
load_bounds (TideTrace  *self,
             GError    **error)
{
  gint64 complete, has_ranges, has_long_lived;

  return tide_sqlite_query_int (self->db, "SELECT value FROM meta WHERE key = 'complete'",
                                READ_WHAT, &complete, error) &&
         (self->complete = complete == 1, TRUE) &&
         tide_trace_bounds_load (self->db, &self->start_ns, &self->end_ns, error) &&
         tide_sqlite_query_int (self->db,
                                "SELECT EXISTS (SELECT 1 FROM sqlite_schema"
                                " WHERE type = 'table' AND name = 'allocation_ranges')",
                                READ_WHAT, &has_ranges, error) &&
         tide_sqlite_query_int (self->db,
                                "SELECT EXISTS (SELECT 1 FROM sqlite_schema"
                                " WHERE type = 'table' AND name = 'long_lived_allocations')",
                                READ_WHAT, &has_long_lived, error) &&
         (self->short_lived_ns = has_ranges ? tide_analysis_get_short_lived_ns (self->db) : 0,
          self->retained_plan = self->short_lived_ns == 0 ? TIDE_RETAINED_BY_INDEX
                                : has_long_lived ? TIDE_RETAINED_BY_RANGES_LONG
                                : TIDE_RETAINED_BY_RANGES,
          TRUE);
}

/**
 * tide_trace_open:
 * @path: a .tide file
 * @error: set to a #TIDE_STORAGE_ERROR whose message is one sentence for the user
 *
 * Returns: (transfer full) (nullable): the trace, or %NULL with @error set
 */
TideTrace *
tide_trace_open (const char  *path,
                 GError     **error)
{
  g_autoptr(TideTrace) self = g_object_new (TIDE_TYPE_TRACE, NULL);
  g_autoptr(GError) local_error = NULL;

  self->path = g_strdup (path);
  if (!check_file_header (path, error))
    return NULL;

  if (!open_untrusted (self, &local_error) ||
      !check_identity (self, &local_error) ||
      !tide_trace_bounds_check_process_ids (self->db, &local_error) ||
      !load_bounds (self, &local_error) ||
      (!self->complete && !summarize_in_memory (self, &local_error)) ||
      !load_finish_summaries (self, &local_error))
    {
      explain_error (path, local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return g_steal_pointer (&self);
}

static void
tide_trace_finalize (GObject *object)
{
  TideTrace *self = TIDE_TRACE (object);

  g_clear_object (&self->reader);
  g_mutex_clear (&self->reader_lock);
  sqlite3_close (self->db);
  g_free (self->path);
  G_OBJECT_CLASS (tide_trace_parent_class)->finalize (object);
}

static void
tide_trace_class_init (TideTraceClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tide_trace_finalize;
}

static void
tide_trace_init (TideTrace *self)
{
  g_mutex_init (&self->reader_lock);
  self->has_inline = -1;
  self->has_stacks = -1;
  self->has_residency_totals = -1;
}

const char *
tide_trace_get_path (TideTrace *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE (self), NULL);
  return self->path;
}

gboolean
tide_trace_is_complete (TideTrace *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE (self), FALSE);
  return self->complete;
}

gint64
tide_trace_get_start_ns (TideTrace *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE (self), 0);
  return self->start_ns;
}

gint64
tide_trace_get_end_ns (TideTrace *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE (self), 0);
  return self->end_ns;
}

/* Returns: (transfer full) (nullable): the meta value as text */
char *
tide_trace_dup_meta (TideTrace  *self,
                     const char *key)
{
  g_return_val_if_fail (TIDE_IS_TRACE (self), NULL);

  return tide_sqlite_meta_text (self->db, key);
}

sqlite3 *
_tide_trace_get_db (TideTrace *self)
{
  return self->db;
}

/* A subquery: allocations rows of the processes @process_filter selects,
 * made in (?2, ?3] and live at ?3, found the cheapest way this trace
 * allows (tide-alloc-ranges.h). */
char *
_tide_trace_retained_rows_sql (TideTrace  *self,
                               const char *process_filter)
{
  return tide_alloc_ranges_retained_sql (self->retained_plan, self->short_lived_ns,
                                         self->range_span_ns, process_filter);
}

/* A query of @columns of the rows of process ?1 made by ?2 that may live
 * longer than a short-lived row (tide_alloc_ranges_long_lived_sql()). */
char *
_tide_trace_long_lived_rows_sql (TideTrace  *self,
                                 const char *columns)
{
  return tide_alloc_ranges_long_lived_sql (self->retained_plan, self->short_lived_ns, columns);
}

gint64
_tide_trace_get_short_lived_ns (TideTrace *self)
{
  return self->retained_plan == TIDE_RETAINED_BY_INDEX ? 0 : self->short_lived_ns;
}

gint64
_tide_trace_get_range_span_ns (TideTrace *self)
{
  return self->range_span_ns;
}

/* Whether the trace has live_at_end (tide-analysis.c). */
gboolean
_tide_trace_has_live_at_end (TideTrace *self)
{
  return self->has_live_at_end;
}

static int
reader_cancelled_cb (void *cancellable)
{
  return g_cancellable_is_cancelled (cancellable);
}

/**
 * _tide_trace_lock_reader:
 * @cancellable: (nullable): a query of the reader stops (its step fails
 *   with SQLITE_INTERRUPT) soon after this is cancelled
 *
 * Takes this trace's second connection, for a thread other than the one
 * that uses @self (the connections are single-threaded).  Only a complete
 * trace has one: the file is opened again, which a trace summarized in
 * memory cannot be.  Release it with _tide_trace_unlock_reader().
 *
 * Returns: (transfer none) (nullable): the reader, or %NULL with @error set
 */
TideTrace *
_tide_trace_lock_reader (TideTrace     *self,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_return_val_if_fail (self->complete, NULL);

  g_mutex_lock (&self->reader_lock);
  if (self->reader == NULL && (self->reader = tide_trace_open (self->path, error)) == NULL)
    {
      g_mutex_unlock (&self->reader_lock);
      return NULL;
    }
  /* Every 1000 VM steps: often enough for a person, seldom enough to cost
   * nothing against a query. */
  if (cancellable != NULL)
    sqlite3_progress_handler (self->reader->db, 1000, reader_cancelled_cb, cancellable);
  return self->reader;
}

void
_tide_trace_unlock_reader (TideTrace *self)
{
  sqlite3_progress_handler (self->reader->db, 0, NULL, NULL);
  g_mutex_unlock (&self->reader_lock);
}

/* The meta value @key of @db as text, or NULL. */
#define EARLY_END_REASON_MAX 80

/* The trace is read from anywhere: its reason is shown as at most a short
 * line of printable ASCII, and a time that is not within a year of the
 * start is left out. */
char *
_tide_trace_describe_early_end_db (sqlite3 *db)
{
  g_autofree char *reason = tide_sqlite_meta_text (db, "stopped_reason");
  g_autofree char *stopped = tide_sqlite_meta_text (db, "stopped_ns");
  g_autofree char *start = tide_sqlite_meta_text (db, "start_ns");
  double seconds;

  if (reason == NULL || reason[0] == '\0')
    return NULL;
  if (strlen (reason) > EARLY_END_REASON_MAX)
    reason[EARLY_END_REASON_MAX] = '\0';
  for (char *c = reason; *c != '\0'; c++)
    if (!g_ascii_isprint (*c))
      *c = '?';
  if (stopped == NULL || start == NULL)
    return g_steal_pointer (&reason);
  seconds = (g_ascii_strtod (stopped, NULL) - g_ascii_strtod (start, NULL)) / 1e9;
  if (!(seconds >= 0 && seconds < 366.0 * 24 * 3600))
    return g_steal_pointer (&reason);
  return g_strdup_printf ("%s at %.1f s", reason, seconds);
}

/**
 * tide_trace_describe_early_end:
 *
 * Returns: (transfer full) (nullable): why and when the recording stopped
 * writing this trace before its program ended ("disk full at 41.2 s"), or
 * %NULL when it did not
 */
char *
tide_trace_describe_early_end (TideTrace *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE (self), NULL);
  return _tide_trace_describe_early_end_db (self->db);
}

gboolean
_tide_trace_has_inline_frames (TideTrace *self)
{
  if (self->has_inline < 0)
    {
      /* Through the index only: a trace without it, or without inline rows
       * (no DWARF for the libraries, as for Debian's libtorch), never pays
       * for the inline part of the frames query. */
      sqlite3_stmt *stmt = tide_sqlite_prepare (self->db, "SELECT 1 FROM sqlite_master"
                                                " WHERE type = 'index' AND name = 'frames_inline'"
                                                " AND EXISTS (SELECT 1 FROM frames"
                                                "             WHERE kind = " TIDE_SQL_FRAME_INLINE ")",
                                                READ_WHAT, NULL);

      self->has_inline = stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW;
      sqlite3_finalize (stmt);
    }
  return self->has_inline;
}

/* Whether the trace has the table @name, looked up once: @cached is -1
 * until then.  A statement that names it compiles from the schema that
 * SQLite has read already, where a query of sqlite_schema would scan it. */
static gboolean
has_table (TideTrace  *self,
           gint       *cached,
           const char *name)
{
  if (*cached < 0)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT 1 FROM main.\"%s\"", name);
      sqlite3_stmt *stmt = NULL;

      *cached = sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL) == SQLITE_OK;
      sqlite3_finalize (stmt);
    }
  return *cached;
}

/* Whether the trace has the stacks table of schema 4: older ones keep
 * their stacks in stack_nodes alone. */
gboolean
_tide_trace_has_stacks (TideTrace *self)
{
  return has_table (self, &self->has_stacks, "stacks");
}

/* Whether the trace has step_residency_totals (schema 4), whose steps'
 * rows of step_residency are the changes alone. */
gboolean
_tide_trace_has_residency_totals (TideTrace *self)
{
  return has_table (self, &self->has_residency_totals, "step_residency_totals");
}
