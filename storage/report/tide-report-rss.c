/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Resident memory in words.  A fork's child's copy-on-write is its last
 * cow_bytes value; its source is the parent's stack whose recorded blocks
 * cover the most of the copied pages at the recorder's last attribution
 * (cow_sources).
 */
#include "config.h"

#include <string.h>

#include "tide-processes.h"
#include "tide-report-format.h"
#include "tide-report-private.h"
#include "tide-report-rss.h"
#include "tide-saturate.h"
#include "tide-sorted.h"


void
tide_cow_row_free (TideCowRow *row)
{
  if (row == NULL)
    return;
  tide_process_label_clear (&row->process);
  g_free (row->source);
  g_free (row);
}

/* The pages that a child holds because its parent wrote or freed its own,
 * from which its line of copies says so. */
#define COW_LEFT_SAID_BYTES (G_GINT64_CONSTANT (1) << 20)

/* "file:line (function)" of the headline of @frames, else its
 * description. */
static char *
describe_source (GPtrArray *frames)
{
  gint i = tide_frames_find_headline (frames);
  const TideFrame *f;

  if (i < 0)
    return g_strdup ("(a stack without frames)");
  f = g_ptr_array_index (frames, i);
  if (f->kind != TIDE_FRAME_MISSING && f->function != NULL && f->file != NULL && f->line > 0)
    {
      g_autofree char *file = tide_frame_dup_file_name (f);

      return g_strdup_printf ("%s:%d (%s)", file, f->line, f->function);
    }
  return tide_frame_describe (f);
}

/* How many of a child's largest sources are looked at for one that is
 * not the profiler's: as many as the recorder keeps. */
#define COW_SOURCES_LOOKED_AT 16

/* The largest source of @row's last attribution that is the program's:
 * the blocks that Tidemark's own Python package allocated as the parent
 * started (its code objects, which a worker's calls into its hooks
 * write) are not what the user asks about, and are said only where they
 * are all there is. */
static gboolean
load_source (TideTrace   *trace,
             TideCowRow  *row,
             GError     **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
      "SELECT stack_id, bytes FROM cow_sources"
      " WHERE process_id = ?1 AND ts_ns = (SELECT max (ts_ns) FROM cow_sources"
      "                                    WHERE process_id = ?1)"
      "   AND stack_id IS NOT NULL"
      " ORDER BY bytes DESC, stack_id LIMIT " G_STRINGIFY (COW_SOURCES_LOOKED_AT),
      TIDE_REPORT_WHAT, error);
  gint64 own_bytes = 0;
  int rc = SQLITE_DONE;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, row->process.id);
  while (row->source == NULL && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GPtrArray) frames = tide_report_frames (trace, sqlite3_column_int64 (stmt, 0),
                                                        error);

      if (frames == NULL)
        {
          sqlite3_finalize (stmt);
          return FALSE;
        }
      if (tide_frames_from_tidemark_start (frames))
        {
          own_bytes = MAX (own_bytes, sqlite3_column_int64 (stmt, 1));
          continue;
        }
      row->source_stack_id = sqlite3_column_int64 (stmt, 0);
      row->source_bytes = sqlite3_column_int64 (stmt, 1);
      row->source = describe_source (frames);
    }
  if (row->source != NULL)
    rc = SQLITE_DONE;
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return FALSE;
  if (row->source == NULL && own_bytes > 0)
    {
      row->source_bytes = own_bytes;
      row->source = g_strdup ("Tidemark's own start-up (its Python package)");
    }
  return TRUE;
}

static gboolean
load_copied (TideTrace  *trace,
             GPtrArray  *rows,
             GError    **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
      "SELECT id, pid, copied - coalesce (left, 0), coalesce (left, -1) FROM"
      " (SELECT p.id, p.pid,"
      "   (SELECT c.value FROM counters c WHERE c.process_id = p.id"
      "    AND c.counter = " TIDE_SQL_COUNTER_COW_BYTES " ORDER BY c.ts_ns DESC LIMIT 1) AS copied,"
      "   (SELECT c.value FROM counters c WHERE c.process_id = p.id"
      "    AND c.counter = " TIDE_SQL_COUNTER_COW_LEFT_BYTES " ORDER BY c.ts_ns DESC LIMIT 1) AS left"
      "  FROM processes p)"
      " WHERE copied - coalesce (left, 0) > 0 ORDER BY id", TIDE_REPORT_WHAT, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideCowRow *row = g_new0 (TideCowRow, 1);

      row->process.id = sqlite3_column_int64 (stmt, 0);
      row->process.pid = sqlite3_column_int64 (stmt, 1);
      row->copied_bytes = sqlite3_column_int64 (stmt, 2);
      row->left_bytes = sqlite3_column_int64 (stmt, 3);
      g_ptr_array_add (rows, row);
    }
  return tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error);
}

/**
 * tide_report_cow:
 *
 * Returns: (transfer full): a #TideCowRow per process that copied pages
 *   of its parent, in process order
 */
GPtrArray *
tide_report_cow (TideTrace  *trace,
                 GError    **error)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_cow_row_free);
  g_autoptr(GPtrArray) processes = NULL;
  sqlite3 *db = _tide_trace_get_db (trace);

  if (!tide_sqlite_has (db, "table", "cow_sources"))
    return g_steal_pointer (&rows);
  if ((processes = tide_trace_list_processes (trace, error)) == NULL ||
      !load_copied (trace, rows, error))
    return NULL;
  for (guint i = 0; i < rows->len; i++)
    {
      TideCowRow *row = g_ptr_array_index (rows, i);
      tide_process_label_set (&row->process, tide_processes_find (processes, row->process.id));
      if (!load_source (trace, row, error))
        return NULL;
    }
  return g_steal_pointer (&rows);
}

/* The source's own bytes are said: a worker's copies are often spread
 * over many of its parent's stacks, and the largest may cover little of
 * them. */
char *
tide_cow_row_describe (const TideCowRow *row)
{
  g_autofree char *copied = tide_format_delta (row->copied_bytes);
  g_autofree char *covered = NULL;
  g_autofree char *left = NULL;
  g_autofree char *line = NULL;

  if (row->source == NULL)
    line = g_strdup_printf ("%s: %s copied on write, from pages of its parent that no recorded "
                            "block covers", row->process.role, copied);
  else
    {
      covered = tide_format_bytes (row->source_bytes);
      line = g_strdup_printf ("%s: %s copied on write, %s of it from the parent's blocks "
                              "allocated at %s", row->process.role, copied, covered, row->source);
    }
  /* Pages its parent wrote are as much its own, but no write of its made
   * them so: a worker's "copies" of weights that the optimizer updates.
   * The few pages of a stack or a buffer that the parent writes on its
   * way are not news. */
  if (row->left_bytes < COW_LEFT_SAID_BYTES)
    return g_steal_pointer (&line);
  left = tide_format_bytes (row->left_bytes);
  return g_strdup_printf ("%s; %s more no longer shared, its parent having written or freed "
                          "them", line, left);
}

/* ---- the classes at each step's start and end ------------------------------ */

static const gint step_class_counters[TIDE_STEP_N_CLASSES] = {
  [TIDE_STEP_PSS] = TIDE_COUNTER_PSS,
  [TIDE_STEP_USS] = TIDE_COUNTER_USS,
  [TIDE_STEP_ANON] = TIDE_COUNTER_RSS_ANON,
  [TIDE_STEP_FILE] = TIDE_COUNTER_RSS_FILE,
  [TIDE_STEP_SHMEM] = TIDE_COUNTER_RSS_SHMEM,
  [TIDE_STEP_ALLOC_FREE] = TIDE_COUNTER_ALLOC_FREE,
  [TIDE_STEP_COW] = TIDE_COUNTER_COW_BYTES,
  [TIDE_STEP_SHARED] = TIDE_COUNTER_RSS_SHARED_PAGES,
  [TIDE_STEP_JEMALLOC_FREE] = TIDE_COUNTER_JEMALLOC_FREE,
  [TIDE_STEP_TCMALLOC_FREE] = TIDE_COUNTER_TCMALLOC_FREE,
  [TIDE_STEP_MAPPED] = TIDE_COUNTER_MAPPED,
  [TIDE_STEP_PY_ARENA_FREE] = TIDE_COUNTER_PY_ARENA_FREE,
  [TIDE_STEP_THREAD_STACKS] = TIDE_COUNTER_THREAD_STACKS,
  [TIDE_STEP_LIB_DATA] = TIDE_COUNTER_LIB_DATA,
  [TIDE_STEP_COW_LEFT] = TIDE_COUNTER_COW_LEFT_BYTES,
  [TIDE_STEP_PRELOAD_OWN] = TIDE_COUNTER_PRELOAD_OWN,
  [TIDE_STEP_PY_ARENA_ABSENT] = TIDE_COUNTER_PY_ARENA_ABSENT,
  [TIDE_STEP_ALLOC_FREE_ABSENT] = TIDE_COUNTER_ALLOC_FREE_ABSENT,
  [TIDE_STEP_PY_UNHOOKED] = TIDE_COUNTER_PY_UNHOOKED,
  [TIDE_STEP_INHERITED_FREED] = TIDE_COUNTER_INHERITED_FREED,
};

G_STATIC_ASSERT (TIDE_STEP_N_CLASSES <= 32);  /* TideStepRow.class_read_at_end */

typedef struct
{
  gint64 ts_ns;
  gint64 value;
} Sample;

static GArray *
load_samples (TideTrace     *trace,
              sqlite3_stmt  *stmt,
              gint64         process_id,
              gint           counter,
              GError       **error)
{
  g_autoptr(GArray) samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  int rc;

  sqlite3_reset (stmt);
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int (stmt, 2, counter);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Sample s = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1) };

      g_array_append_val (samples, s);
    }
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, _tide_trace_get_db (trace), TIDE_REPORT_WHAT);
      return NULL;
    }
  return g_steal_pointer (&samples);
}

/* How many samples were taken at or before @ts_ns. */
static guint
count_at (const GArray *samples,
          gint64        ts_ns)
{
  return tide_sorted_count_at_most (samples->data, samples->len, sizeof (Sample),
                                    G_STRUCT_OFFSET (Sample, ts_ns), ts_ns);
}

/* The last value sampled at or before @ts_ns, -1 when none was. */
static gint64
value_at (const GArray *samples,
          gint64        ts_ns)
{
  guint n = count_at (samples, ts_ns);

  return n > 0 ? g_array_index (samples, Sample, n - 1).value : -1;
}

/* The rows of @rows with the lowest and the highest step number. */
static void
end_rows (GPtrArray    *rows,
          TideStepRow **first,
          TideStepRow **last)
{
  *first = *last = g_ptr_array_index (rows, 0);
  for (guint i = 1; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      if (r->number < (*first)->number)
        *first = r;
      if (r->number > (*last)->number)
        *last = r;
    }
}

/* When the private memory (USS) was last read, where that was after
 * @after_ns; else -1.  The recorder takes a process's last reading as it
 * exits, and reads its classes no more after it: after its last step's
 * end, or within it where the process ended before its step did (a
 * worker measured at its parent's steps). */
static gint64
exit_read_after (const GArray *uss,
                 gint64        after_ns)
{
  gint64 ts_ns = uss->len > 0 ? g_array_index (uss, Sample, uss->len - 1).ts_ns : -1;

  return ts_ns > after_ns ? ts_ns : -1;
}

/* The last value of @counter that @process_id had at @ts_ns, -1 when none;
 * FALSE on an error.  One look-up in counters_by_time: the heap's counter
 * is written at every poll, too many samples to load for one value. */
static gboolean
counter_at (TideTrace     *trace,
            sqlite3_stmt  *at,
            gint64         process_id,
            gint           counter,
            gint64         ts_ns,
            gint64        *value,
            GError       **error)
{
  int rc;

  sqlite3_reset (at);
  sqlite3_bind_int64 (at, 1, process_id);
  sqlite3_bind_int (at, 2, counter);
  sqlite3_bind_int64 (at, 3, ts_ns);
  rc = sqlite3_step (at);
  *value = rc == SQLITE_ROW ? sqlite3_column_int64 (at, 0) : -1;
  if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    return TRUE;
  tide_sqlite_set_error (error, _tide_trace_get_db (trace), TIDE_REPORT_WHAT);
  return FALSE;
}

/* A child's copy-on-write is the pages it copied itself: those it holds
 * as it inherited them, its alone because its parent wrote or freed its
 * own, are no longer shared (TIDE_STEP_COW_LEFT, where the recorder could
 * tell them apart). */
static void
keep_own_copies (gint64 *classes)
{
  /* A trace is untrusted: never fewer than none. */
  if (classes[TIDE_STEP_COW] >= 0 && classes[TIDE_STEP_COW_LEFT] > 0)
    classes[TIDE_STEP_COW] = MAX (classes[TIDE_STEP_COW] - classes[TIDE_STEP_COW_LEFT], 0);
}

/* Whether @process_id ran before the recording began, in a trace that
 * `tidemark attach` wrote (@attach_trace): it found it running.  FALSE on
 * an error. */
static gboolean
ran_before_attach (TideTrace     *trace,
                   gboolean       attach_trace,
                   gint64         process_id,
                   gboolean      *attached,
                   GError       **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  sqlite3_stmt *stmt;
  int rc;

  *attached = FALSE;
  if (!attach_trace)
    return TRUE;
  stmt = tide_sqlite_prepare (db, "SELECT start_ns FROM processes WHERE id = ?1",
                              TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, process_id);
  if ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    *attached = sqlite3_column_int64 (stmt, 0) <= tide_trace_get_start_ns (trace);
  return tide_sqlite_finish (db, stmt, rc == SQLITE_ROW ? SQLITE_DONE : rc, TIDE_REPORT_WHAT,
                             error);
}

/* @r, the first step of a process that ran before attach: its classes at
 * its start are its first reading, where one came before its end (attach
 * reads the process as it begins), not nothing. */
static void
start_at_attach (TideStepRow  *r,
                 TideStepClass c,
                 const GArray *samples,
                 gint64        end_ns)
{
  const Sample *first = samples->len > 0 ? &g_array_index (samples, Sample, 0) : NULL;

  r->from_attach = TRUE;
  if (r->class_start[c] < 0 && first != NULL && first->ts_ns < end_ns)
    r->class_start[c] = first->value;
}

/* @rows: those of one process that need their classes. */
static gboolean
add_process_classes (TideTrace     *trace,
                     gboolean       attach_trace,
                     sqlite3_stmt  *stmt,
                     sqlite3_stmt  *at,
                     GPtrArray     *rows,
                     GError       **error)
{
  gint64 origin = tide_trace_get_start_ns (trace);
  gint64 process_id = ((TideStepRow *) g_ptr_array_index (rows, 0))->process.id;
  TideStepRow *first, *last;
  gint64 exit_read_ns = -1;
  gboolean attached;

  end_rows (rows, &first, &last);
  if (!ran_before_attach (trace, attach_trace, process_id, &attached, error))
    return FALSE;

  /* The USS first: its last reading's time picks every class's last value. */
  for (gint k = 0; k < TIDE_STEP_N_CLASSES; k++)
    {
      gint c = (k + TIDE_STEP_USS) % TIDE_STEP_N_CLASSES;
      g_autoptr(GArray) samples = load_samples (trace, stmt, process_id, step_class_counters[c],
                                                error);

      if (samples == NULL)
        return FALSE;
      if (c == TIDE_STEP_USS)
        exit_read_ns = exit_read_after (samples, origin + last->start_ns);
      last->class_exit[c] = exit_read_ns >= 0 ? value_at (samples, exit_read_ns) : -1;
      for (guint i = 0; i < rows->len; i++)
        {
          TideStepRow *r = g_ptr_array_index (rows, i);
          guint by_end;

          r->class_start[c] = value_at (samples, origin + r->start_ns);
          r->class_first[c] = samples->len > 0 ? g_array_index (samples, Sample, 0).value : -1;
          r->class_end[c] = value_at (samples, origin + r->start_ns + r->duration_ns);
          /* Read at the step's end: the recorder writes a reading that it
           * takes at a step end at the step's time, to the nanosecond. */
          by_end = count_at (samples, origin + r->start_ns + r->duration_ns);
          if (by_end > count_at (samples, origin + r->start_ns + r->duration_ns - 1))
            r->class_read_at_end |= 1u << c;
          if (c == TIDE_STEP_USS)
            r->private_later = by_end < samples->len;
        }
      if (attached)
        start_at_attach (first, c, samples, origin + first->start_ns + first->duration_ns);
    }
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      keep_own_copies (r->class_start);
      keep_own_copies (r->class_end);
      keep_own_copies (r->class_first);
    }
  keep_own_copies (last->class_exit);
  last->exit_read = exit_read_ns >= 0;
  last->exit_read_ns = exit_read_ns;
  last->heap_exit = -1;
  if (last->exit_read && !counter_at (trace, at, process_id, TIDE_COUNTER_HEAP_LIVE, exit_read_ns,
                                      &last->heap_exit, error))
    return FALSE;
  for (guint i = 0; i < rows->len; i++)
    ((TideStepRow *) g_ptr_array_index (rows, i))->has_classes = TRUE;
  return TRUE;
}

/**
 * _tide_report_add_classes:
 *
 * Sets the RSS classes at its step's start and end of each row that has
 * none yet: one read of each class's samples per process, whatever the
 * number of steps.
 */
gboolean
_tide_report_add_classes (TideTrace  *trace,
                          GPtrArray  *rows,
                          GError    **error)
{
  /* process_id -> its rows that need classes */
  g_autoptr(GHashTable) todo = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                                      (GDestroyNotify) g_ptr_array_unref);
  sqlite3 *db = _tide_trace_get_db (trace);
  g_autofree char *mode = NULL;
  gboolean attach_trace;
  sqlite3_stmt *stmt, *at;
  GHashTableIter iter;
  GPtrArray *mine;
  gboolean ok = TRUE;

  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      if (r->has_classes)
        continue;
      if ((mine = g_hash_table_lookup (todo, &r->process.id)) == NULL)
        g_hash_table_insert (todo, &r->process.id, mine = g_ptr_array_new ());
      g_ptr_array_add (mine, r);
    }
  if (g_hash_table_size (todo) == 0)
    return TRUE;
  /* Read once for all the processes: ran_before_attach() asks it. */
  mode = tide_trace_dup_meta (trace, "mode");
  attach_trace = g_strcmp0 (mode, "attach") == 0;
  stmt = tide_sqlite_prepare (db,
      "SELECT ts_ns, value FROM counters WHERE process_id = ?1 AND counter = ?2"
      " AND device = -1 ORDER BY ts_ns", TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  at = tide_sqlite_prepare (db,
      "SELECT value FROM counters WHERE process_id = ?1 AND counter = ?2 AND device = -1"
      " AND ts_ns <= ?3 ORDER BY ts_ns DESC LIMIT 1", TIDE_REPORT_WHAT, error);
  if (at == NULL)
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }
  g_hash_table_iter_init (&iter, todo);
  while (ok && g_hash_table_iter_next (&iter, NULL, (gpointer *) &mine))
    ok = add_process_classes (trace, attach_trace, stmt, at, mine, error);
  sqlite3_finalize (at);
  sqlite3_finalize (stmt);
  return ok;
}

/* ---- a step's change in words ----------------------------------------------- */

/* Each term's words in a step's change, and its column in CSV and JSON. */
static const struct
{
  const char *name;
  const char *column;
} rss_terms[TIDE_RSS_N_TERMS] = {
  [TIDE_RSS_COW] = { "copy-on-write", "cow_bytes" },
  [TIDE_RSS_HEAP] = { "heap", "heap_bytes" },
  [TIDE_RSS_ALLOC_FREE] = { "allocator free", "alloc_free_bytes" },
  [TIDE_RSS_FILE] = { "file-backed", "file_bytes" },
  [TIDE_RSS_SHMEM] = { "shmem", "shmem_bytes" },
  [TIDE_RSS_SHARING] = { "no longer shared", "sharing_bytes" },
  [TIDE_RSS_PY_ARENA_FREE] = { "Python arenas free", "py_arena_free_bytes" },
  [TIDE_RSS_THREAD_STACKS] = { "thread stacks", "thread_stacks_bytes" },
  [TIDE_RSS_LIB_DATA] = { "library data", "lib_data_bytes" },
  [TIDE_RSS_PRELOAD_OWN] = { "tidemark's own", "tidemark_own_bytes" },
  [TIDE_RSS_PY_UNHOOKED] = { "Python objects from before the hooks", "py_unhooked_bytes" },
  [TIDE_RSS_INHERITED_FREED] = { "inherited blocks freed", "inherited_freed_bytes" },
  [TIDE_RSS_UNEXPLAINED] = { "unexplained", "unexplained_bytes" },
};

/* A class's change from @from (-1: not sampled yet, nothing) to the
 * row's end. */
static gint64
class_change_from (const TideStepRow *r,
                   TideStepClass      cls,
                   gint64             from)
{
  if (!r->has_classes || r->class_end[cls] < 0)
    return 0;
  return r->class_end[cls] - MAX (from, 0);
}

/* A class's change over the row's step; a class not sampled by the step
 * start was not there yet. */
static gint64
class_delta (const TideStepRow *r,
             TideStepClass      cls)
{
  return class_change_from (r, cls, r->class_start[cls]);
}

/* Resident bytes of the recorded blocks where the recorder measured them
 * at this step's end and the previous one, else their live bytes. */
static gint64
heap_delta (const TideStepRow *r,
            const TideStepRow *prev)
{
  if (r->has_resident && (prev == NULL || prev->has_resident))
    return tide_sat_sub (r->resident_explained, prev != NULL ? prev->resident_explained : 0);
  return tide_sat_add (r->heap_delta, class_delta (r, TIDE_STEP_MAPPED));
}

/* Resident bytes of recorded mappings may be file or shmem pages, which
 * have terms of their own: the heap is counted within the anonymous change
 * that the allocator's free memory leaves, and never past it. */
static gint64
heap_within_anon (gint64 heap,
                  gint64 anon_room)
{
  if ((heap > 0) != (anon_room > 0) || heap == 0 || anon_room == 0)
    return 0;
  return heap > 0 ? MIN (heap, anon_room) : MAX (heap, anon_room);
}

/* A class's change since a fork, for the child's first row: what its
 * allocator and its Python arenas held free at the fork was on its
 * parent's pages, shared, and the child's first value is that one (the
 * preload sends its allocator's at the fork, the recorder writes its
 * arenas' as the child starts). */
static gint64
delta_since_fork (const TideStepRow *r,
                  TideStepClass      cls)
{
  return class_change_from (r, cls, r->class_first[cls]);
}

/* A class's change over a row: class_delta(), or delta_since_fork(). */
typedef gint64 (*ClassChange) (const TideStepRow *r,
                               TideStepClass      cls);

/* The terms of anonymous memory other than the heap, each a class's
 * change; an allocator's free bytes count on present pages, less the
 * change of those on pages not present (@absent: an allocator maps more
 * than it touches, and its free bytes count all it maps).  A class that
 * counts bytes gone (@gone) is a term of the opposite sign. */
static const struct
{
  TideRssTerm   term;
  TideStepClass cls;
  gint          absent;   /* TideStepClass, -1: none */
  gboolean      gone;
} anon_terms[] = {
  { TIDE_RSS_ALLOC_FREE, TIDE_STEP_ALLOC_FREE, TIDE_STEP_ALLOC_FREE_ABSENT, FALSE },
  { TIDE_RSS_PY_ARENA_FREE, TIDE_STEP_PY_ARENA_FREE, TIDE_STEP_PY_ARENA_ABSENT, FALSE },
  { TIDE_RSS_THREAD_STACKS, TIDE_STEP_THREAD_STACKS, -1, FALSE },
  { TIDE_RSS_LIB_DATA, TIDE_STEP_LIB_DATA, -1, FALSE },
  { TIDE_RSS_PRELOAD_OWN, TIDE_STEP_PRELOAD_OWN, -1, FALSE },
  { TIDE_RSS_PY_UNHOOKED, TIDE_STEP_PY_UNHOOKED, -1, FALSE },
  { TIDE_RSS_INHERITED_FREED, TIDE_STEP_INHERITED_FREED, -1, TRUE },
};

/* Sets the anon_terms of @e from @r, each class's change by @change. */
static void
explain_anon_terms (const TideStepRow  *r,
                    ClassChange         change,
                    TideRssExplanation *e)
{
  for (guint i = 0; i < G_N_ELEMENTS (anon_terms); i++)
    {
      gint64 term = change (r, anon_terms[i].cls);

      if (anon_terms[i].absent >= 0)
        term = r->has_classes && r->class_end[anon_terms[i].cls] >= 0
               ? tide_sat_sub (term, change (r, anon_terms[i].absent))
               : 0;
      e->terms[anon_terms[i].term] = anon_terms[i].gone ? tide_sat_sub (0, term) : term;
    }
}

/* A fork's child first sampled at this step's end: what it shares, and
 * its file and shmem pages, it inherited, and its private memory at fork
 * was nothing. */
static void
explain_since_fork (const TideStepRow  *r,
                    gint64              heap,
                    TideRssExplanation *e)
{
  e->since_fork = TRUE;
  e->base_delta = r->class_end[TIDE_STEP_USS];
  e->terms[TIDE_RSS_COW] = r->class_end[TIDE_STEP_COW];
  e->left_by_parent = MAX (r->class_end[TIDE_STEP_COW_LEFT], 0);
  e->terms[TIDE_RSS_SHARING] = e->left_by_parent;
  e->terms[TIDE_RSS_HEAP] = heap;
  explain_anon_terms (r, delta_since_fork, e);
}

/* Whether the row's base is its private memory (USS), read by its end. */
static gboolean
has_private_base (const TideStepRow *r)
{
  return r->has_classes && r->class_end[TIDE_STEP_USS] >= 0 &&
         r->class_end[TIDE_STEP_SHARED] >= 0;
}

/* What of the anonymous change @anon the terms of anonymous memory other
 * than the heap leave, saturating: every value comes from the trace. */
static gint64
anon_room (gint64        anon,
           const gint64 *terms)
{
  for (guint i = 0; i < G_N_ELEMENTS (anon_terms); i++)
    anon = tide_sat_sub (anon, terms[anon_terms[i].term]);
  return anon;
}

/* USS = RSS - shared pages, and RSS = anon + file + shmem: so the USS
 * moves by anon + file + shmem - shared, where copy-on-write is shared
 * pages gone private, and anon is the heap, the allocators' free memory
 * (malloc's, and what CPython's arenas hold that no object uses, on
 * present pages) and the rest.  @r: a step's row, or one made of several
 * (span_row()); @heap: the heap's change over it. */
static void
explain_row (const TideStepRow  *r,
             gint64              heap,
             TideRssExplanation *e)
{
  gint64 explained = 0;

  memset (e, 0, sizeof *e);
  e->first_step = e->last_step = r->number;
  e->rss_delta = r->has_rss ? r->rss_delta : 0;
  e->private_base = has_private_base (r);
  e->since_attach = e->private_base && r->from_attach;
  if (e->since_attach && r->class_start[TIDE_STEP_USS] < 0)
    {
      /* Attach read it first at this step's end: what it held then came
       * before the recording, and nothing tells it apart. */
      e->attach_base = TRUE;
      e->attach_uss = r->class_end[TIDE_STEP_USS];
      return;
    }
  if (e->private_base && r->class_start[TIDE_STEP_USS] < 0 && r->class_end[TIDE_STEP_COW] >= 0)
    explain_since_fork (r, heap, e);
  else
    {
      e->base_delta = e->private_base ? class_delta (r, TIDE_STEP_USS) : e->rss_delta;
      explain_anon_terms (r, class_delta, e);
      e->terms[TIDE_RSS_HEAP] = heap;
      if (r->has_classes && r->class_end[TIDE_STEP_ANON] >= 0)
        e->terms[TIDE_RSS_HEAP] = heap_within_anon (e->terms[TIDE_RSS_HEAP],
                                                    anon_room (class_delta (r, TIDE_STEP_ANON),
                                                               e->terms));
      e->terms[TIDE_RSS_FILE] = class_delta (r, TIDE_STEP_FILE);
      e->terms[TIDE_RSS_SHMEM] = class_delta (r, TIDE_STEP_SHMEM);
      if (e->private_base)
        {
          e->terms[TIDE_RSS_COW] = class_delta (r, TIDE_STEP_COW);
          e->terms[TIDE_RSS_SHARING] = tide_sat_sub (-class_delta (r, TIDE_STEP_SHARED),
                                                     e->terms[TIDE_RSS_COW]);
          e->left_by_parent = class_delta (r, TIDE_STEP_COW_LEFT);
        }
    }
  /* Saturating: every value comes from the trace. */
  for (gint t = 0; t < TIDE_RSS_UNEXPLAINED; t++)
    explained = tide_sat_add (explained, e->terms[t]);
  e->terms[TIDE_RSS_UNEXPLAINED] = tide_sat_sub (e->base_delta, explained);
}

/* A step whose private memory was not read at its end: its change is not
 * known on its own.  So is a step before the process's first reading, where
 * a later one comes (a first step end that the recorder read late, or
 * after the program had moved on): that reading explains it, from
 * nothing, with the steps up to it. */
static gboolean
is_pending (const TideStepRow *r)
{
  return (has_private_base (r) || (r->has_classes && r->class_end[TIDE_STEP_USS] < 0 &&
                                   r->private_later)) &&
         !tide_step_row_read_at_end (r, TIDE_STEP_USS);
}

/* The steps of one process since its last reading of private memory. */
typedef struct
{
  const TideStepRow *last;       /* its previous row, NULL before the first */
  const TideStepRow *last_read;  /* its last row read at its end, or NULL */
  GArray            *pending;    /* guint: indices of its pending rows */
  gint64             heap;       /* the heap's change over them */
  gint64             rss;        /* the RSS's change over them */
} ProcessSpan;

static void
process_span_free (ProcessSpan *span)
{
  g_array_unref (span->pending);
  g_free (span);
}

static gint
compare_numbers (gconstpointer a,
                 gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return x < y ? -1 : x > y;
}

/* "DataLoader workers 0 and 1", in the numbers' order, for names that
 * differ only by a final number; NULL for any others. */
static char *
join_numbered (GPtrArray *names)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GArray) numbers = g_array_new (FALSE, FALSE, sizeof (guint64));
  const char *first = g_ptr_array_index (names, 0);
  const char *space = strrchr (first, ' ');
  gsize prefix = space != NULL ? (gsize) (space - first) + 1 : 0;

  if (prefix == 0 || names->len < 2)
    return NULL;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      guint64 number;

      if (strncmp (name, first, prefix) != 0 ||
          !g_ascii_string_to_unsigned (name + prefix, 10, 0, G_MAXUINT64, &number, NULL))
        return NULL;
      g_array_append_val (numbers, number);
    }
  g_array_sort (numbers, compare_numbers);
  g_string_append_len (out, first, (gssize) prefix - 1);
  g_string_append (out, "s ");
  for (guint i = 0; i < numbers->len; i++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT,
                            i == 0 ? "" : i + 1 == numbers->len ? " and " : ", ",
                            g_array_index (numbers, guint64, i));
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* At most this many processes are named in a cause; the rest are counted. */
#define CAUSE_MAX_NAMES 4

/* "a", "a and b", "a, b and c", "a, b, c and 2 more". */
static char *
join_names (GPtrArray *names)
{
  g_autoptr(GString) out = g_string_new (NULL);
  char *numbered = join_numbered (names);
  guint shown = names->len <= CAUSE_MAX_NAMES ? names->len : CAUSE_MAX_NAMES - 1;

  if (numbered != NULL)
    return numbered;
  for (guint i = 0; i < shown; i++)
    g_string_append_printf (out, "%s%s", i == 0 ? "" : i + 1 == names->len ? " and " : ", ",
                            (const char *) g_ptr_array_index (names, i));
  if (shown < names->len)
    g_string_append_printf (out, " and %u more", names->len - shown);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
add_names (GPtrArray *names,
           GPtrArray *more)
{
  for (guint i = 0; more != NULL && i < more->len; i++)
    if (!g_ptr_array_find_with_equal_func (names, g_ptr_array_index (more, i), g_str_equal, NULL))
      g_ptr_array_add (names, g_ptr_array_index (more, i));
}

/* Names what moved @e's sharing term: the processes of the family of the
 * rows @pending (indices) and @i that ended in them (or after the last,
 * for a span up to the process's last reading), for pages no longer
 * shared, or started in them, for pages newly shared; and the pages that
 * a fork's child's parent wrote or freed. */
static void
name_sharing_cause (GPtrArray          *rows,
                    GArray             *pending,
                    guint               i,
                    TideRssExplanation *e)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GPtrArray) causes = g_ptr_array_new_with_free_func (g_free);
  gboolean ended = e->terms[TIDE_RSS_SHARING] > 0;
  g_autofree char *joined = NULL;

  if (e->terms[TIDE_RSS_SHARING] == 0)
    return;
  for (guint k = 0; k <= pending->len; k++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, k < pending->len
                                                      ? g_array_index (pending, guint, k) : i);

      add_names (names, ended ? r->kin_ended : r->kin_started);
      if (ended && e->to_exit_read)
        add_names (names, r->kin_ended_after);
    }
  if (names->len > 0)
    {
      joined = join_names (names);
      g_ptr_array_add (causes, g_strdup_printf ("%s %s", joined, ended ? "exited" : "started"));
    }
  if (ended && e->left_by_parent > 0)
    {
      g_autofree char *left = tide_format_bytes (e->left_by_parent);
      /* The term is the net change: other pages may have become shared
       * over the same steps, which a cause larger than its term says. */
      gint64 offset = tide_sat_sub (e->left_by_parent, e->terms[TIDE_RSS_SHARING]);
      g_autofree char *newly = offset > 0 ? tide_format_bytes (offset) : NULL;

      g_ptr_array_add (causes, newly != NULL
                               ? g_strdup_printf ("%s its parent wrote or freed, less %s newly "
                                                  "shared", left, newly)
                               : g_strdup_printf ("%s its parent wrote or freed", left));
    }
  if (causes->len == 0)
    return;
  g_ptr_array_add (causes, NULL);
  e->sharing_cause = g_strjoinv ("; ", (char **) causes->pdata);
}

static void
explanation_clear (TideRssExplanation *e)
{
  g_clear_pointer (&e->sharing_cause, g_free);
}

/* @r as the last step of a span that began after @read (the process's
 * last step read at its end) with step @first: the classes from that
 * reading to @r's end, @rss_before plus @r's change of RSS.  Without
 * @read, the span starts with the process, at nothing (since fork, for a
 * fork's child): not at its first step's start, where the last reading
 * may be one that the poll took long before, while the heap's change
 * counts from that step's start.  A process that ran before attach starts
 * at its first reading instead, which attach takes as it begins. */
static TideStepRow
span_row (const TideStepRow *read,
          const TideStepRow *first,
          const TideStepRow *r,
          gint64             rss_before)
{
  TideStepRow span = *r;

  span.from_attach = read == NULL && first->from_attach;
  for (gint c = 0; c < TIDE_STEP_N_CLASSES; c++)
    span.class_start[c] = read != NULL ? read->class_end[c]
                          : span.from_attach ? first->class_start[c] : -1;
  span.rss_delta = tide_sat_add (rss_before, r->rss_delta);
  return span;
}

/* What the heap (recorded blocks, and recorded mappings) did after @last's
 * end, up to the process's last reading. */
static gint64
heap_after_last_step (const TideStepRow *last)
{
  gint64 heap = 0;

  if (last->heap_exit >= 0)
    heap = tide_sat_add (heap, tide_sat_sub (last->heap_exit, last->heap_end));
  if (last->class_exit[TIDE_STEP_MAPPED] >= 0)
    heap = tide_sat_add (heap, tide_sat_sub (last->class_exit[TIDE_STEP_MAPPED],
                                             MAX (last->class_end[TIDE_STEP_MAPPED], 0)));
  return heap;
}

/* What the RSS (anon + file + shmem) did after @last's end, up to the
 * process's last reading; 0 where a class is missing at either. */
static gint64
rss_after_last_step (const TideStepRow *last)
{
  static const TideStepClass parts[] = { TIDE_STEP_ANON, TIDE_STEP_FILE, TIDE_STEP_SHMEM };
  gint64 change = 0;

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      if (last->class_exit[parts[i]] < 0 || last->class_end[parts[i]] < 0)
        return 0;
      change = tide_sat_add (change, tide_sat_sub (last->class_exit[parts[i]],
                                                   last->class_end[parts[i]]));
    }
  return change;
}

/* A process whose last steps no step end read: its last reading, which the
 * recorder takes as the process exits, explains them, with what the
 * process did between its last step's end and that reading. */
static void
explain_to_exit_read (GPtrArray   *rows,
                      GArray      *out,
                      ProcessSpan *span)
{
  guint last_i = g_array_index (span->pending, guint, span->pending->len - 1);
  const TideStepRow *first = g_ptr_array_index (rows, g_array_index (span->pending, guint, 0));
  const TideStepRow *last = g_ptr_array_index (rows, last_i);
  TideStepRow whole = span_row (span->last_read, first, last,
                                tide_sat_sub (span->rss, last->rss_delta));
  TideRssExplanation *e = &g_array_index (out, TideRssExplanation, last_i);
  gint64 heap_after = heap_after_last_step (last);

  memcpy (whole.class_end, last->class_exit, sizeof whole.class_end);
  whole.rss_delta = tide_sat_add (whole.rss_delta, rss_after_last_step (last));
  explain_row (&whole, tide_sat_add (span->heap, heap_after), e);
  e->first_step = first->number;
  e->to_exit_read = TRUE;
  /* Of the heap term, what came after the steps: without it a leak of
   * the steps that the program freed as it returned reads as a fall. */
  e->heap_after_steps = heap_after;
  name_sharing_cause (rows, span->pending, last_i, e);
  for (guint k = 0; k + 1 < span->pending->len; k++)
    {
      TideRssExplanation *p = &g_array_index (out, TideRssExplanation,
                                              g_array_index (span->pending, guint, k));

      p->first_step = first->number;
      p->spanned_by = last->number;
    }
}

GArray *
tide_rss_explain_steps (GPtrArray *rows)
{
  g_autoptr(GHashTable) spans = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                                       (GDestroyNotify) process_span_free);
  GArray *out = g_array_sized_new (FALSE, TRUE, sizeof (TideRssExplanation), rows->len);

  g_array_set_clear_func (out, (GDestroyNotify) explanation_clear);
  g_array_set_size (out, rows->len);
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      TideRssExplanation *e = &g_array_index (out, TideRssExplanation, i);
      ProcessSpan *span = g_hash_table_lookup (spans, &r->process.id);
      gint64 heap;

      if (span == NULL)
        {
          span = g_new0 (ProcessSpan, 1);
          span->pending = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (spans, &r->process.id, span);
        }
      heap = heap_delta (r, span->last);
      span->last = r;
      if (is_pending (r))
        {
          *e = (TideRssExplanation) { .first_step = r->number, .last_step = r->number,
                                      .private_base = TRUE, .pending = TRUE, .spanned_by = -1 };
          g_array_append_val (span->pending, i);
          span->heap = tide_sat_add (span->heap, heap);
          span->rss = tide_sat_add (span->rss, r->has_rss ? r->rss_delta : 0);
          continue;
        }
      if (span->pending->len == 0 && !has_private_base (r))
        explain_row (r, heap, e);
      else if (span->pending->len == 0)
        {
          TideStepRow whole = span_row (span->last_read, r, r, 0);

          explain_row (&whole, heap, e);
        }
      else
        {
          const TideStepRow *first = g_ptr_array_index (rows, g_array_index (span->pending, guint, 0));
          TideStepRow whole = span_row (span->last_read, first, r, span->rss);

          explain_row (&whole, tide_sat_add (span->heap, heap), e);
          e->first_step = first->number;
          for (guint k = 0; k < span->pending->len; k++)
            {
              TideRssExplanation *p = &g_array_index (out, TideRssExplanation,
                                                      g_array_index (span->pending, guint, k));

              p->first_step = first->number;
              p->spanned_by = r->number;
            }
        }
      name_sharing_cause (rows, span->pending, i, e);
      if (tide_step_row_read_at_end (r, TIDE_STEP_USS))
        span->last_read = r;
      g_array_set_size (span->pending, 0);
      span->heap = span->rss = 0;
    }
  {
    GHashTableIter iter;
    ProcessSpan *span;

    g_hash_table_iter_init (&iter, spans);
    while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &span))
      if (span->pending->len > 0 && span->last->exit_read)
        explain_to_exit_read (rows, out, span);
  }
  return out;
}

static gint
compare_terms_by_size (gconstpointer a,
                       gconstpointer b,
                       gpointer      user_data)
{
  const gint64 *terms = user_data;
  gint64 x = ABS (terms[*(const gint *) a]), y = ABS (terms[*(const gint *) b]);

  if (x != y)
    return x > y ? -1 : 1;
  return *(const gint *) a - *(const gint *) b;
}

/* " (+119.90 MiB over the steps, -500.00 MiB after them)": the heap term
 * of a span up to a process's last reading, split at its last step's end. */
static void
append_heap_after_steps (GString                  *out,
                         const TideRssExplanation *e)
{
  g_autofree char *in_steps = tide_format_delta (tide_sat_sub (e->terms[TIDE_RSS_HEAP],
                                                               e->heap_after_steps));
  g_autofree char *after = tide_format_delta (e->heap_after_steps);

  g_string_append_printf (out, " (%s over the steps, %s after them)", in_steps, after);
}

char *
tide_rss_explanation_describe (const TideRssExplanation *e)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *base = tide_format_delta (e->base_delta);
  g_autofree char *rss = tide_format_delta (e->rss_delta);
  gint order[TIDE_RSS_UNEXPLAINED];
  guint n = 0;

  for (gint t = 0; t < TIDE_RSS_UNEXPLAINED; t++)
    if (e->terms[t] != 0)
      order[n++] = t;
  g_qsort_with_data (order, n, sizeof order[0], compare_terms_by_size, (gpointer) e->terms);
  if (e->pending)
    {
      if (e->spanned_by >= 0)
        return g_strdup_printf ("private memory not read at this step's end: step %d gives "
                                "steps %d-%d", e->spanned_by, e->first_step, e->spanned_by);
      return g_strdup ("private memory not read at this step's end");
    }
  if (e->attach_base)
    {
      g_autofree char *held = tide_format_bytes (e->attach_uss);

      g_string_append_printf (out, "%s private at its first reading, after attach: what it "
                                   "held before is not explained", held);
      return g_string_free (g_steal_pointer (&out), FALSE);
    }
  g_string_append_printf (out, "%s %s%s", base, e->private_base ? "private" : "RSS",
                          e->since_fork ? " since fork" : e->since_attach ? " since attach" : "");
  if (e->first_step != e->last_step)
    g_string_append_printf (out, " over steps %d-%d", e->first_step, e->last_step);
  if (e->to_exit_read)
    g_string_append (out, e->first_step != e->last_step ? " and up to the process's last reading"
                                                        : " up to the process's last reading");
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *value = tide_format_delta (e->terms[order[i]]);
      const char *name = rss_terms[order[i]].name;

      if (order[i] == TIDE_RSS_SHARING && e->terms[order[i]] < 0)
        name = "newly shared";
      g_string_append_printf (out, "%s %s %s", i ? "," : ":", name, value);
      if (order[i] == TIDE_RSS_SHARING && e->sharing_cause != NULL)
        g_string_append_printf (out, " (%s)", e->sharing_cause);
      if (order[i] == TIDE_RSS_HEAP && e->to_exit_read && e->heap_after_steps != 0)
        append_heap_after_steps (out, e);
    }
  if (e->terms[TIDE_RSS_UNEXPLAINED] != 0)
    {
      g_autofree char *value = tide_format_delta (e->terms[TIDE_RSS_UNEXPLAINED]);

      g_string_append_printf (out, "%s unexplained %s", n ? "," : ":", value);
    }
  if (e->private_base)
    g_string_append_printf (out, "; RSS %s", rss);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

gint
tide_rss_find_largest_unexplained (GPtrArray *rows,
                                   GArray    *explanations,
                                   gint64     threshold)
{
  g_autoptr(GHashTable) first_steps = g_hash_table_new (g_int64_hash, g_int64_equal);
  gint best = -1;
  gint64 best_growth = threshold;

  for (guint i = 0; i < rows->len; i++)
    {
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);
      /* Pages no longer shared were there before, in another process's
       * account: the job did not grow by them. */
      gint64 growth = e->base_delta - MAX (e->terms[TIDE_RSS_HEAP], 0) -
                      MAX (e->terms[TIDE_RSS_SHARING], 0);
      TideStepRow *r = g_ptr_array_index (rows, i);

      /* A process's first step holds its start: libraries, imports; and
       * so does a span from it. */
      if (!g_hash_table_contains (first_steps, &r->process.id))
        g_hash_table_insert (first_steps, &r->process.id, GINT_TO_POINTER (r->number));
      if (e->first_step <= GPOINTER_TO_INT (g_hash_table_lookup (first_steps, &r->process.id)))
        continue;
      /* Beyond the heap by more than a tenth of the change: a few pages
       * of the interpreter's beside 80 MiB of heap are not news. */
      if (growth > best_growth && growth > ABS (e->base_delta) / 10)
        {
          best = (gint) i;
          best_growth = growth;
        }
    }
  return best;
}

/* ---- report --rss ------------------------------------------------------------ */

/* The terms' columns in CSV and JSON: those added later come after the
 * ones that were there before, which keep their places. */
static const TideRssTerm column_order[TIDE_RSS_N_TERMS] = {
  TIDE_RSS_COW, TIDE_RSS_HEAP, TIDE_RSS_ALLOC_FREE, TIDE_RSS_FILE, TIDE_RSS_SHMEM,
  TIDE_RSS_SHARING, TIDE_RSS_PY_ARENA_FREE, TIDE_RSS_UNEXPLAINED, TIDE_RSS_THREAD_STACKS,
  TIDE_RSS_LIB_DATA, TIDE_RSS_PRELOAD_OWN, TIDE_RSS_PY_UNHOOKED, TIDE_RSS_INHERITED_FREED,
};

/* Whether row @i and row @j, a later row of the same process, are pending
 * in one run: spanned by the same later reading, or by none. */
static gboolean
same_pending_run (GArray *explanations,
                  guint   i,
                  guint   j)
{
  const TideRssExplanation *a = &g_array_index (explanations, TideRssExplanation, i);
  const TideRssExplanation *b = &g_array_index (explanations, TideRssExplanation, j);

  return a->pending && b->pending && a->spanned_by == b->spanned_by;
}

/* The row before @i of @i's process, or -1. */
static gint
previous_of_process (GPtrArray *rows,
                     guint      i)
{
  gint64 process_id = ((TideStepRow *) g_ptr_array_index (rows, i))->process.id;

  for (gint k = (gint) i - 1; k >= 0; k--)
    if (((TideStepRow *) g_ptr_array_index (rows, k))->process.id == process_id)
      return k;
  return -1;
}

/* The last step of the run of pending rows that row @i starts. */
static gint
pending_run_last_step (GPtrArray *rows,
                       GArray    *explanations,
                       guint      i)
{
  const TideStepRow *first = g_ptr_array_index (rows, i);
  gint last = first->number;

  for (guint k = i + 1; k < rows->len; k++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, k);

      if (r->process.id != first->process.id)
        continue;
      if (!same_pending_run (explanations, i, k))
        break;
      last = r->number;
    }
  return last;
}

/* A run of steps whose private memory was not read at their ends, in one
 * line: "steps 2-39, ...: private memory not read at their ends: step 40
 * gives steps 2-40". */
static void
pending_run_text (GString                  *out,
                  const TideStepRow        *r,
                  const TideRssExplanation *e,
                  gint                      last_step)
{
  g_string_append_printf (out, "steps %d-%d, %s (pid %" G_GINT64_FORMAT "): private memory not"
                          " read at their ends", r->number, last_step,
                          r->process.role ? r->process.role : "?", r->process.pid);
  if (e->spanned_by >= 0)
    g_string_append_printf (out, ": step %d gives steps %d-%d", e->spanned_by, r->number,
                            e->spanned_by);
  g_string_append_c (out, '\n');
}

static void
rss_text (GString   *out,
          GPtrArray *rows,
          GArray    *explanations)
{
  if (rows->len == 0)
    {
      g_string_append (out, "No steps: the program never called tidemark_step "
                            "(or tidemark.step() in Python).\n");
      return;
    }
  g_string_append (out, "Memory by step: the change of each process's private memory (USS), "
                        "or of its RSS where only that was read, and what moved it\n");
  for (guint i = 0; i < rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);
      g_autofree char *line = NULL;
      g_autofree char *step = NULL;

      if (e->pending)
        {
          gint previous = previous_of_process (rows, i);
          gint last_step;

          if (previous >= 0 && same_pending_run (explanations, previous, i))
            continue;
          /* A run of one step keeps its own line, below. */
          last_step = pending_run_last_step (rows, explanations, i);
          if (last_step != r->number)
            {
              pending_run_text (out, r, e, last_step);
              continue;
            }
        }
      line = tide_rss_explanation_describe (e);
      step = tide_step_row_describe (r);
      g_string_append_printf (out, "%s, %s (pid %" G_GINT64_FORMAT "): %s\n", step,
                              r->process.role ? r->process.role : "?", r->process.pid, line);
    }
}

static void
rss_csv (GString   *out,
         GPtrArray *rows,
         GArray    *explanations)
{
  g_string_append (out, "pid,role,steps_pid,step,label,base,base_delta_bytes,rss_delta_bytes");
  for (gint t = 0; t < TIDE_RSS_N_TERMS; t++)
    g_string_append_printf (out, ",%s", rss_terms[column_order[t]].column);
  g_string_append (out, ",first_step,pending,to_last_reading,heap_after_steps_bytes\n");
  for (guint i = 0; i < rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);

      g_string_append_printf (out, "%" G_GINT64_FORMAT ",", r->process.pid);
      tide_format_csv_text (out, r->process.role);
      g_string_append_printf (out, ",%" G_GINT64_FORMAT ",%d,", r->steps_pid, r->number);
      tide_format_csv_text (out, r->label);
      g_string_append_printf (out, ",%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                              e->private_base ? "uss" : "rss", e->base_delta, e->rss_delta);
      for (gint t = 0; t < TIDE_RSS_N_TERMS; t++)
        g_string_append_printf (out, ",%" G_GINT64_FORMAT, e->terms[column_order[t]]);
      g_string_append_printf (out, ",%d,%d,%d,", e->first_step, e->pending, e->to_exit_read);
      if (e->to_exit_read)
        g_string_append_printf (out, "%" G_GINT64_FORMAT, e->heap_after_steps);
      g_string_append_c (out, '\n');
    }
}

static void
rss_json (GString   *out,
          GPtrArray *rows,
          GArray    *explanations)
{
  g_string_append (out, "{\"rss\":[");
  for (guint i = 0; i < rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);
      g_autofree char *text = tide_rss_explanation_describe (e);

      g_string_append_printf (out, "%s{\"pid\":%" G_GINT64_FORMAT ",\"role\":", i ? "," : "",
                              r->process.pid);
      tide_format_json_text (out, r->process.role);
      g_string_append_printf (out, ",\"steps_pid\":%" G_GINT64_FORMAT ",\"step\":%d,\"label\":",
                              r->steps_pid, r->number);
      tide_format_json_text (out, r->label);
      g_string_append_printf (out, ",\"base\":\"%s\",\"base_delta_bytes\":%" G_GINT64_FORMAT
                              ",\"rss_delta_bytes\":%" G_GINT64_FORMAT,
                              e->private_base ? "uss" : "rss", e->base_delta, e->rss_delta);
      for (gint t = 0; t < TIDE_RSS_N_TERMS; t++)
        g_string_append_printf (out, ",\"%s\":%" G_GINT64_FORMAT, rss_terms[column_order[t]].column,
                                e->terms[column_order[t]]);
      g_string_append_printf (out, ",\"first_step\":%d,\"pending\":%s,\"to_last_reading\":%s",
                              e->first_step, e->pending ? "true" : "false",
                              e->to_exit_read ? "true" : "false");
      g_string_append (out, ",\"heap_after_steps_bytes\":");
      if (e->to_exit_read)
        g_string_append_printf (out, "%" G_GINT64_FORMAT, e->heap_after_steps);
      else
        g_string_append (out, "null");
      g_string_append (out, ",\"text\":");
      tide_format_json_text (out, text);
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}\n");
}

void
tide_format_rss (GString    *out,
                 GPtrArray  *rows,
                 TideFormat  format)
{
  g_autoptr(GArray) explanations = tide_rss_explain_steps (rows);

  if (format == TIDE_FORMAT_CSV)
    rss_csv (out, rows, explanations);
  else if (format == TIDE_FORMAT_JSON)
    rss_json (out, rows, explanations);
  else
    rss_text (out, rows, explanations);
}

/* ---- classes as suspects ------------------------------------------------------ */

/* Pages that a class holds are measured exactly, but library pages move
 * them a little: growth below this is noise. */
#define CLASS_SUSPECT_MIN_BYTES (1024.0 * 1024.0)
/* ... and they move them by a share of what the process holds, not by a
 * fixed size: while a PyTorch rank warms up, glibc's free lists climb by a
 * few MiB over a dozen steps and then stay.  Growth under 1/32 of the
 * process's RSS at its last step says nothing about where its memory goes. */
#define CLASS_SUSPECT_MIN_RSS_SHARE 32

static const struct
{
  TideClassSuspectKind kind;
  TideStepClass        cls;
  const char          *hint;
} class_suspects[] = {
  { TIDE_CLASS_SUSPECT_COW, TIDE_STEP_COW,
    "reading a Python object writes its reference count, which copies its page into every "
    "worker: keep a Dataset's data in numpy arrays or tensors rather than lists and dicts "
    "of Python objects" },
  { TIDE_CLASS_SUSPECT_ALLOC_FREE, TIDE_STEP_ALLOC_FREE,
    "glibc keeps freed memory in per-thread arenas: set MALLOC_ARENA_MAX=2, call "
    "malloc_trim(0) after large frees, or run on jemalloc "
    "(LD_PRELOAD=libjemalloc.so.2)" },
  { TIDE_CLASS_SUSPECT_PY_ARENA_FREE, TIDE_STEP_PY_ARENA_FREE,
    "CPython returns an arena to the system only when every object in it is freed, so a few "
    "long-lived objects made among many short-lived ones keep whole arenas mapped "
    "(fragmentation): make what is kept apart from the churn (before the loop, or in bulk), "
    "keep bulk data in numpy arrays or tensors rather than many small objects, or run with "
    "PYTHONMALLOC=malloc so that glibc holds them and malloc_trim(0) can return its pages" },
};

/* The allocators other than glibc whose free memory the preload reads,
 * by their part of TIDE_STEP_ALLOC_FREE. */
static const struct
{
  TideStepClass  cls;
  const char    *name;
  const char    *hint;
} other_allocators[] = {
  { TIDE_STEP_JEMALLOC_FREE, "jemalloc",
    "jemalloc keeps freed pages until they decay: MALLOC_CONF=dirty_decay_ms:1000 returns "
    "them sooner, narenas:2 keeps fewer arenas" },
  { TIDE_STEP_TCMALLOC_FREE, "tcmalloc",
    "tcmalloc returns freed pages to the system slowly: TCMALLOC_RELEASE_RATE=10 returns "
    "them sooner, and MallocExtension_ReleaseFreeMemory() after large frees returns them "
    "at once" },
};

void
tide_class_suspect_free (TideClassSuspect *suspect)
{
  if (suspect == NULL)
    return;
  tide_process_label_clear (&suspect->process);
  g_free (suspect->name);
  g_free (suspect);
}

/* The allocator other than glibc that holds most of the allocator's free
 * memory at the last step (an index of other_allocators), or -1: glibc. */
static gint
main_other_allocator (const TideStepRow *last)
{
  for (guint a = 0; a < G_N_ELEMENTS (other_allocators); a++)
    {
      gint64 held = last->has_classes ? last->class_end[other_allocators[a].cls] : -1;

      if (held > 0 && 2 * held > last->class_end[TIDE_STEP_ALLOC_FREE])
        return (gint) a;
    }
  return -1;
}

static char *
class_suspect_name (TideClassSuspectKind  kind,
                    const TideStepRow    *last,
                    const char           *label,
                    gint64                end_bytes)
{
  g_autofree char *bytes = tide_format_bytes (end_bytes);
  gint other = main_other_allocator (last);

  if (kind == TIDE_CLASS_SUSPECT_COW)
    return g_strdup_printf ("copy-on-write in %s", label);
  if (kind == TIDE_CLASS_SUSPECT_PY_ARENA_FREE)
    return g_strdup_printf ("Python's allocator keeps %s free in its arenas", bytes);
  if (other >= 0)
    return g_strdup_printf ("%s keeps %s free", other_allocators[other].name, bytes);
  return g_strdup_printf ("glibc arenas keep %s free", bytes);
}

static const char *
class_suspect_hint (TideClassSuspectKind  kind,
                    const TideStepRow    *last,
                    guint                 c)
{
  gint other = kind == TIDE_CLASS_SUSPECT_ALLOC_FREE ? main_other_allocator (last) : -1;

  return other >= 0 ? other_allocators[other].hint : class_suspects[c].hint;
}

/* The least growth of a class that makes it a suspect in the process
 * whose last step is @last. */
static double
class_suspect_min_bytes (const TideStepRow *last)
{
  double share = last->has_rss ? (double) last->rss_end / CLASS_SUSPECT_MIN_RSS_SHARE : 0;

  return MAX (CLASS_SUSPECT_MIN_BYTES, share);
}

/* Whether a class that grew since step @start is still growing over the
 * last third of the @n steps: by at least half of what its average rate
 * since @start would add there.  A class fills up while a job warms up
 * (glibc's free lists in a DDP rank's first steps, the arenas of its first
 * batches) and then stays: that is its size, not a leak. */
static gboolean
class_still_grows (const double *live,
                   gint          n,
                   gint          start,
                   double        net)
{
  gint span = n - start + 1;
  gint third = MIN ((n + 2) / 3, span);

  return live[n] - live[n - third] >= 0.5 * net * third / span;
}

/* @rows: one process's, by step. */
static void
add_process_class_suspects (GPtrArray *rows,
                            GPtrArray *out)
{
  const TideStepRow *last = g_ptr_array_index (rows, rows->len - 1);
  double min_bytes = class_suspect_min_bytes (last);
  g_autofree double *live = g_new0 (double, rows->len + 1);

  for (guint c = 0; c < G_N_ELEMENTS (class_suspects); c++)
    {
      TideClassSuspect *s;
      gint start;
      double net;

      for (guint k = 0; k < rows->len; k++)
        {
          const TideStepRow *r = g_ptr_array_index (rows, k);

          live[k + 1] = r->has_classes ? MAX (r->class_end[class_suspects[c].cls], 0) : 0;
        }
      if (!_tide_series_grows_steadily (live, rows->len, min_bytes, &start, &net)
          || !class_still_grows (live, (gint) rows->len, start, net))
        continue;
      s = g_new0 (TideClassSuspect, 1);
      s->kind = class_suspects[c].kind;
      s->process = last->process;
      s->process.role = g_strdup (last->process.role ? last->process.role : "?");
      s->growth_step = ((const TideStepRow *) g_ptr_array_index (rows, start - 1))->number;
      s->growth_bytes = (gint64) net;
      s->bytes_per_step = net / (rows->len - start + 1);
      s->end_bytes = (gint64) live[rows->len];
      s->name = class_suspect_name (s->kind, last, s->process.role, s->end_bytes);
      s->hint = class_suspect_hint (s->kind, last, c);
      g_ptr_array_add (out, s);
    }
}

static gint
compare_class_suspects (gconstpointer a,
                        gconstpointer b)
{
  const TideClassSuspect *x = *(TideClassSuspect **) a, *y = *(TideClassSuspect **) b;

  return (x->bytes_per_step < y->bytes_per_step) - (x->bytes_per_step > y->bytes_per_step);
}

GPtrArray *
tide_report_class_suspects (TideTrace  *trace,
                            GError    **error)
{
  g_autoptr(GPtrArray) rows = tide_report_job_steps (trace, error);

  return rows != NULL ? tide_rss_class_suspects (rows) : NULL;
}

GPtrArray *
tide_rss_class_suspects (GPtrArray *rows)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_class_suspect_free);
  g_autoptr(GHashTable) done = g_hash_table_new (g_int64_hash, g_int64_equal);

  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      g_autoptr(GPtrArray) mine = NULL;

      if (g_hash_table_contains (done, &r->process.id))
        continue;
      g_hash_table_add (done, &r->process.id);
      /* Rows are by step, then process: the process's come in step order. */
      mine = g_ptr_array_new ();
      for (guint k = i; k < rows->len; k++)
        if (((TideStepRow *) g_ptr_array_index (rows, k))->process.id == r->process.id)
          g_ptr_array_add (mine, g_ptr_array_index (rows, k));
      if (mine->len >= 2)
        add_process_class_suspects (mine, out);
    }
  g_ptr_array_sort (out, compare_class_suspects);
  return g_steal_pointer (&out);
}

char *
tide_class_suspect_describe (const TideClassSuspect *s)
{
  g_autofree char *slope = tide_format_delta ((gint64) s->bytes_per_step);
  g_autofree char *end = tide_format_bytes (s->end_bytes);

  /* Every class is the host's: said as a stack suspect says its device. */
  if (s->kind == TIDE_CLASS_SUSPECT_COW)
    return g_strdup_printf ("%s, %s/step since step %d, %s copied (pid %" G_GINT64_FORMAT
                            ", host)", s->name, slope, s->growth_step, end, s->process.pid);
  return g_strdup_printf ("%s, %s/step since step %d, in %s (pid %" G_GINT64_FORMAT ", host)",
                          s->name, slope, s->growth_step, s->process.role, s->process.pid);
}

const char *
tide_class_suspect_class (const TideClassSuspect *s)
{
  static const char *const names[] = {
    [TIDE_CLASS_SUSPECT_COW] = "cow",
    [TIDE_CLASS_SUSPECT_ALLOC_FREE] = "alloc_free",
    [TIDE_CLASS_SUSPECT_PY_ARENA_FREE] = "py_arena_free",
  };

  return names[s->kind];
}
