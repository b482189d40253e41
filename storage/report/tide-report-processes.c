/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job in the reports: every row names its process by role, the steps
 * report covers every process of the job, and `report --processes` lists
 * them.  A process without steps of its own (a DataLoader worker, a
 * helper) is measured at the steps of its nearest ancestor that has steps,
 * or else of rank 0, or else of the first process that has steps: by time,
 * from its RSS and heap counters, since nothing of its own marks them.
 */
#include "config.h"

#include <sqlite3.h>

#include "tide-device-oom.h"
#include "tide-live-at.h"
#include "tide-report-private.h"
#include "tide-report-rss.h"
#include "tide-saturate.h"
#include "tide-schema.h"


void
tide_process_summary_free (TideProcessSummary *summary)
{
  if (summary == NULL)
    return;
  tide_process_free (summary->process);
  g_clear_pointer (&summary->device_ooms, g_ptr_array_unref);
  g_free (summary);
}

/* ---- labels ----------------------------------------------------------------- */

/* Names @label's process, by its id, from @processes. */
static void
label_process (GPtrArray        *processes,
               TideProcessLabel *label)
{
  tide_process_label_set (label, tide_processes_find (processes, label->id));
}

gboolean
_tide_report_label_groups (TideTrace  *trace,
                           GPtrArray  *groups,
                           GError    **error)
{
  g_autoptr(GPtrArray) processes = tide_trace_list_processes (trace, error);

  if (processes == NULL)
    return FALSE;
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);

      label_process (processes, &g->process);
    }
  return TRUE;
}

gboolean
_tide_report_label_steps (TideTrace  *trace,
                          GPtrArray  *rows,
                          GError    **error)
{
  g_autoptr(GPtrArray) processes = tide_trace_list_processes (trace, error);

  if (processes == NULL)
    return FALSE;
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      label_process (processes, &r->process);
      r->steps_pid = r->process.pid;
    }
  return TRUE;
}

/* ---- the job's steps ---------------------------------------------------------- */

/* The process whose steps @p's time is counted in: its own when it has
 * steps, else the nearest stepping ancestor, else rank 0 or the first
 * process with steps; NULL without any. */
TideProcess *
_tide_report_steps_source (GPtrArray         *processes,
                           const TideProcess *p)
{
  TideProcess *first = NULL;

  if (p->has_steps)
    return (TideProcess *) p;
  /* Bounded walk: a damaged trace may hold a cycle of parents. */
  for (TideProcess *q = tide_processes_find (processes, p->parent_id);
       q != NULL && q != p && q->id != q->parent_id;
       q = q->parent_id < q->id ? tide_processes_find (processes, q->parent_id) : NULL)
    if (q->has_steps)
      return q;
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *q = g_ptr_array_index (processes, i);

      if (q->has_steps && q->role == TIDE_ROLE_RANK && q->dist_rank == 0)
        return q;
      if (q->has_steps && first == NULL)
        first = q;
    }
  return first;
}

#define COUNTER_AT(counter, bound) \
  "(SELECT c.value FROM counters c WHERE c.process_id = ?1 AND c.counter = " counter \
  " AND c.ts_ns <= s." bound " ORDER BY c.ts_ns DESC LIMIT 1)"

/* The steps of @source that @p lived in, with @p's RSS at their ends and
 * starts (its heap comes later: add_borrowed_heap()).  The first counts
 * from @p's own start, as its private memory does (from nothing, or from
 * its fork): a launcher that imported torch before its ranks stepped grew
 * before that step's start, and a worker forked within it had its
 * parent's pages in its RSS at once. */
static gboolean
add_borrowed_steps (TideTrace         *trace,
                    const TideProcess *p,
                    const TideProcess *source,
                    GPtrArray         *rows,
                    GError           **error)
{
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                  "SELECT s.number, s.label, s.start_ns, s.end_ns,"
                  COUNTER_AT (TIDE_SQL_COUNTER_RSS, "end_ns") ","
                  COUNTER_AT (TIDE_SQL_COUNTER_RSS, "from_ns")
                  " FROM (SELECT number, label, start_ns, end_ns,"
                  "         CASE WHEN number = min (number) OVER () THEN ?3 ELSE start_ns END"
                  "           AS from_ns"
                  "       FROM steps WHERE process_id = ?2 AND end_ns > ?3"
                  "        AND (?4 = 0 OR start_ns < ?4)) s"
                  " ORDER BY s.number", TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, p->id);
  sqlite3_bind_int64 (stmt, 2, source->id);
  sqlite3_bind_int64 (stmt, 3, p->start_ns);
  sqlite3_bind_int64 (stmt, 4, p->end_ns);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideStepRow *row = g_new0 (TideStepRow, 1);

      tide_process_label_set (&row->process, p);
      row->steps_pid = source->pid;
      row->borrowed = TRUE;
      _tide_step_row_read_span (row, trace, stmt, 0);
      row->rss_delta = row->rss_end - sqlite3_column_int64 (stmt, 5);
      row->devices = g_array_new (FALSE, TRUE, sizeof (TideStepDevice));
      g_ptr_array_add (rows, row);
    }
  return tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error);
}

/* A process without steps of its own, where its rows begin and end in
 * the job's rows, and the times its heap is read at: each row's start
 * and end, then its exit reading. */
typedef struct
{
  const TideProcess *process;
  guint              first;
  guint              end;
  gint64            *times;
  TideLiveBytes     *live;
} Borrower;

static void
borrower_clear (Borrower *b)
{
  g_free (b->times);
  g_free (b->live);
}

/* How many times @b's heap is read at: a start and an end for each of its
 * rows, and its exit reading (borrower_times()). */
static guint
borrower_n_times (const Borrower *b)
{
  return 2 * (b->end - b->first) + 1;
}

static void
borrower_times (TideTrace *trace,
                Borrower  *b,
                GPtrArray *rows)
{
  const TideStepRow *last = g_ptr_array_index (rows, b->end - 1);
  guint n = borrower_n_times (b);

  b->times = g_new (gint64, n);
  b->live = g_new0 (TideLiveBytes, n);
  for (guint i = b->first; i < b->end; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);
      gint64 start = tide_trace_get_start_ns (trace) + r->start_ns;

      /* The first row counts from the process's own start
       * (add_borrowed_steps()). */
      b->times[2 * (i - b->first)] = i == b->first ? b->process->start_ns : start;
      b->times[2 * (i - b->first) + 1] = start + r->duration_ns;
    }
  b->times[n - 1] = last->exit_read ? last->exit_read_ns : b->times[n - 2];
}

/* @b's heap and mappings at the ends and starts of the steps it borrows,
 * and at its exit reading, from b->live. */
static void
borrower_set_heap (const Borrower *b,
                   GPtrArray      *rows)
{
  TideStepRow *last = g_ptr_array_index (rows, b->end - 1);
  const TideLiveBytes *live = b->live;
  guint n = borrower_n_times (b);

  for (guint i = b->first; i < b->end; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      guint k = 2 * (i - b->first);

      r->heap_end = live[k + 1].heap;
      r->heap_delta = tide_sat_sub (r->heap_end, live[k].heap);
      r->mapped_end = live[k + 1].mapped;
      r->class_start[TIDE_STEP_MAPPED] = live[k].mapped;
      r->class_end[TIDE_STEP_MAPPED] = live[k + 1].mapped;
    }
  if (last->exit_read)
    {
      last->heap_exit = live[n - 1].heap;
      last->class_exit[TIDE_STEP_MAPPED] = live[n - 1].mapped;
    }
}

/* The heap of the processes without steps, at the steps they borrow and
 * at their exit readings: from their allocation rows, by each block's own
 * times (tide-live-at.c), not from the counters that the recorder polls
 * as the records come. */
static gboolean
add_borrowed_heap (TideTrace  *trace,
                   GArray     *borrowers,
                   GPtrArray  *rows,
                   GError    **error)
{
  g_autofree TideLiveAtRequest *requests = g_new0 (TideLiveAtRequest, MAX (borrowers->len, 1));

  for (guint i = 0; i < borrowers->len; i++)
    {
      Borrower *b = &g_array_index (borrowers, Borrower, i);

      borrower_times (trace, b, rows);
      requests[i] = (TideLiveAtRequest) { b->process->id, b->times, borrower_n_times (b), b->live };
    }
  if (!tide_trace_live_at (trace, requests, borrowers->len, error))
    return FALSE;
  for (guint i = 0; i < borrowers->len; i++)
    borrower_set_heap (&g_array_index (borrowers, Borrower, i), rows);
  return TRUE;
}

static gint
compare_step_then_process (gconstpointer a,
                           gconstpointer b)
{
  const TideStepRow *x = *(TideStepRow * const *) a;
  const TideStepRow *y = *(TideStepRow * const *) b;

  if (x->number != y->number)
    return x->number < y->number ? -1 : 1;
  return x->process.id < y->process.id ? -1 : x->process.id > y->process.id;
}

/* How a step's row names a process of its family: by its role where it
 * has one that tells it apart, else by its command and pid. */
static char *
describe_kin (const TideProcess *q)
{
  if (q->role == TIDE_ROLE_RANK || q->role == TIDE_ROLE_LOADER_WORKER)
    return g_strdup (q->label);
  return g_strdup_printf ("%s (pid %" G_GINT64_FORMAT ")", q->label, q->pid);
}

/* Whether @ns falls in the step of @r: after its start, up to its end.
 * A process's first row counts from @from_ns, its start, where that came
 * first: its private memory counts from there. */
static gboolean
in_step (TideTrace         *trace,
         const TideStepRow *r,
         gint64             from_ns,
         gint64             ns)
{
  gint64 start = tide_trace_get_start_ns (trace) + r->start_ns;

  return ns > MIN (start, from_ns) && ns <= start + r->duration_ns;
}

/* Whether @q ended after the step of @r, and no later than @p (its
 * last reading, at its exit, comes after @q's end). */
static gboolean
ended_after_step (TideTrace         *trace,
                  const TideStepRow *r,
                  const TideProcess *p,
                  const TideProcess *q)
{
  gint64 end = tide_trace_get_start_ns (trace) + r->start_ns + r->duration_ns;

  return q->end_ns > end && (p->end_ns == 0 || q->end_ns <= p->end_ns);
}

/* The processes that share pages with @p by fork, its parent and its
 * children (siblings share what their parent does, so one's exit moves
 * little), that started or ended during each of its steps, or after its
 * last: their pages became shared, or stopped being shared, then. */
static void
add_kin_changes (TideTrace *trace,
                 GPtrArray *processes,
                 GPtrArray *rows)
{
  g_autoptr(GHashTable) kin = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                                     (GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GHashTable) first_rows = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr(GHashTable) last_rows = g_hash_table_new (g_int64_hash, g_int64_equal);

  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *q = g_ptr_array_index (processes, i);
      TideProcess *parent = tide_processes_find (processes, q->parent_id);
      GPtrArray *of_parent;

      if (parent == NULL || parent == q)
        continue;
      if ((of_parent = g_hash_table_lookup (kin, &parent->id)) == NULL)
        g_hash_table_insert (kin, &parent->id, of_parent = g_ptr_array_new ());
      g_ptr_array_add (of_parent, q);
    }
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      TideStepRow *first = g_hash_table_lookup (first_rows, &r->process.id);
      TideStepRow *last = g_hash_table_lookup (last_rows, &r->process.id);

      if (first == NULL || r->number < first->number)
        g_hash_table_insert (first_rows, &r->process.id, r);
      if (last == NULL || r->number > last->number)
        g_hash_table_insert (last_rows, &r->process.id, r);
    }
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      gboolean is_last = g_hash_table_lookup (last_rows, &r->process.id) == r;
      TideProcess *p = tide_processes_find (processes, r->process.id);
      TideProcess *parent = p != NULL ? tide_processes_find (processes, p->parent_id) : NULL;
      GPtrArray *children = p != NULL ? g_hash_table_lookup (kin, &p->id) : NULL;
      gint64 from_ns = p != NULL && g_hash_table_lookup (first_rows, &r->process.id) == r
                       ? p->start_ns : G_MAXINT64;

      r->kin_started = g_ptr_array_new_with_free_func (g_free);
      r->kin_ended = g_ptr_array_new_with_free_func (g_free);
      r->kin_ended_after = g_ptr_array_new_with_free_func (g_free);
      for (guint k = 0; k <= (children != NULL ? children->len : 0); k++)
        {
          TideProcess *q = k == 0 ? parent : g_ptr_array_index (children, k - 1);

          if (q == NULL || q == p)
            continue;
          if (in_step (trace, r, from_ns, q->start_ns))
            g_ptr_array_add (r->kin_started, describe_kin (q));
          if (q->end_ns != 0 && in_step (trace, r, from_ns, q->end_ns))
            g_ptr_array_add (r->kin_ended, describe_kin (q));
          else if (is_last && q->end_ns != 0 && ended_after_step (trace, r, p, q))
            g_ptr_array_add (r->kin_ended_after, describe_kin (q));
        }
    }
}

/**
 * tide_report_job_steps:
 *
 * The steps of every process of the job: each process's own steps, and for
 * a process without any, the steps it borrows (see the file comment).
 *
 * Returns: (transfer full): #TideStepRow rows by step, then by process
 */
GPtrArray *
tide_report_job_steps (TideTrace  *trace,
                       GError    **error)
{
  g_autoptr(GPtrArray) rows = tide_report_steps (trace, error);
  g_autoptr(GPtrArray) processes = NULL;
  g_autoptr(GArray) borrowers = g_array_new (FALSE, TRUE, sizeof (Borrower));

  g_array_set_clear_func (borrowers, (GDestroyNotify) borrower_clear);
  if (rows == NULL || (processes = tide_trace_list_processes (trace, error)) == NULL)
    return NULL;
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);
      TideProcess *source = p->has_steps ? NULL : _tide_report_steps_source (processes, p);
      Borrower b = { .process = p, .first = rows->len };

      if (source != NULL && !add_borrowed_steps (trace, p, source, rows, error))
        return NULL;
      b.end = rows->len;
      if (b.end > b.first)
        g_array_append_val (borrowers, b);
    }
  if (!_tide_report_add_classes (trace, rows, error) ||
      !add_borrowed_heap (trace, borrowers, rows, error))
    return NULL;
  add_kin_changes (trace, processes, rows);
  g_ptr_array_sort (rows, compare_step_then_process);
  return g_steal_pointer (&rows);
}

/* ---- the job's processes ------------------------------------------------------- */

static gboolean
add_rss_figures (TideTrace  *trace,
                 GPtrArray  *summaries,
                 GError    **error)
{
  sqlite3_stmt *stmt;
  int rc;

  /* The growth ends at the process's last step end, where it has steps:
   * a program that frees what it kept as it ends, or an interpreter's
   * teardown, would leave what its training grew out. */
  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                  "SELECT max (c.value),"
                  "  max (CASE WHEN c.counter = " TIDE_SQL_COUNTER_RSS " THEN c.value END),"
                  "  (SELECT l.value FROM counters l"
                  "     WHERE l.process_id = ?1 AND l.counter = " TIDE_SQL_COUNTER_RSS
                  "       AND l.ts_ns <= coalesce ((SELECT max (s.end_ns) FROM steps s"
                  "                                 WHERE s.process_id = ?1), l.ts_ns)"
                  "     ORDER BY l.ts_ns DESC LIMIT 1) -"
                  "  (SELECT f.value FROM counters f"
                  "     WHERE f.process_id = ?1 AND f.counter = " TIDE_SQL_COUNTER_RSS
                  "     ORDER BY f.ts_ns LIMIT 1),"
                  "  (SELECT count (*) FROM steps s WHERE s.process_id = ?1)"
                  " FROM counters c WHERE c.process_id = ?1 AND c.counter IN (" TIDE_SQL_COUNTER_RSS
                  ", " TIDE_SQL_COUNTER_RSS_PEAK ")",
                  TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; i < summaries->len; i++)
    {
      TideProcessSummary *s = g_ptr_array_index (summaries, i);

      sqlite3_reset (stmt);
      sqlite3_bind_int64 (stmt, 1, s->process->id);
      rc = sqlite3_step (stmt);
      if (rc != SQLITE_ROW)
        return tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error);
      s->has_rss = sqlite3_column_type (stmt, 0) != SQLITE_NULL;
      s->peak_rss = sqlite3_column_int64 (stmt, 0);
      s->peak_rss_read = sqlite3_column_int64 (stmt, 1);
      s->rss_growth = sqlite3_column_int64 (stmt, 2);
      s->n_steps = sqlite3_column_int (stmt, 3);
    }
  return tide_sqlite_finish (_tide_trace_get_db (trace), stmt, SQLITE_DONE, TIDE_REPORT_WHAT,
                             error);
}

/* The step of @source_id in progress at @ns: the one that spans it, else
 * the one after the last that ended before it (a step that never ended);
 * 0 without steps. */
gboolean
_tide_report_step_at (sqlite3   *db,
                      gint64     source_id,
                      gint64     ns,
                      gint      *out,
                      GError   **error)
{
  sqlite3_stmt *stmt;
  gint64 number;
  gboolean ok;

  stmt = tide_sqlite_prepare (db, "SELECT coalesce ((SELECT number FROM steps WHERE process_id = ?1"
                                  "  AND start_ns <= ?2 AND end_ns >= ?2 ORDER BY number LIMIT 1),"
                                  " (SELECT max (number) + 1 FROM steps WHERE process_id = ?1"
                                  "  AND end_ns < ?2), 0)", TIDE_REPORT_WHAT, error);
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, source_id);
      sqlite3_bind_int64 (stmt, 2, ns);
    }
  ok = tide_sqlite_read_int (db, stmt, 0, &number, TIDE_REPORT_WHAT, error);
  *out = CLAMP (number, 0, G_MAXINT);
  return ok;
}

/* The sum at @ns of the last @counter reading at or before it of every
 * process alive then, and how old the oldest of those readings was; -1
 * without readings. */
static gboolean
read_job_sum_at (sqlite3   *db,
                 gint64     ns,
                 int        counter,
                 gint64    *sum,
                 gint64    *oldest_ns,
                 GError   **error)
{
  sqlite3_stmt *stmt;
  int rc;

#define LAST_READING(column) \
  "(SELECT c." column " FROM counters c WHERE c.process_id = p.id AND c.counter = ?2" \
  "  AND c.device = -1 AND c.ts_ns <= ?1 ORDER BY c.ts_ns DESC LIMIT 1)"
  stmt = tide_sqlite_prepare (db, "SELECT sum (v), min (t) FROM (SELECT " LAST_READING ("value") " AS v,"
                                  "  " LAST_READING ("ts_ns") " AS t FROM processes p"
                                  "  WHERE p.start_ns <= ?1 AND (p.end_ns IS NULL OR p.end_ns >= ?1))"
                                  " WHERE v IS NOT NULL",
                              TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, ns);
  sqlite3_bind_int (stmt, 2, counter);
  rc = sqlite3_step (stmt);
  *sum = rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL
         ? MAX (sqlite3_column_int64 (stmt, 0), 0) : -1;
  *oldest_ns = rc == SQLITE_ROW ? sqlite3_column_int64 (stmt, 1) : 0;
#undef LAST_READING
  return tide_sqlite_finish (db, stmt, rc == SQLITE_ROW ? SQLITE_DONE : rc, TIDE_REPORT_WHAT, error);
}

/* The job's memory at @ns: PSS summed where every process's PSS was read
 * within JOB_READING_FRESH_NS of it, else RSS summed (read at every poll,
 * 50 times a second): a job that grows fast between the slower PSS
 * readings held far more than the last of them says. */
#define JOB_READING_FRESH_NS (50 * G_GINT64_CONSTANT (1000000))

static gboolean
read_job_bytes_at (sqlite3   *db,
                   gint64     ns,
                   gint64    *bytes,
                   gboolean  *by_pss,
                   GError   **error)
{
  gint64 oldest;

  if (!read_job_sum_at (db, ns, TIDE_COUNTER_PSS, bytes, &oldest, error))
    return FALSE;
  *by_pss = *bytes >= 0 && oldest >= ns - JOB_READING_FRESH_NS;
  if (*by_pss)
    return TRUE;
  return read_job_sum_at (db, ns, TIDE_COUNTER_RSS, bytes, &oldest, error);
}

/* For each process that died: the step it died in, and the job's memory
 * then. */
static gboolean
add_end_figures (TideTrace  *trace,
                 GPtrArray  *summaries,
                 GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  g_autoptr(GPtrArray) processes = g_ptr_array_new ();

  for (guint i = 0; i < summaries->len; i++)
    g_ptr_array_add (processes, ((TideProcessSummary *) g_ptr_array_index (summaries, i))->process);
  for (guint i = 0; i < summaries->len; i++)
    {
      TideProcessSummary *s = g_ptr_array_index (summaries, i);
      const TideProcess *p = s->process;
      const TideProcess *source = p->has_steps ? p : _tide_report_steps_source (processes, p);

      s->job_bytes_at_end = -1;
      if (!tide_process_end_is_death (&p->end) || p->end_ns == 0)
        continue;
      if (source != NULL && !_tide_report_step_at (db, source->id, p->end_ns, &s->end_step, error))
        return FALSE;
      if (!read_job_bytes_at (db, p->end_ns, &s->job_bytes_at_end, &s->job_bytes_by_pss, error))
        return FALSE;
    }
  return TRUE;
}

/**
 * tide_process_summary_describe_unread_peak:
 *
 * Returns: (nullable): a line for a process whose RSS peaked between two
 *   readings of it, above every reading by more than a sixteenth (and a
 *   MiB): "rss-spike (pid 11899) held 50.12 MiB resident at its peak,
 *   between two readings of its RSS (the highest read 34.63 MiB)"; NULL
 *   where a reading met its peak.  Its peak is the kernel's high-water
 *   mark, the job's peak (PSS) the readings': such a process may have
 *   held more of the job's memory than the job's peak says.
 */
char *
tide_process_summary_describe_unread_peak (const TideProcessSummary *s)
{
  gint64 missed = tide_sat_sub (s->peak_rss, s->peak_rss_read);
  g_autofree char *peak = NULL;
  g_autofree char *read = NULL;

  /* No reading at all is not a peak between two. */
  if (!s->has_rss || s->peak_rss_read <= 0 ||
      missed <= MAX (TIDE_JOB_RISE_MIN, s->peak_rss_read / 16))
    return NULL;
  peak = tide_format_bytes (s->peak_rss);
  read = tide_format_bytes (s->peak_rss_read);
  return g_strdup_printf ("%s (pid %" G_GINT64_FORMAT ") held %s resident at its peak, between two"
                          " readings of its RSS (the highest read %s)", s->process->label,
                          s->process->pid, peak, read);
}

/**
 * tide_process_summary_describe_death:
 *
 * Returns: (nullable): a line for a process that a signal killed: "rank 1
 *   (pid 4242) was killed by SIGKILL in step 17: the kernel's OOM killer,
 *   at the cgroup's limit of 600.00 MiB; the job held 598.00 MiB (PSS)",
 *   or that exited with an error: "train.py (pid 4240) exited with status
 *   1 in step 18; ...", or NULL for any other end
 */
char *
tide_process_summary_describe_death (const TideProcessSummary *s)
{
  const TideProcess *p = s->process;
  g_autofree char *oom = tide_process_end_describe_oom (&p->end);
  GString *line;
  char name[16];

  if (!tide_process_end_is_death (&p->end))
    return NULL;
  line = g_string_new (NULL);
  if (p->end.kind == TIDE_END_EXITED)
    g_string_append_printf (line, "%s (pid %" G_GINT64_FORMAT ") exited with status %d", p->label,
                            p->pid, p->end.exit_code);
  else
    g_string_append_printf (line, "%s (pid %" G_GINT64_FORMAT ") was killed by %s", p->label, p->pid,
                            tide_signal_name (p->end.signal, name));
  if (p->end.core_dumped)
    g_string_append (line, " (core dumped)");
  if (s->end_step > 0)
    g_string_append_printf (line, " in step %d", s->end_step);
  if (oom != NULL)
    g_string_append_printf (line, ": %s", oom);
  if (s->job_bytes_at_end >= 0)
    {
      g_autofree char *held = tide_format_bytes (s->job_bytes_at_end);

      g_string_append_printf (line, "; the job held %s (%s)", held,
                              s->job_bytes_by_pss ? "PSS" : "RSS summed over processes");
    }
  return g_string_free (line, FALSE);
}

static gint
compare_summaries_by_host (gconstpointer a,
                           gconstpointer b)
{
  return tide_process_compare_by_host ((*(TideProcessSummary **) a)->process,
                                       (*(TideProcessSummary **) b)->process);
}

/**
 * tide_report_processes:
 *
 * Returns: (transfer full): a #TideProcessSummary per process of the job,
 *   in the order the recorder saw them; in a merged trace grouped by host
 */
GPtrArray *
tide_report_processes (TideTrace  *trace,
                       GError    **error)
{
  g_autoptr(GPtrArray) summaries = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_process_summary_free);
  g_autoptr(GPtrArray) processes = tide_trace_list_processes (trace, error);
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) ooms = NULL;

  if (processes == NULL ||
      (suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, error)) == NULL ||
      (ooms = tide_report_device_ooms (trace, suspects, error)) == NULL)
    return NULL;
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcessSummary *s = g_new0 (TideProcessSummary, 1);
      TideProcess *parent;

      s->process = g_ptr_array_index (processes, i);
      s->device_ooms = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_device_oom_free);
      for (guint k = 0; k < ooms->len; k++)
        if (((TideDeviceOom *) g_ptr_array_index (ooms, k))->process.id == s->process->id)
          g_ptr_array_add (s->device_ooms, g_ptr_array_steal_index (ooms, k--));
      parent = tide_processes_find (processes, s->process->parent_id);
      s->parent_pid = parent != NULL ? parent->pid : 0;
      for (guint k = 0; k < suspects->len; k++)
        s->n_suspects +=
          ((TideGroup *) g_ptr_array_index (suspects, k))->process.id == s->process->id;
      g_ptr_array_add (summaries, s);
    }
  /* The summaries own the processes now. */
  g_ptr_array_set_free_func (processes, NULL);
  if (!add_rss_figures (trace, summaries, error) || !add_end_figures (trace, summaries, error))
    return NULL;
  g_ptr_array_sort (summaries, compare_summaries_by_host);
  return g_steal_pointer (&summaries);
}

/* ---- the job's peak ------------------------------------------------------------ */

/**
 * tide_report_job_by_pss:
 *
 * Whether the job's memory is told by PSS: the job has PSS readings, and
 * every process with RSS readings has some too, or lived at no moment
 * that the recorder read PSS at (it reads every live process at once), as
 * the shell that a wrapper script's `exec` replaced a few milliseconds in.
 * Else by RSS.  Per process, probes of counters_by_time, not a scan.
 */
gboolean
tide_report_job_by_pss (TideTrace  *trace,
                        gboolean   *by_pss,
                        GError    **error)
{
  sqlite3 *db;
  sqlite3_stmt *stmt;
  gint64 found;
  gboolean ok;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), FALSE);
  db = _tide_trace_get_db (trace);
  /* CROSS JOIN keeps SQLite probing the index process by process, where
   * it would scan every counter. */
  stmt = tide_sqlite_prepare (db, "SELECT EXISTS (SELECT 1 FROM processes a CROSS JOIN counters c"
                                  "  ON c.process_id = a.id AND c.counter = ?2 AND c.device = -1)"
                                  " AND NOT EXISTS (SELECT 1 FROM processes p"
                                  " WHERE EXISTS (SELECT 1 FROM counters r WHERE r.process_id = p.id"
                                  "  AND r.counter = ?1 AND r.device = -1) AND NOT EXISTS"
                                  " (SELECT 1 FROM counters s WHERE s.process_id = p.id"
                                  "  AND s.counter = ?2 AND s.device = -1)"
                                  " AND EXISTS (SELECT 1 FROM processes q CROSS JOIN counters o"
                                  "  ON o.process_id = q.id AND o.counter = ?2 AND o.device = -1"
                                  "  AND o.ts_ns >= p.start_ns"
                                  "  AND (p.end_ns IS NULL OR o.ts_ns <= p.end_ns)))",
                              TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int (stmt, 1, TIDE_COUNTER_RSS);
  sqlite3_bind_int (stmt, 2, TIDE_COUNTER_PSS);
  ok = tide_sqlite_read_int (db, stmt, 0, &found, TIDE_REPORT_WHAT, error);
  *by_pss = found != 0;
  return ok;
}

/* The sweep of tide_report_job_peak(): readings of @counter and the ends
 * of processes, in time order; a reading is held until the process's next
 * one or its end.  An end at the time of a reading comes after it. */
static gboolean
sweep_job_peak (sqlite3      *db,
                gint          counter,
                gint          device,
                TideJobPeak  *peak,
                GError      **error)
{
  g_autoptr(GHashTable) held = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  sqlite3_stmt *stmt;
  gint64 total = 0;
  int rc;

  stmt = tide_sqlite_prepare (db, "SELECT process_id, ts_ns, value, 0 FROM counters"
                                  " WHERE counter = ?1 AND device = ?2"
                                  " UNION ALL SELECT id, end_ns, 0, 1 FROM processes"
                                  " WHERE end_ns IS NOT NULL"
                                  " ORDER BY 2, 4",
                              TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int (stmt, 1, counter);
  sqlite3_bind_int (stmt, 2, device);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 process_id = sqlite3_column_int64 (stmt, 0);
      gint64 ts_ns = sqlite3_column_int64 (stmt, 1);
      /* Memory is never negative: a damaged trace's value counts as 0. */
      gint64 value = MAX (sqlite3_column_int64 (stmt, 2), 0);
      gboolean is_end = sqlite3_column_int (stmt, 3) != 0;
      gint64 *last = g_hash_table_lookup (held, &process_id);

      if (last == NULL && is_end)
        continue;
      if (last == NULL)
        {
          gint64 *key = g_new (gint64, 1);

          *key = process_id;
          last = g_new0 (gint64, 1);
          g_hash_table_insert (held, key, last);
        }
      total = tide_sat_add (tide_sat_sub (total, *last), is_end ? 0 : value);
      *last = is_end ? 0 : value;
      if (!is_end && (total > peak->bytes || !peak->known))
        {
          peak->known = TRUE;
          peak->bytes = total;
          peak->ts_ns = ts_ns;
        }
    }
  return tide_sqlite_finish (db, stmt, rc, TIDE_REPORT_WHAT, error);
}

/* The step that was under way at @ts_ns (the lowest number, of any
 * process), or -1. */
static gboolean
step_at (sqlite3  *db,
         gint64    ts_ns,
         gint     *number,
         GError  **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT min (number) FROM steps"
                                                " WHERE start_ns <= ?1 AND end_ns >= ?1",
                                            TIDE_REPORT_WHAT, error);
  gint64 lowest;
  gboolean ok;

  if (stmt != NULL)
    sqlite3_bind_int64 (stmt, 1, ts_ns);
  ok = tide_sqlite_read_int (db, stmt, -1, &lowest, TIDE_REPORT_WHAT, error);
  *number = (gint) lowest;
  return ok;
}

typedef struct
{
  gint64 ts_ns;
  gint64 value;
} RssReading;

/* A process's RSS from a time on: the reading it held then, the later
 * ones in time order, and its end (a reading of 0). */
typedef struct
{
  gint64  process_id;
  gint64  end_ns;   /* -1: it never ended */
  gint64  held;     /* its RSS at the time asked, 0: none yet */
  GArray *later;    /* RssReading */
  guint   next;
} RssAfter;

static void
rss_after_clear (gpointer data)
{
  RssAfter *r = data;

  g_clear_pointer (&r->later, g_array_unref);
}

/* @sql's readings of each process's RSS, about @ts_ns, each to @add:
 * probes of counters_by_time, process by process, where a sweep of every
 * RSS reading of the job would sort them all. */
static gboolean
read_alive_rss (sqlite3     *db,
                GArray      *alive,
                const char  *sql,
                gint         counter,
                gint64       ts_ns,
                void       (*add) (RssAfter *r, const RssReading *reading),
                GError     **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, TIDE_REPORT_WHAT, error);
  int rc = SQLITE_DONE;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int (stmt, 2, counter);
  sqlite3_bind_int64 (stmt, 3, ts_ns);
  for (guint i = 0; i < alive->len && rc == SQLITE_DONE; i++)
    {
      RssAfter *r = &g_array_index (alive, RssAfter, i);

      sqlite3_reset (stmt);
      sqlite3_bind_int64 (stmt, 1, r->process_id);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        add (r, &(RssReading) { sqlite3_column_int64 (stmt, 0),
                                MAX (sqlite3_column_int64 (stmt, 1), 0) });
    }
  return tide_sqlite_finish (db, stmt, rc, TIDE_REPORT_WHAT, error);
}

static void
hold_reading (RssAfter         *r,
              const RssReading *reading)
{
  r->held = reading->value;
}

static void
add_later_reading (RssAfter         *r,
                   const RssReading *reading)
{
  g_array_append_val (r->later, *reading);
}

static void
read_alive_row (sqlite3_stmt *stmt,
                gpointer      row,
                gpointer      user_data)
{
  RssAfter *r = row;

  r->process_id = sqlite3_column_int64 (stmt, 0);
  r->end_ns = sqlite3_column_int64 (stmt, 1);
}

/* The processes alive at @ts_ns, each with its @counter (RSS or its
 * anonymous part) then. */
static GArray *
load_alive_rss (sqlite3  *db,
                gint      counter,
                gint64    ts_ns,
                GError  **error)
{
  g_autoptr(GArray) alive = NULL;
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT id, coalesce (end_ns, -1) FROM processes"
                                                " WHERE start_ns <= ?1"
                                                " AND (end_ns IS NULL OR end_ns > ?1)",
                                            TIDE_REPORT_WHAT, error);

  if (stmt != NULL)
    sqlite3_bind_int64 (stmt, 1, ts_ns);
  alive = tide_sqlite_read_rows (db, stmt, sizeof (RssAfter), read_alive_row, NULL,
                                 TIDE_REPORT_WHAT, error);
  if (alive == NULL)
    return NULL;
  g_array_set_clear_func (alive, rss_after_clear);
  if (!read_alive_rss (db, alive, "SELECT ts_ns, value FROM counters WHERE process_id = ?1"
                                  " AND counter = ?2 AND device = -1 AND ts_ns <= ?3"
                                  " ORDER BY ts_ns DESC LIMIT 1", counter, ts_ns, hold_reading,
                       error))
    return NULL;
  return g_steal_pointer (&alive);
}

/* Their readings of @counter after @ts_ns, and their ends. */
static gboolean
load_alive_rss_later (sqlite3  *db,
                      GArray   *alive,
                      gint      counter,
                      gint64    ts_ns,
                      GError  **error)
{
  for (guint i = 0; i < alive->len; i++)
    g_array_index (alive, RssAfter, i).later = g_array_new (FALSE, FALSE, sizeof (RssReading));
  if (!read_alive_rss (db, alive, "SELECT ts_ns, value FROM counters WHERE process_id = ?1"
                                  " AND counter = ?2 AND device = -1 AND ts_ns > ?3"
                                  " ORDER BY ts_ns", counter, ts_ns, add_later_reading, error))
    return FALSE;
  for (guint i = 0; i < alive->len; i++)
    {
      RssAfter *r = &g_array_index (alive, RssAfter, i);

      if (r->end_ns > ts_ns)
        add_later_reading (r, &(RssReading) { r->end_ns, 0 });
    }
  return TRUE;
}

/* The process whose next reading comes first, or -1 when none is left. */
static gint
next_in_time (GArray *alive)
{
  gint best = -1;

  for (guint i = 0; i < alive->len; i++)
    {
      const RssAfter *r = &g_array_index (alive, RssAfter, i);
      const RssAfter *b = best >= 0 ? &g_array_index (alive, RssAfter, best) : NULL;

      if (r->next < r->later->len &&
          (b == NULL || g_array_index (r->later, RssReading, r->next).ts_ns <
                        g_array_index (b->later, RssReading, b->next).ts_ns))
        best = (gint) i;
    }
  return best;
}

/* The highest of their RSS summed after the time they were loaded at,
 * from @total then, and *@when_ns it was reached; @total where it never
 * passed it. */
static gint64
highest_sum_later (GArray *alive,
                   gint64  total,
                   gint64 *when_ns)
{
  gint64 highest = total;
  gint next;

  while ((next = next_in_time (alive)) >= 0)
    {
      RssAfter *r = &g_array_index (alive, RssAfter, next);
      const RssReading *reading = &g_array_index (r->later, RssReading, r->next++);

      total = tide_sat_add (tide_sat_sub (total, r->held), reading->value);
      r->held = reading->value;
      if (total > highest)
        {
          highest = total;
          *when_ns = reading->ts_ns;
        }
    }
  return highest;
}

/* The processes alive at the peak's reading, with their @counter (RSS or
 * its anonymous part) then, and its sum in *@at_reading. */
static GArray *
alive_at_peak (sqlite3            *db,
               const TideJobPeak  *peak,
               gint                counter,
               gint64             *at_reading,
               GError            **error)
{
  GArray *alive = load_alive_rss (db, counter, peak->ts_ns, error);

  *at_reading = 0;
  for (guint i = 0; alive != NULL && i < alive->len; i++)
    *at_reading = tide_sat_add (*at_reading, g_array_index (alive, RssAfter, i).held);
  return alive;
}

/* PSS is read a few times a second at most (its walk of every page costs
 * milliseconds): a job whose memory peaked between two readings has a
 * peak reading below its peak.  The RSS, read every poll, says how much
 * the processes read at the peak grew after it, where it grew by more than
 * a 32nd of it, where those processes shared next to nothing then (their
 * RSS summed within a 16th of their PSS).  Else the RSS counts a page they
 * share once in each, and a worker that reads its parent's dataset would
 * raise it while the PSS stays: their anonymous memory says it then, read
 * at every step end of a process that steps.  A process maps a new
 * anonymous page as its own, and one that it shares (inherited at fork)
 * stays in its RSS when it is copied on write: so that memory rises no
 * more than their PSS does. */
static gboolean
add_rise_after (sqlite3      *db,
                TideJobPeak  *peak,
                GError      **error)
{
  g_autoptr(GArray) alive = NULL;
  gint64 at_reading, rise, rise_ns = 0;
  gint counter = TIDE_COUNTER_RSS;
  gboolean shared;

  if ((alive = alive_at_peak (db, peak, counter, &at_reading, error)) == NULL)
    return FALSE;
  shared = at_reading > peak->bytes + peak->bytes / 16;
  if (shared)
    {
      g_clear_pointer (&alive, g_array_unref);
      counter = TIDE_COUNTER_RSS_ANON;
      if ((alive = alive_at_peak (db, peak, counter, &at_reading, error)) == NULL)
        return FALSE;
    }
  if (!load_alive_rss_later (db, alive, counter, peak->ts_ns, error))
    return FALSE;
  rise = tide_sat_sub (highest_sum_later (alive, at_reading, &rise_ns), at_reading);
  if (rise <= MAX (TIDE_JOB_RISE_MIN, peak->bytes / 32))
    return TRUE;
  peak->rise_anon = shared;
  peak->rise_bytes = rise;
  peak->rise_ns = rise_ns;
  return step_at (db, rise_ns, &peak->rise_step, error);
}

/**
 * tide_report_job_peak:
 *
 * The job's memory at its peak, the one figure that the record summary,
 * `report --processes`, the job lane and its export give: at each reading,
 * the sum over the processes then alive of their last reading.  PSS, so
 * that pages that processes share count once, where
 * tide_report_job_by_pss() says so; else RSS summed, and said so.
 */
gboolean
tide_report_job_peak (TideTrace    *trace,
                      TideJobPeak  *peak,
                      GError      **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);

  g_return_val_if_fail (TIDE_IS_TRACE (trace), FALSE);
  *peak = (TideJobPeak) { .step = -1, .rise_step = -1 };
  if (!tide_report_job_by_pss (trace, &peak->by_pss, error) ||
      !sweep_job_peak (db, peak->by_pss ? TIDE_COUNTER_PSS : TIDE_COUNTER_RSS, -1, peak, error))
    return FALSE;
  if (!peak->known)
    return TRUE;
  if (!step_at (db, peak->ts_ns, &peak->step, error))
    return FALSE;
  return !peak->by_pss || add_rise_after (db, peak, error);
}

/**
 * tide_report_device_peaks:
 *
 * Returns: (transfer full) (element-type TideDevicePeak): per device with
 *   recorded blocks, in order, the most its processes' blocks held at
 *   once, swept as the job's peak is
 */
GArray *
tide_report_device_peaks (TideTrace  *trace,
                          GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  g_autoptr(GArray) peaks = g_array_new (FALSE, TRUE, sizeof (TideDevicePeak));
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  stmt = tide_sqlite_prepare (db, "SELECT DISTINCT device FROM counters WHERE counter = ?1"
                                  " AND device BETWEEN 0 AND 32767 ORDER BY device",
                              TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int (stmt, 1, TIDE_COUNTER_DEVICE_ALLOCATED);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideDevicePeak peak = { .device = sqlite3_column_int (stmt, 0) };

      g_array_append_val (peaks, peak);
    }
  if (!tide_sqlite_finish (db, stmt, rc, TIDE_REPORT_WHAT, error))
    return NULL;
  for (guint i = 0; i < peaks->len; i++)
    {
      TideDevicePeak *peak = &g_array_index (peaks, TideDevicePeak, i);
      TideJobPeak sweep = { .step = -1 };

      if (!sweep_job_peak (db, TIDE_COUNTER_DEVICE_ALLOCATED, peak->device, &sweep, error))
        return NULL;
      peak->bytes = sweep.bytes;
      peak->ts_ns = sweep.ts_ns;
    }
  return g_steal_pointer (&peaks);
}

/* "its RSS rose 80.00 MiB more after that reading, by step 25", or NULL
 * where it did not (tide_report_job_peak()). */
char *
tide_job_peak_describe_rise (const TideJobPeak *peak)
{
  g_autofree char *size = NULL;
  const char *what;

  if (!peak->known || peak->rise_bytes <= 0)
    return NULL;
  size = tide_format_bytes (peak->rise_bytes);
  what = peak->rise_anon ? "its anonymous memory" : "its RSS";
  if (peak->rise_step < 0)
    return g_strdup_printf ("%s rose %s more after that reading", what, size);
  return g_strdup_printf ("%s rose %s more after that reading, by step %d", what, size,
                          peak->rise_step);
}

/* "job peak PSS 236.49 MiB", "peak RSS summed over processes 12.00 MiB",
 * or "no memory readings". */
char *
tide_job_peak_describe (const TideJobPeak *peak)
{
  g_autofree char *size = NULL;

  if (!peak->known)
    return g_strdup ("no memory readings");
  size = tide_format_bytes (peak->bytes);
  return g_strdup_printf ("%s %s", peak->by_pss ? "job peak PSS" : "peak RSS summed over processes",
                          size);
}

/* ---- --process ------------------------------------------------------------------ */

static void
set_no_process_error (TideTrace              *trace,
                      const TideProcessSpec  *spec,
                      GError                **error)
{
  g_autofree char *what = tide_process_spec_describe (spec);

  g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_FOUND,
               "%s has no process with %s", tide_trace_get_path (trace), what);
}

/**
 * tide_report_process_ids:
 *
 * Returns: (transfer full): the processes.id of every process that @spec
 *   names, as a set of gint64; %NULL with @error set when there is none
 */
GHashTable *
tide_report_process_ids (TideTrace              *trace,
                         const TideProcessSpec  *spec,
                         GError                **error)
{
  g_autoptr(GPtrArray) processes = tide_trace_list_processes (trace, error);
  g_autoptr(GHashTable) ids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  if (processes == NULL)
    return NULL;
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);

      if (tide_process_spec_matches (spec, p))
        g_hash_table_add (ids, g_memdup2 (&p->id, sizeof p->id));
    }
  if (g_hash_table_size (ids) == 0)
    {
      set_no_process_error (trace, spec, error);
      return NULL;
    }
  return g_steal_pointer (&ids);
}

static gint64
step_process_id (gconstpointer item)
{
  return ((const TideStepRow *) item)->process.id;
}

static gint64
group_process_id (gconstpointer item)
{
  return ((const TideGroup *) item)->process.id;
}

static gint64
summary_process_id (gconstpointer item)
{
  return ((const TideProcessSummary *) item)->process->id;
}

static gint64
class_suspect_process_id (gconstpointer item)
{
  return ((const TideClassSuspect *) item)->process.id;
}

static void
keep_processes (GPtrArray  *items,
                gint64    (*process_id_of) (gconstpointer item),
                GHashTable *ids)
{
  for (guint i = items->len; i > 0; i--)
    {
      gint64 id = process_id_of (g_ptr_array_index (items, i - 1));

      if (!g_hash_table_contains (ids, &id))
        g_ptr_array_remove_index (items, i - 1);
    }
}

/* Narrow a report's rows to the processes of tide_report_process_ids(). */
void
tide_report_keep_steps (GPtrArray  *rows,
                        GHashTable *ids)
{
  keep_processes (rows, step_process_id, ids);
}

void
tide_report_keep_groups (GPtrArray  *groups,
                         GHashTable *ids)
{
  keep_processes (groups, group_process_id, ids);
}

void
tide_report_keep_summaries (GPtrArray  *summaries,
                            GHashTable *ids)
{
  keep_processes (summaries, summary_process_id, ids);
}

void
tide_report_keep_class_suspects (GPtrArray  *suspects,
                                 GHashTable *ids)
{
  keep_processes (suspects, class_suspect_process_id, ids);
}

/* ---- the process to show ---------------------------------------------------------- */

/**
 * tide_report_pick_process:
 * @spec: (nullable): a --process argument; %NULL: the process with the top
 *   leak suspect, or else the one whose RSS grew most
 *
 * Of several images of one pid (an exec), the first that marked steps.
 *
 * Returns: a processes.id; 0 with @error set when @spec names none, or
 *   without @error when the trace has no process
 */
gint64
tide_report_pick_process (TideTrace              *trace,
                          const TideProcessSpec  *spec,
                          GError                **error)
{
  g_autoptr(GPtrArray) processes = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) summaries = NULL;
  TideProcessSummary *grew_most = NULL;
  TideProcess *best = NULL;

  if (spec != NULL)
    {
      if ((processes = tide_trace_list_processes (trace, error)) == NULL)
        return 0;
      for (guint i = 0; i < processes->len; i++)
        {
          TideProcess *p = g_ptr_array_index (processes, i);
          if (tide_process_spec_matches (spec, p) &&
              (best == NULL || (p->has_steps && !best->has_steps)))
            best = p;
        }
      if (best == NULL)
        set_no_process_error (trace, spec, error);
      return best != NULL ? best->id : 0;
    }
  if ((suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, error)) == NULL)
    return 0;
  if (suspects->len > 0)
    return ((TideGroup *) g_ptr_array_index (suspects, 0))->process.id;
  if ((summaries = tide_report_processes (trace, error)) == NULL)
    return 0;
  for (guint i = 0; i < summaries->len; i++)
    {
      TideProcessSummary *s = g_ptr_array_index (summaries, i);
      if (grew_most == NULL || s->rss_growth > grew_most->rss_growth)
        grew_most = s;
    }
  return grew_most != NULL ? grew_most->process->id : 0;
}
