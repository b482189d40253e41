/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTraceWriter: the one thread that writes a trace while it is recorded.
 *
 * Callers append rows to a pending array under a short mutex.  The writer
 * thread takes the array whenever 2048 rows wait and inserts them with
 * persistent prepared statements into one open transaction, which it
 * commits every 16k rows and at least every 100 ms.
 *
 * Taking small batches keeps few rows waiting when the recording ends, and
 * those are written while nothing else runs, after the program ended:
 * 16k-row batches made every recording's end later.  Committing seldom
 * keeps the WAL small, as every commit writes the last, half-full page
 * once more.
 *
 * Nothing a caller does waits for SQLite, except when the writer falls far
 * behind (pending_limit): then callers wait, so memory stays bounded and
 * the pressure travels back to the targets' sockets.
 *
 * When the file system refuses a write (disk full, quota, file size limit,
 * I/O error), the writer stops writing and keeps the trace it has: every
 * committed transaction is safe in the WAL or the database (SQLite rolls
 * the failed one back), so the trace ends at the last commit, at most a
 * tenth of a second before the failure.  Rows that come later are dropped
 * at once, so the recording goes on at full speed and the program never
 * notices; only the few rows that describe the end (meta, process ends)
 * are kept for finish.  Finish then frees a reserve of disk space taken at
 * the start, writes why and when the trace ends, and folds the WAL into
 * the one file.  The trace stays marked incomplete, without the summaries
 * that finish would build: they take space that may not be there, and a
 * reader builds them in memory for an incomplete trace (tide-trace.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tide-alloc-ranges.h"
#include "tide-analysis.h"
#include "tide-row-feed.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-private.h"
#include "tide-trace-writer.h"

typedef enum
{
  OP_META,
  OP_PROCESS,
  OP_PROCESS_END,
  OP_PROCESS_END_CAUSE,
  OP_THREAD,
  OP_MAPPING,
  OP_FRAME,
  OP_STACK,
  OP_STACK_NODE,
  OP_SCOPE,
  OP_STEP,
  OP_ALLOC,
  OP_COUNTER,
  OP_TRANSFER,
  OP_RESIDENCY,
  OP_RESIDENCY_TOTAL,
  OP_SERIES,
  OP_STEP_STATS,
  OP_PROCESS_RANK,
  OP_PROCESS_WORKER,
  OP_COW_SOURCE,
  OP_MODULE,
  OP_ALLOC_FAILURE,
  OP_FAILURES_RECOVERED,
  N_OPS
} OpType;

#define OP_MAX_INTS  11
#define OP_MAX_TEXTS 3

/* A row waiting to be written: integer parameters ?1..?n_ints, then the
 * double (if the statement has one), then the texts.  An integer whose bit
 * is set in null_if_zero is bound as NULL when it is 0. */
typedef struct
{
  guint8  type;
  gint64  ints[OP_MAX_INTS];
  double  real;
  char   *texts[OP_MAX_TEXTS];
} Op;

typedef struct
{
  const char *sql;
  guint       n_ints;
  gboolean    has_real;
  guint       n_texts;
  guint       null_if_zero;
} OpShape;

static const OpShape op_shapes[N_OPS] = {
  [OP_META] = { "INSERT OR REPLACE INTO meta (key, value) VALUES (?2, coalesce (?3, ?1))",
                1, FALSE, 2, 0 },
  [OP_PROCESS] = { "INSERT INTO processes (id, pid, ppid, parent_id, start_ns, sample_bytes,"
                   " all_mode, exe, cmdline) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                   7, FALSE, 2, 1 << 3 },
  [OP_PROCESS_END] = { "UPDATE processes SET end_ns = ?2, exit_status = ?3, dropped = ?4"
                       " WHERE id = ?1", 4, FALSE, 0, 0 },
  [OP_PROCESS_END_CAUSE] = { "INSERT OR REPLACE INTO process_ends (process_id, kind, exit_code,"
                             " signal, core_dumped, oom, limit_bytes)"
                             " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", 7, FALSE, 0, 0 },
  [OP_PROCESS_RANK] = { "UPDATE processes SET rank = ?2 WHERE id = ?1", 2, FALSE, 0, 0 },
  [OP_PROCESS_WORKER] = { "UPDATE processes SET worker = ?2 WHERE id = ?1", 2, FALSE, 0, 0 },
  [OP_MODULE] = { "INSERT OR IGNORE INTO modules (path, build_id) VALUES (?1, ?2)",
                  0, FALSE, 2, 0 },
  [OP_THREAD] = { "INSERT INTO threads (id, process_id, tid, name) VALUES (?1, ?2, ?3, ?4)",
                  3, FALSE, 1, 0 },
  [OP_MAPPING] = { "INSERT INTO mappings (process_id, start, end, load_bias, ts_ns, path)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6)", 5, FALSE, 1, 0 },
  [OP_FRAME] = { "INSERT INTO frames (id, kind, line, module_offset, function, file, module)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", 4, FALSE, 3, 0 },
  [OP_STACK] = { "INSERT INTO stacks (id, frames) VALUES (?1, ?2)", 1, FALSE, 1, 0 },
  [OP_STACK_NODE] = { "INSERT INTO stack_nodes (id, parent_id, frame_id, depth)"
                      " VALUES (?1, ?2, ?3, ?4)", 4, FALSE, 0, 1 << 1 },
  [OP_SCOPE] = { "INSERT INTO scopes (id, process_id, parent_id, name, path)"
                 " VALUES (?1, ?2, ?3, ?4, ?5)", 3, FALSE, 2, 1 << 2 },
  [OP_STEP] = { "INSERT INTO steps (id, process_id, number, start_ns, end_ns, label)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6)", 5, FALSE, 1, 0 },
  /* No statement of its own: runs of them go through alloc_feed_stmt.
   * ints[]: process_id, thread_id, kind, device, address, size, alloc_ns,
   * free_ns, stack_id, scope_id; real: weight. */
  [OP_ALLOC] = { NULL, 10, TRUE, 0, (1 << 1) | (1 << 7) | (1 << 8) | (1 << 9) },
  [OP_COUNTER] = { "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                   " VALUES (?1, ?2, ?3, ?4, ?5)", 5, FALSE, 0, 0 },
  [OP_TRANSFER] = { "INSERT INTO transfers (process_id, direction, device, bytes, start_ns,"
                    " duration_ns, stack_id, scope_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    8, FALSE, 0, (1 << 6) | (1 << 7) },
  [OP_RESIDENCY] = { "INSERT INTO step_residency (step_id, stack_id, scope_id, device,"
                     " resident_bytes, resident_born_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                     6, FALSE, 0, (1 << 1) | (1 << 2) },
  [OP_RESIDENCY_TOTAL] = { "INSERT INTO step_residency_totals (step_id, resident_bytes,"
                           " resident_born_bytes) VALUES (?1, ?2, ?3)", 3, FALSE, 0, 0 },
  [OP_SERIES] = { "INSERT INTO step_series (step_id, stack_id, scope_id, device, live_bytes,"
                  " live_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", 6, FALSE, 0,
                  (1 << 1) | (1 << 2) },
  [OP_COW_SOURCE] = { "INSERT INTO cow_sources (process_id, ts_ns, parent_id, stack_id, bytes)"
                      " VALUES (?1, ?2, ?3, ?4, ?5)", 5, FALSE, 0, 1 << 3 },
  [OP_ALLOC_FAILURE] = { "INSERT INTO alloc_failures (process_id, ts_ns, error, device, bytes,"
                         " allocated_bytes, stack_id, scope_id, api)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", 8, FALSE, 1,
                         (1 << 6) | (1 << 7) },
  [OP_FAILURES_RECOVERED] = { "UPDATE alloc_failures SET recovered = 1"
                              " WHERE process_id = ?1 AND device = ?2 AND recovered = 0",
                              2, FALSE, 0, 0 },
  [OP_STEP_STATS] = { "INSERT INTO step_stats (step_id, heap_live_end, mapped_live_end,"
                      " device_live_end, retained_bytes, retained_count)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)", 6, FALSE, 0, 0 },
};

#define ALLOC_PROCESS 0  /* ints[] of an OP_ALLOC */
#define ALLOC_TIME    6
#define ALLOC_FREE    7

/* A run of allocation rows goes to SQLite in one statement, which reads
 * them from a feed (tide-row-feed.h).  The columns that the run's rows
 * share are bound once, as ?1..?4: SQLite then copies each per row, where
 * a column of the feed costs it a call of the feed's xColumn, for every
 * row.  Runs end where one of them changes: in most traces they never do. */
static const guint alloc_shared_ints[] = { 0, 2, 3, 9 };  /* ints[] of an OP_ALLOC */
#define ALLOC_SHARED_COLUMNS "process_id, kind, device, scope_id"
static const guint alloc_feed_ints[] = { 1, 4, 5, 6, 7, 8 };
#define ALLOC_FEED_COLUMNS "thread_id, address, size, alloc_ns, free_ns, stack_id, weight"
#define ALLOC_FEED_WEIGHT  6  /* the column of ALLOC_FEED_COLUMNS that is op->real */
#define BATCH_WAKE_ROWS   2048
#define COMMIT_ROWS       16384
#define COMMIT_INTERVAL_US (100 * G_TIME_SPAN_MILLISECOND)
#define WRITER_NICE       (-10)
#define WRITER_BUSY_TIMEOUT_MS 10000
#define PREPARE_WHAT "cannot prepare the trace writer"
#define WRITER_PAGE_SIZE  16384   /* PRAGMA page_size, below */
/* Disk space set aside at the start for the end of a trace whose disk
 * filled: the meta rows that say so, and the copy of the WAL's pages into
 * the database (the WAL is checkpointed at 1 MiB, so 4 MiB leaves room for
 * one that a reader held back). */
#define RESERVE_BYTES     (4 * 1024 * 1024)

struct _TideTraceWriter
{
  char         *path;
  int           reserve_fd;        /* -1 when no reserve could be made */
  gboolean      file_size_reserved; /* holds a share of the lowered RLIMIT_FSIZE */
  sqlite3      *db;
  sqlite3_stmt *stmts[N_OPS];
  TideRowFeed  *alloc_feed;        /* a run of OP_ALLOC, as a table */
  sqlite3_stmt *alloc_feed_stmt;   /* INSERT INTO allocations SELECT * FROM it */
  sqlite3_stmt *range_stmt;        /* INSERT INTO allocation_ranges */
  sqlite3_stmt *long_lived_stmt;   /* INSERT INTO long_lived_allocations */
  TideAllocRange range;            /* of the rows written since, writer thread only */
  GThread      *thread;

  /* The writer thread's open transaction. */
  gboolean      in_transaction;
  guint         rows_since_commit;
  gint64        next_commit;       /* monotonic µs: commit by then */

  /* Guarded by mutex. */
  GMutex        mutex;
  GCond         wake_writer;
  GCond         batch_done;
  GArray       *pending;       /* of Op */
  guint64       flushes_wanted;   /* tide_trace_writer_flush calls ... */
  guint64       flushes_done;     /* ... that a commit has answered */
  guint         pending_limit;
  GError       *error;         /* first write error, reported by finish */
  int           stop_errno;    /* the file system refused a write: no more rows */
  gint64        stop_ns;       /* when, CLOCK_MONOTONIC */
  GArray       *end_rows;      /* of Op: what describes the end, kept after a stop */
  guint         stopping : 1;
  guint         finished : 1;
};

static void
op_clear (Op *op)
{
  for (guint i = 0; i < OP_MAX_TEXTS; i++)
    g_clear_pointer (&op->texts[i], g_free);
}

/* Column @column (of ALLOC_FEED_COLUMNS) of the OP_ALLOC @row. */
static void
alloc_feed_column (sqlite3_context *ctx,
                   const void      *row,
                   int              column)
{
  const Op *op = row;
  guint k;

  if (column == ALLOC_FEED_WEIGHT)
    {
      sqlite3_result_double (ctx, op->real);
      return;
    }
  k = alloc_feed_ints[column];
  if ((op_shapes[OP_ALLOC].null_if_zero & (1u << k)) && op->ints[k] == 0)
    sqlite3_result_null (ctx);
  else
    sqlite3_result_int64 (ctx, op->ints[k]);
}

static gboolean
writer_prepare_alloc_feed (TideTraceWriter  *self,
                           GError          **error)
{
  G_STATIC_ASSERT (G_N_ELEMENTS (alloc_feed_ints) == ALLOC_FEED_WEIGHT);

  self->alloc_feed = tide_row_feed_register (self->db, "tide_alloc_feed", ALLOC_FEED_COLUMNS,
                                             alloc_feed_column, sizeof (Op), error);
  if (self->alloc_feed == NULL)
    return FALSE;
  self->alloc_feed_stmt = tide_sqlite_prepare_persistent (self->db,
    "INSERT INTO allocations (" ALLOC_SHARED_COLUMNS ", " ALLOC_FEED_COLUMNS ")"
    " SELECT ?1, ?2, ?3, ?4, * FROM tide_alloc_feed", PREPARE_WHAT, error);
  return self->alloc_feed_stmt != NULL;
}

static gboolean
writer_prepare (TideTraceWriter  *self,
                GError          **error)
{
  for (guint i = 0; i < N_OPS; i++)
    if (op_shapes[i].sql != NULL &&
        (self->stmts[i] = tide_sqlite_prepare_persistent (self->db, op_shapes[i].sql,
                                                          PREPARE_WHAT, error)) == NULL)
      return FALSE;
  if ((self->range_stmt = tide_sqlite_prepare_persistent (self->db,
         "INSERT INTO allocation_ranges (first_id, last_id, min_alloc_ns, max_alloc_ns)"
         " VALUES (?1, ?2, ?3, ?4)", PREPARE_WHAT, error)) == NULL ||
      (self->long_lived_stmt = tide_sqlite_prepare_persistent (self->db,
         "INSERT INTO long_lived_allocations (process_id, alloc_ns, id) VALUES (?1, ?2, ?3)",
         PREPARE_WHAT, error)) == NULL)
    return FALSE;
  return writer_prepare_alloc_feed (self, error);
}

/* Binds ints[k] of @op to parameter @param. */
static void
bind_int (sqlite3_stmt *stmt,
          guint         param,
          const Op     *op,
          guint         k)
{
  if ((op_shapes[op->type].null_if_zero & (1u << k)) && op->ints[k] == 0)
    sqlite3_bind_null (stmt, param);
  else
    sqlite3_bind_int64 (stmt, param, op->ints[k]);
}

/* Binds @op to the parameters of @stmt from @param on; returns the next. */
static guint
bind_op (sqlite3_stmt *stmt,
         const Op     *op,
         guint         param)
{
  const OpShape *shape = &op_shapes[op->type];

  for (guint i = 0; i < shape->n_ints; i++, param++)
    bind_int (stmt, param, op, i);
  if (shape->has_real)
    sqlite3_bind_double (stmt, param++, op->real);
  for (guint i = 0; i < shape->n_texts; i++, param++)
    sqlite3_bind_text (stmt, param, op->texts[i], -1, SQLITE_STATIC);
  return param;
}

static gboolean
run_statement (TideTraceWriter  *self,
               sqlite3_stmt     *stmt,
               GError          **error)
{
  return tide_sqlite_step_done (self->db, stmt, "cannot write to the trace", error);
}

static gboolean
writer_close_range (TideTraceWriter  *self,
                    GError          **error)
{
  const TideAllocRange *r = &self->range;
  gboolean ok = TRUE;

  if (r->n_short > 0)
    {
      sqlite3_bind_int64 (self->range_stmt, 1, r->first_id);
      sqlite3_bind_int64 (self->range_stmt, 2, r->last_id);
      sqlite3_bind_int64 (self->range_stmt, 3, r->min_alloc_ns);
      sqlite3_bind_int64 (self->range_stmt, 4, r->max_alloc_ns);
      ok = run_statement (self, self->range_stmt, error);
    }
  tide_alloc_range_reset (&self->range);
  return ok;
}

static gboolean
writer_add_long_lived (TideTraceWriter  *self,
                       const Op         *op,
                       gint64            id,
                       GError          **error)
{
  sqlite3_bind_int64 (self->long_lived_stmt, 1, op->ints[ALLOC_PROCESS]);
  sqlite3_bind_int64 (self->long_lived_stmt, 2, op->ints[ALLOC_TIME]);
  sqlite3_bind_int64 (self->long_lived_stmt, 3, id);
  return run_statement (self, self->long_lived_stmt, error);
}

/* The @n_rows allocations just inserted took the rowids up to the last
 * one, in order: SQLite gives a NULL rowid the largest one plus one. */
static gboolean
writer_note_alloc_rows (TideTraceWriter  *self,
                        const Op         *ops,
                        guint             n_rows,
                        GError          **error)
{
  gint64 last = sqlite3_last_insert_rowid (self->db);

  for (guint i = 0; i < n_rows; i++)
    {
      gint64 id = last - (gint64) (n_rows - 1 - i);
      const gint64 *v = ops[i].ints;

      if (!tide_alloc_is_short_lived (v[ALLOC_TIME], v[ALLOC_FREE]) &&
          !writer_add_long_lived (self, &ops[i], id, error))
        return FALSE;
      if (tide_alloc_range_add (&self->range, id, v[ALLOC_TIME], v[ALLOC_FREE]))
        continue;
      if (!writer_close_range (self, error))
        return FALSE;
      tide_alloc_range_add (&self->range, id, v[ALLOC_TIME], v[ALLOC_FREE]);
    }
  return TRUE;
}

static gboolean
alloc_shares_columns (const Op *a,
                      const Op *b)
{
  for (guint i = 0; i < G_N_ELEMENTS (alloc_shared_ints); i++)
    if (a->ints[alloc_shared_ints[i]] != b->ints[alloc_shared_ints[i]])
      return FALSE;
  return TRUE;
}

/* Writes ops[0..] and returns how many it wrote: a run of allocations in
 * one statement, through the feed, or one other row. */
static guint
writer_insert (TideTraceWriter  *self,
               const Op         *ops,
               guint             n_ops,
               GError          **error)
{
  if (ops[0].type == OP_ALLOC)
    {
      guint n = 1;
      gboolean ok;

      while (n < n_ops && ops[n].type == OP_ALLOC && alloc_shares_columns (&ops[n], &ops[0]))
        n++;
      for (guint i = 0; i < G_N_ELEMENTS (alloc_shared_ints); i++)
        bind_int (self->alloc_feed_stmt, i + 1, &ops[0], alloc_shared_ints[i]);
      tide_row_feed_set_rows (self->alloc_feed, ops, n);
      ok = run_statement (self, self->alloc_feed_stmt, error);
      tide_row_feed_set_rows (self->alloc_feed, NULL, 0);
      if (!ok || !writer_note_alloc_rows (self, ops, n, error))
        return 0;
      return n;
    }

  bind_op (self->stmts[ops[0].type], &ops[0], 1);
  if (!run_statement (self, self->stmts[ops[0].type], error))
    return 0;
  return 1;
}

/* Inserts @batch into the open transaction, or a new one. */
static gboolean
writer_write_batch (TideTraceWriter  *self,
                    GArray           *batch,
                    GError          **error)
{
  const Op *ops = (const Op *) batch->data;

  if (!self->in_transaction)
    {
      if (!tide_sqlite_exec (self->db, "BEGIN", error))
        return FALSE;
      self->in_transaction = TRUE;
    }
  for (guint i = 0; i < batch->len;)
    {
      guint written = writer_insert (self, ops + i, batch->len - i, error);

      if (written == 0)
        return FALSE;
      i += written;
    }
  self->rows_since_commit += batch->len;
  return TRUE;
}

static gboolean
writer_commit (TideTraceWriter  *self,
               GError          **error)
{
  self->in_transaction = FALSE;
  self->rows_since_commit = 0;
  return writer_close_range (self, error) &&
         tide_sqlite_exec (self->db, "COMMIT", error);
}

static gint64
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* SQLite reads a failed write's errno back from errno after other calls,
 * and sometimes finds 0 there: then the file system says what happened, a
 * file at RLIMIT_FSIZE (no room for one more page) or no free blocks. */
static int
guess_refused_errno (TideTraceWriter *self)
{
  static const char *suffixes[] = { "", "-wal" };
  struct rlimit limit;
  struct statvfs fs;
  struct stat st;

  if (getrlimit (RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
      {
        g_autofree char *name = g_strconcat (self->path, suffixes[i], NULL);

        if (stat (name, &st) == 0 && (guint64) st.st_size + WRITER_PAGE_SIZE > limit.rlim_cur)
          return EFBIG;
      }
  if (statvfs (self->path, &fs) == 0 &&
      (guint64) (geteuid () == 0 ? fs.f_bfree : fs.f_bavail) * fs.f_frsize < WRITER_PAGE_SIZE)
    return ENOSPC;
  return EIO;
}

/* The errno of a write that the file system refused, or 0 when @rc (what
 * SQLite said) is no such failure.  SQLite says SQLITE_FULL for ENOSPC and
 * SQLITE_IOERR for the rest (EDQUOT, EFBIG, EIO...). */
static int
refused_write_errno (TideTraceWriter *self,
                     int              rc)
{
  int err = sqlite3_system_errno (self->db);

  if (rc == SQLITE_FULL)
    return ENOSPC;
  if (rc != SQLITE_IOERR)
    return 0;
  return err != 0 ? err : guess_refused_errno (self);
}

/* Rows that still matter after a stop: they describe how the recording
 * ended, are few, and change no table's size much. */
static gboolean
op_describes_end (const Op *op)
{
  return op->type == OP_META || op->type == OP_PROCESS_END || op->type == OP_PROCESS_END_CAUSE ||
         op->type == OP_PROCESS_RANK;
}

/* Moves the rows of @ops that describe the end to end_rows; the mutex is
 * held. */
static void
keep_end_rows_locked (TideTraceWriter *self,
                      GArray          *ops)
{
  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = &g_array_index (ops, Op, i);

      if (op_describes_end (op))
        {
          g_array_append_vals (self->end_rows, op, 1);
          memset (op->texts, 0, sizeof op->texts);  /* now end_rows' */
        }
    }
  g_array_set_size (ops, 0);
}

/* From now on rows are dropped as they come.  @batch, the rows being
 * written, and those pending keep only what describes the end: what was
 * written of them is rolled back. */
static void
writer_stop (TideTraceWriter *self,
             int              err,
             GArray          *batch)
{
  g_mutex_lock (&self->mutex);
  self->stop_errno = err;
  self->stop_ns = monotonic_ns ();
  keep_end_rows_locked (self, batch);
  keep_end_rows_locked (self, self->pending);
  g_cond_broadcast (&self->batch_done);
  g_mutex_unlock (&self->mutex);
}

/* A failed insert or commit of @batch loses every row since the last
 * commit.  When the file system refused it, the writer stops; any other
 * first error is what finish reports. */
static void
writer_roll_back (TideTraceWriter  *self,
                  GArray           *batch,
                  GError          **error)
{
  int err = refused_write_errno (self, sqlite3_errcode (self->db));

  if (!sqlite3_get_autocommit (self->db))
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  self->in_transaction = FALSE;
  self->rows_since_commit = 0;
  tide_alloc_range_reset (&self->range);  /* its rowids are gone */

  if (err != 0)
    {
      writer_stop (self, err, batch);
      g_clear_error (error);
      return;
    }
  g_mutex_lock (&self->mutex);
  if (self->error == NULL)
    self->error = g_steal_pointer (error);
  g_mutex_unlock (&self->mutex);
  g_clear_error (error);
}

/* Commits every COMMIT_ROWS rows, and at least every COMMIT_INTERVAL_US so
 * that a recording that dies keeps all but its last tenth of a second. */
static gboolean
writer_should_commit (TideTraceWriter *self,
                      gboolean         stopping,
                      gboolean         flush_wanted,
                      gint64           now)
{
  return self->in_transaction &&
         (stopping || flush_wanted || self->rows_since_commit >= COMMIT_ROWS ||
          now >= self->next_commit);
}

/* The writer is the one serial stage between the program and the trace:
 * when it falls behind, the program waits for it (pending_limit).  At the
 * default priority the scheduler gave it an equal share of the cores while
 * the program's threads and the recorder's main thread also ran, then
 * nothing ran but the writer while they waited, and the cores idled.  So
 * it asks for nice -10, for itself only (Linux applies a thread id's
 * priority to that thread).  Only a process that may raise priorities gets it (root, or
 * RLIMIT_NICE); for others the call fails and nothing changes.  The
 * program's own priority is never touched. */
static void
writer_raise_priority (void)
{
  (void) setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), WRITER_NICE);
}

/* Waits until a batch's worth of rows is pending, a commit is due, a flush
 * is wanted or the writer must stop. */
static void
writer_wait_locked (TideTraceWriter *self)
{
  while (self->pending->len < BATCH_WAKE_ROWS && !self->stopping &&
         self->flushes_wanted == self->flushes_done &&
         g_cond_wait_until (&self->wake_writer, &self->mutex, self->next_commit))
    ;
}

static gpointer
writer_thread_main (gpointer data)
{
  TideTraceWriter *self = data;
  g_autoptr(GArray) batch = g_array_new (FALSE, FALSE, sizeof (Op));

  writer_raise_priority ();

  g_array_set_clear_func (batch, (GDestroyNotify) op_clear);
  self->next_commit = g_get_monotonic_time () + COMMIT_INTERVAL_US;

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      GArray *swap;
      gboolean stopping;
      guint64 flushes_wanted;
      gint64 now;

      g_mutex_lock (&self->mutex);
      writer_wait_locked (self);
      swap = self->pending;
      self->pending = batch;
      batch = swap;
      stopping = self->stopping;
      flushes_wanted = self->flushes_wanted;
      g_mutex_unlock (&self->mutex);

      if (self->stop_errno != 0)
        g_array_set_size (batch, 0);
      if (batch->len > 0 && !writer_write_batch (self, batch, &error))
        writer_roll_back (self, batch, &error);
      now = g_get_monotonic_time ();
      if (writer_should_commit (self, stopping, flushes_wanted != self->flushes_done, now) &&
          !writer_commit (self, &error))
        writer_roll_back (self, batch, &error);
      if (!self->in_transaction || now >= self->next_commit)
        self->next_commit = now + COMMIT_INTERVAL_US;
      g_array_set_size (batch, 0);

      g_mutex_lock (&self->mutex);
      if (!self->in_transaction)
        self->flushes_done = flushes_wanted;
      g_cond_broadcast (&self->batch_done);
      stopping = stopping && self->pending->len == 0;
      g_mutex_unlock (&self->mutex);

      if (stopping)
        break;
    }
  return NULL;
}

/* Takes RESERVE_BYTES of the trace's file system, for finish to give back
 * if the disk fills: a file beside the trace, unlinked at once, whose
 * blocks stay taken while its descriptor is open.  So nothing is left
 * behind, even by a recorder that is killed.  Without room for it the
 * recording goes on without one. */
static void
writer_make_reserve (TideTraceWriter *self)
{
  g_autofree char *path = g_strconcat (self->path, "-reserve", NULL);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

  if (fd < 0)
    return;
  unlink (path);
  if (posix_fallocate (fd, 0, RESERVE_BYTES) != 0)
    {
      close (fd);
      return;
    }
  self->reserve_fd = fd;
}

/* The same reserve under a file size limit (RLIMIT_FSIZE), where free
 * disk space does not help: the process's soft limit is lowered by a
 * reserve, so that the trace and its WAL stop short of the real limit,
 * and raised back for finish, which then has room for the rows that say
 * why the trace ends.  The limit is the process's, so the writers that
 * are open at once share one lowering: the first lowers it, the last to
 * release it raises it back. */
static GMutex file_size_lock;
static guint file_size_holders;
static rlim_t file_size_limit;  /* the soft limit before the first lowering */

static void
writer_reserve_file_size (TideTraceWriter *self)
{
  struct rlimit limit;

  g_mutex_lock (&file_size_lock);
  if (file_size_holders == 0 && getrlimit (RLIMIT_FSIZE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY)
    {
      file_size_limit = limit.rlim_cur;
      limit.rlim_cur -= MIN ((rlim_t) RESERVE_BYTES, limit.rlim_cur / 4);
      if (setrlimit (RLIMIT_FSIZE, &limit) != 0)
        file_size_limit = RLIM_INFINITY;
    }
  else if (file_size_holders == 0)
    file_size_limit = RLIM_INFINITY;
  file_size_holders++;
  self->file_size_reserved = TRUE;
  g_mutex_unlock (&file_size_lock);
}

static void
writer_release_file_size (TideTraceWriter *self)
{
  struct rlimit limit;

  if (!self->file_size_reserved)
    return;
  g_mutex_lock (&file_size_lock);
  self->file_size_reserved = FALSE;
  if (--file_size_holders == 0 && file_size_limit != RLIM_INFINITY &&
      getrlimit (RLIMIT_FSIZE, &limit) == 0)
    {
      limit.rlim_cur = MIN (file_size_limit, limit.rlim_max);
      setrlimit (RLIMIT_FSIZE, &limit);
    }
  g_mutex_unlock (&file_size_lock);
}

static void
writer_release_reserve (TideTraceWriter *self)
{
  if (self->reserve_fd >= 0)
    close (self->reserve_fd);
  self->reserve_fd = -1;
  writer_release_file_size (self);
}

/* What a recording writes beyond tide_schema_create()'s tables. */
static const char * const writer_objects[] = {
  "counters_by_time", "residency_by_step", "long_lived_allocations", "process_ends",
  "alloc_failures", NULL
};

static gboolean
writer_open_db (TideTraceWriter  *self,
                GError          **error)
{
  struct stat st;

  /* A new trace replaces an old one, including its WAL.  An empty file is
   * a name claimed for this trace (tide-output-name.h): kept, so that
   * nobody else takes the name meanwhile. */
  if (lstat (self->path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size != 0)
    unlink (self->path);
  for (guint i = 0; i < 3; i++)
    {
      static const char *suffixes[] = { "-wal", "-shm", "-reserve" };
      g_autofree char *name = g_strconcat (self->path, suffixes[i], NULL);
      unlink (name);
    }
  writer_make_reserve (self);
  writer_reserve_file_size (self);

  if (sqlite3_open_v2 (self->path, &self->db,
                       SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                       NULL) != SQLITE_OK)
    {
      g_autofree char *message = tide_sqlite_dup_errmsg (self->db);

      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO,
                   "cannot create %s: %s", self->path, message);
      return FALSE;
    }
  sqlite3_extended_result_codes (self->db, 0);
  /* The live view opens the trace for a moment at a time; what needs the
   * file to itself (leaving WAL mode at finish) waits for such a read. */
  sqlite3_busy_timeout (self->db, WRITER_BUSY_TIMEOUT_MS);

  /* WAL while writing: readers (the live GUI) never block the writer.  No
   * fsync: a crash of the recorder or of the target keeps every committed
   * page (the kernel has them); only a power cut could lose the tail.
   * 16 KiB pages, set before WAL mode, which fixes the page size: fewer
   * pages to balance and to frame in the WAL per row, and faster reads of
   * big tables.  The WAL is checkpointed every 64 of those pages (1 MiB):
   * what is left at finish is copied after the target has ended, while
   * nothing else runs, and a smaller WAL copies less while the target runs.
   * synchronous = OFF comes first: set after journal_mode = WAL, it let
   * the switch to WAL fsync four times at every recording's start.
   * A small page cache: the writer appends, so it needs little more than
   * the right edges of the table and its indexes, and 2 MiB of recycled
   * page buffers stay in the CPU caches where 16 MiB streamed through them
   * beside the target, which bench-record shows in both modes. */
  return tide_sqlite_exec (self->db,
                           "PRAGMA synchronous = OFF;"
                           "PRAGMA page_size = 16384;"
                           "PRAGMA journal_mode = WAL;"
                           "PRAGMA cache_size = -2048;"
                           "PRAGMA wal_autocheckpoint = 64;",
                           error) &&
         tide_schema_create (self->db, error) &&
         tide_schema_ensure_all (self->db, writer_objects, error) &&
         tide_sqlite_exec (self->db,
                           "INSERT INTO meta (key, value) VALUES ('complete', 0),"
                           "  ('short_lived_ns', " G_STRINGIFY (TIDE_SHORT_LIVED_NS) ");",
                           error) &&
         writer_prepare (self, error);
}

void
tide_trace_writer_free (TideTraceWriter *self)
{
  if (self == NULL)
    return;
  if (self->thread != NULL)
    {
      g_mutex_lock (&self->mutex);
      self->stopping = TRUE;
      g_cond_signal (&self->wake_writer);
      g_mutex_unlock (&self->mutex);
      g_thread_join (self->thread);
    }
  for (guint i = 0; i < N_OPS; i++)
    sqlite3_finalize (self->stmts[i]);
  sqlite3_finalize (self->range_stmt);
  sqlite3_finalize (self->long_lived_stmt);
  sqlite3_finalize (self->alloc_feed_stmt);
  sqlite3_close (self->db);
  writer_release_reserve (self);
  g_array_unref (self->pending);
  g_array_unref (self->end_rows);
  g_clear_error (&self->error);
  g_mutex_clear (&self->mutex);
  g_cond_clear (&self->wake_writer);
  g_cond_clear (&self->batch_done);
  g_free (self->path);
  g_free (self);
}

TideTraceWriter *
tide_trace_writer_new (const char  *path,
                       GError     **error)
{
  g_autoptr(TideTraceWriter) self = g_new0 (TideTraceWriter, 1);

  self->path = g_strdup (path);
  self->reserve_fd = -1;
  self->pending = g_array_new (FALSE, FALSE, sizeof (Op));
  g_array_set_clear_func (self->pending, (GDestroyNotify) op_clear);
  self->end_rows = g_array_new (FALSE, FALSE, sizeof (Op));
  g_array_set_clear_func (self->end_rows, (GDestroyNotify) op_clear);
  self->pending_limit = 256 * 1024;
  g_mutex_init (&self->mutex);
  g_cond_init (&self->wake_writer);
  g_cond_init (&self->batch_done);

  if (!writer_open_db (self, error))
    return NULL;

  self->thread = g_thread_new ("tide-writer", writer_thread_main, self);
  return g_steal_pointer (&self);
}

/* Appends one row; waits only when the writer is pending_limit rows behind. */
static void
writer_push (TideTraceWriter *self,
             const Op        *op)
{
  g_return_if_fail (!self->finished);

  g_mutex_lock (&self->mutex);
  while (self->pending->len >= self->pending_limit && !self->stopping && self->stop_errno == 0)
    {
      g_cond_signal (&self->wake_writer);
      g_cond_wait (&self->batch_done, &self->mutex);
    }
  if (self->stop_errno != 0)
    {
      if (op_describes_end (op))
        g_array_append_vals (self->end_rows, op, 1);
      else
        op_clear ((Op *) op);
      g_mutex_unlock (&self->mutex);
      return;
    }
  g_array_append_vals (self->pending, op, 1);
  if (self->pending->len == BATCH_WAKE_ROWS)
    g_cond_signal (&self->wake_writer);
  g_mutex_unlock (&self->mutex);
}

void
tide_trace_writer_set_meta (TideTraceWriter *self,
                            const char      *key,
                            const char      *value)
{
  Op op = { .type = OP_META };

  op.texts[0] = g_strdup (key);
  op.texts[1] = g_strdup (value);
  writer_push (self, &op);
}

void
tide_trace_writer_set_meta_int (TideTraceWriter *self,
                                const char      *key,
                                gint64           value)
{
  Op op = { .type = OP_META, .ints = { value } };

  op.texts[0] = g_strdup (key);
  writer_push (self, &op);
}

void
tide_trace_writer_add_process (TideTraceWriter      *self,
                               const TideProcessRow *row)
{
  Op op = { .type = OP_PROCESS,
            .ints = { row->id, row->pid, row->ppid, row->parent_id, row->start_ns,
                      row->sample_bytes, row->all_mode ? 1 : 0 } };

  op.texts[0] = g_strdup (row->exe ? row->exe : "");
  op.texts[1] = g_strdup (row->cmdline);
  writer_push (self, &op);
}

/* @end: (nullable): how it ended (NULL: unknown); exit_status in
 * processes is its shell status (tide_process_end_shell_status). */
void
tide_trace_writer_end_process (TideTraceWriter      *self,
                               gint64                process_id,
                               gint64                end_ns,
                               const TideProcessEnd *end,
                               gint64                dropped)
{
  static const TideProcessEnd unknown = { .kind = TIDE_END_UNKNOWN };
  const TideProcessEnd *e = end != NULL ? end : &unknown;
  Op op = { .type = OP_PROCESS_END,
            .ints = { process_id, end_ns, tide_process_end_shell_status (e), dropped } };
  Op cause = { .type = OP_PROCESS_END_CAUSE,
               .ints = { process_id, e->kind, e->kind == TIDE_END_EXITED ? e->exit_code : -1,
                         e->kind == TIDE_END_SIGNALED ? e->signal : 0, e->core_dumped ? 1 : 0,
                         e->oom, MAX (e->limit_bytes, 0) } };

  writer_push (self, &op);
  writer_push (self, &cause);
}

/* torch.distributed rank of a process, once it says it. */
void
tide_trace_writer_set_process_rank (TideTraceWriter *self,
                                    gint64           process_id,
                                    gint             rank)
{
  Op op = { .type = OP_PROCESS_RANK, .ints = { process_id, rank } };

  writer_push (self, &op);
}

/* The index of the DataLoader worker that a process is, once it says it. */
void
tide_trace_writer_set_process_worker (TideTraceWriter *self,
                                      gint64           process_id,
                                      gint             worker)
{
  Op op = { .type = OP_PROCESS_WORKER, .ints = { process_id, worker } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_thread (TideTraceWriter *self,
                              gint64           id,
                              gint64           process_id,
                              gint64           tid,
                              const char      *name)
{
  Op op = { .type = OP_THREAD, .ints = { id, process_id, tid } };

  op.texts[0] = g_strdup (name);
  writer_push (self, &op);
}

void
tide_trace_writer_add_mapping (TideTraceWriter *self,
                               gint64           process_id,
                               guint64          start,
                               guint64          end,
                               guint64          load_bias,
                               const char      *path,
                               gint64           ts_ns)
{
  Op op = { .type = OP_MAPPING,
            .ints = { process_id, (gint64) start, (gint64) end, (gint64) load_bias, ts_ns } };

  op.texts[0] = g_strdup (path);
  writer_push (self, &op);
}

void
tide_trace_writer_add_frame (TideTraceWriter    *self,
                             const TideFrameRow *row)
{
  Op op = { .type = OP_FRAME, .ints = { row->id, row->kind, row->line, row->module_offset } };

  op.texts[0] = g_strdup (row->function);
  op.texts[1] = g_strdup (row->file);
  op.texts[2] = g_strdup (row->module);
  writer_push (self, &op);
}

void
tide_trace_writer_add_module (TideTraceWriter *self,
                              const char      *path,
                              const char      *build_id)
{
  Op op = { .type = OP_MODULE };

  op.texts[0] = g_strdup (path);
  op.texts[1] = g_strdup (build_id);
  writer_push (self, &op);
}

/**
 * tide_trace_writer_add_stack:
 * @id: the stack's id, which no other stack and no stack node has
 * @frame_ids: (array length=n_frames): its frames, outermost first
 *
 * Adds a stack, one row whatever its depth.
 */
void
tide_trace_writer_add_stack (TideTraceWriter *self,
                             gint64           id,
                             const gint64    *frame_ids,
                             guint            n_frames)
{
  Op op = { .type = OP_STACK, .ints = { id } };

  op.texts[0] = tide_schema_stack_frames (frame_ids, n_frames);
  writer_push (self, &op);
}

void
tide_trace_writer_add_stack_node (TideTraceWriter *self,
                                  gint64           id,
                                  gint64           parent_id,
                                  gint64           frame_id,
                                  gint             depth)
{
  Op op = { .type = OP_STACK_NODE, .ints = { id, parent_id, frame_id, depth } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_scope (TideTraceWriter *self,
                             gint64           id,
                             gint64           process_id,
                             gint64           parent_id,
                             const char      *name,
                             const char      *path)
{
  Op op = { .type = OP_SCOPE, .ints = { id, process_id, parent_id } };

  op.texts[0] = g_strdup (name);
  op.texts[1] = g_strdup (path);
  writer_push (self, &op);
}

void
tide_trace_writer_add_step (TideTraceWriter *self,
                            gint64           id,
                            gint64           process_id,
                            gint64           number,
                            const char      *label,
                            gint64           start_ns,
                            gint64           end_ns)
{
  Op op = { .type = OP_STEP, .ints = { id, process_id, number, start_ns, end_ns } };

  op.texts[0] = g_strdup (label ? label : "");
  writer_push (self, &op);
}

void
tide_trace_writer_add_allocation (TideTraceWriter    *self,
                                  const TideAllocRow *row)
{
  Op op = { .type = OP_ALLOC,
            .ints = { row->process_id, row->thread_id, row->kind, row->device,
                      (gint64) row->address, (gint64) row->size, row->alloc_ns, row->free_ns,
                      row->stack_id, row->scope_id },
            .real = row->weight };

  writer_push (self, &op);
}

void
tide_trace_writer_add_counter (TideTraceWriter *self,
                               gint64           process_id,
                               gint             counter,
                               gint             device,
                               gint64           ts_ns,
                               gint64           value)
{
  Op op = { .type = OP_COUNTER, .ints = { process_id, counter, device, ts_ns, value } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_transfer (TideTraceWriter       *self,
                                const TideTransferRow *row)
{
  Op op = { .type = OP_TRANSFER,
            .ints = { row->process_id, row->direction, row->device, row->bytes, row->start_ns,
                      row->duration_ns, row->stack_id, row->scope_id } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_alloc_failure (TideTraceWriter            *self,
                                     const TideAllocFailureRow  *row)
{
  Op op = { .type = OP_ALLOC_FAILURE,
            .ints = { row->process_id, row->ts_ns, row->error, row->device, row->bytes,
                      row->allocated_bytes, row->stack_id, row->scope_id } };

  op.texts[0] = g_strdup (row->api);
  writer_push (self, &op);
}

/* A later allocation on @device succeeded: the failures before it were
 * survived. */
void
tide_trace_writer_recover_failures (TideTraceWriter *self,
                                    gint64           process_id,
                                    gint             device)
{
  Op op = { .type = OP_FAILURES_RECOVERED, .ints = { process_id, device } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_residency (TideTraceWriter        *self,
                                 const TideResidencyRow *row)
{
  Op op = { .type = OP_RESIDENCY,
            .ints = { row->step_id, row->stack_id, row->scope_id, row->device,
                      row->resident_bytes, row->resident_born_bytes } };

  writer_push (self, &op);
}

/* What the step's groups held in all: the step's rows of step_residency
 * are then only those that changed (tide-schema.c). */
void
tide_trace_writer_add_residency_total (TideTraceWriter *self,
                                       gint64           step_id,
                                       gint64           resident_bytes,
                                       gint64           resident_born_bytes)
{
  Op op = { .type = OP_RESIDENCY_TOTAL,
            .ints = { step_id, resident_bytes, resident_born_bytes } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_cow_source (TideTraceWriter *self,
                                  gint64           process_id,
                                  gint64           ts_ns,
                                  gint64           parent_id,
                                  gint64           stack_id,
                                  gint64           bytes)
{
  Op op = { .type = OP_COW_SOURCE, .ints = { process_id, ts_ns, parent_id, stack_id, bytes } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_series (TideTraceWriter     *self,
                              const TideSeriesRow *row)
{
  Op op = { .type = OP_SERIES,
            .ints = { row->step_id, row->stack_id, row->scope_id, row->device,
                      row->live_bytes, row->live_count } };

  writer_push (self, &op);
}

void
tide_trace_writer_add_step_totals (TideTraceWriter      *self,
                                   const TideStepTotals *totals)
{
  Op op = { .type = OP_STEP_STATS,
            .ints = { totals->step_id, totals->heap_live, totals->mapped_live,
                      totals->device_live, totals->retained_bytes, totals->retained_count } };

  writer_push (self, &op);
}

/* Returns once every row added before the call is committed. */
void
tide_trace_writer_flush (TideTraceWriter *self)
{
  guint64 target;

  g_mutex_lock (&self->mutex);
  target = ++self->flushes_wanted;
  g_cond_signal (&self->wake_writer);
  while (self->flushes_done < target && self->thread != NULL)
    {
      g_cond_signal (&self->wake_writer);
      g_cond_wait (&self->batch_done, &self->mutex);
    }
  g_mutex_unlock (&self->mutex);
}

static void
writer_stop_thread (TideTraceWriter *self)
{
  g_mutex_lock (&self->mutex);
  self->stopping = TRUE;
  g_cond_signal (&self->wake_writer);
  g_mutex_unlock (&self->mutex);
  g_thread_join (self->thread);
  self->thread = NULL;
}

/* What the meta of a trace that ends early says (tide-trace.c reads it). */
static const char *
stop_reason (int err)
{
  switch (err)
    {
    case ENOSPC:
      return "disk full";
    case EDQUOT:
      return "disk quota exceeded";
    case EFBIG:
      return "file size limit reached";
    case EIO:
      return "I/O error";
    default:
      return g_strerror (err);
    }
}

/* Leaves one self-contained file: the WAL copied in and the file back in
 * rollback mode, so that it opens read-only anywhere.  Leaving WAL mode
 * needs the file to itself, which SQLite asks for once, without its busy
 * handler: a reader that has the file open (the app following a live
 * capture) refuses it for as long as it keeps it open, so the switch is
 * tried again until the busy timeout ran out. */
static gboolean
writer_leave_wal (TideTraceWriter  *self,
                  GError          **error)
{
  gint64 deadline;
  int rc;

  if (!tide_sqlite_exec (self->db, "PRAGMA wal_checkpoint(TRUNCATE);", error))
    return FALSE;
  deadline = g_get_monotonic_time () + WRITER_BUSY_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
  while ((rc = sqlite3_exec (self->db, "PRAGMA journal_mode = DELETE;", NULL, NULL, NULL))
         == SQLITE_BUSY && g_get_monotonic_time () < deadline)
    g_usleep (10 * G_TIME_SPAN_MILLISECOND);
  if (rc != SQLITE_OK)
    {
      tide_sqlite_set_error (error, self->db, "cannot run statement");
      return FALSE;
    }
  return TRUE;
}

/* The end of a trace whose writes were refused: the reserve goes back to
 * the file system, the kept end rows and the reason are written, and the
 * WAL is folded into the database.  Each of these may fail again (a full
 * disk without a reserve, a file at its size limit): the trace is still
 * whole at its last commit, as a database and its WAL. */
static void
writer_finish_early (TideTraceWriter *self)
{
  g_autoptr(GArray) rows = g_steal_pointer (&self->end_rows);
  g_autoptr(GError) error = NULL;
  Op op = { .type = OP_META, .ints = { self->stop_ns } };

  self->end_rows = g_array_new (FALSE, FALSE, sizeof (Op));
  writer_release_reserve (self);
  op.texts[0] = g_strdup ("stopped_ns");
  g_array_append_vals (rows, &op, 1);
  op = (Op) { .type = OP_META };
  op.texts[0] = g_strdup ("stopped_reason");
  op.texts[1] = g_strdup (stop_reason (self->stop_errno));
  g_array_append_vals (rows, &op, 1);
  if (!writer_write_batch (self, rows, &error) || !writer_commit (self, &error))
    {
      if (!sqlite3_get_autocommit (self->db))
        sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      self->in_transaction = FALSE;
      g_clear_error (&error);
    }
  if (!writer_leave_wal (self, &error))
    g_debug ("the trace that ends early keeps its WAL: %s", error->message);
}

/* Writes what is pending, builds the summaries, marks the trace complete and
 * leaves one self-contained file (no -wal beside it).  A trace whose writes
 * the file system refused is kept as it is, incomplete: finish succeeds,
 * and tide_trace_writer_describe_early_end says what happened. */
gboolean
tide_trace_writer_finish (TideTraceWriter  *self,
                          GError          **error)
{
  writer_stop_thread (self);
  self->finished = TRUE;

  if (self->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->error));
      return FALSE;
    }
  if (self->stop_errno != 0)
    {
      writer_finish_early (self);
      return TRUE;
    }

  writer_release_reserve (self);
  /* Complete only once out of WAL mode: a reader that sees a complete
   * trace keeps the file open for good (the app's final view), which
   * would keep the writer from leaving it. */
  return tide_analysis_build (self->db, error) &&
         writer_leave_wal (self, error) &&
         tide_sqlite_exec (self->db,
                           "INSERT OR REPLACE INTO meta (key, value) VALUES ('complete', 1);",
                           error);
}

/**
 * tide_trace_writer_describe_early_end:
 *
 * After a finish that kept a trace whose writes were refused, one line for
 * the user: what happened, when, and which steps the trace holds ("disk
 * full at 41.2 s; the trace holds steps 1-57").  %NULL for a trace that
 * was written to its end.
 */
char *
tide_trace_writer_describe_early_end (TideTraceWriter *self)
{
  g_autofree char *what = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 first = 0, last = 0;

  if (!self->finished || self->stop_errno == 0)
    return NULL;
  what = _tide_trace_describe_early_end_db (self->db);
  if (what == NULL)
    {
      gint64 start_ns = tide_sqlite_meta_int (self->db, "start_ns");

      what = g_strdup_printf ("%s at %.1f s", stop_reason (self->stop_errno),
                              start_ns > 0 ? (self->stop_ns - start_ns) / 1e9 : 0.0);
    }
  stmt = tide_sqlite_prepare (self->db, "SELECT min (number), max (number) FROM steps", "", NULL);
  if (stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW)
    {
      first = sqlite3_column_int64 (stmt, 0);
      last = sqlite3_column_int64 (stmt, 1);
    }
  sqlite3_finalize (stmt);
  if (last == 0)
    return g_strdup_printf ("%s; the trace holds no steps", what);
  if (first == last)
    return g_strdup_printf ("%s; the trace holds step %" G_GINT64_FORMAT, what, last);
  return g_strdup_printf ("%s; the trace holds steps %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT,
                          what, first, last);
}
