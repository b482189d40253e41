/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Roles of the processes of a job.  A process tells the recorder its
 * distributed rank (from RANK, or from torch.distributed once its process
 * group is up) and, in a DataLoader worker, the worker's index; the rest
 * follows from the process tree and command lines when the capture ends:
 *
 *   helper         its command names a helper of multiprocessing or torch
 *   worker         it said it is a DataLoader worker
 *   rank           it said its rank
 *   launcher       a parent of ranks, or of workers when it has no steps
 *                  of its own
 *   command        anything else, named by its command
 *
 * Traces of schema 1 and 2 have no stored roles: they get the same rules
 * when they are read, without workers, which those traces never recorded.
 */
#include "config.h"

#include <string.h>

#include "tide-processes.h"
#include "tide-schema.h"
#include "tide-trace-private.h"

/* Command-line fragments of the helper processes that Python's
 * multiprocessing and torch start next to a job. */
static const char * const helper_commands[] = {
  "multiprocessing.resource_tracker",
  "multiprocessing.semaphore_tracker",
  "multiprocessing.forkserver",
  "torch_shm_manager",
};

void
tide_process_free (TideProcess *process)
{
  if (process == NULL)
    return;
  g_free (process->command);
  g_free (process->label);
  g_free (process->host);
  g_free (process);
}

/* The command line with its program by base name: "python3 /src/train.py",
 * valid UTF-8 whatever the trace holds. */
static char *
short_command (const char *cmdline,
               const char *exe)
{
  const char *line = cmdline != NULL && *cmdline != '\0' ? cmdline : exe;
  const char *end, *slash;

  if (line == NULL || *line == '\0')
    return g_strdup ("?");
  end = strchr (line, ' ');
  if (end == NULL)
    end = line + strlen (line);
  slash = g_strrstr_len (line, end - line, "/");
  return g_utf8_make_valid (slash != NULL && slash + 1 < end ? slash + 1 : line, -1);
}

#define LABEL_MAX_CHARS 40

/* A command as a label: every absolute path by its base name, as in
 * "python3 train.py --epochs 3", cut at LABEL_MAX_CHARS. */
static char *
command_label (const char *command)
{
  g_auto(GStrv) words = g_strsplit (command, " ", -1);
  g_autofree char *joined = NULL;

  for (guint i = 0; words[i] != NULL; i++)
    {
      char *slash = strrchr (words[i], '/');

      if (words[i][0] == '/' && slash != NULL && slash[1] != '\0')
        memmove (words[i], slash + 1, strlen (slash + 1) + 1);
    }
  joined = g_strjoinv (" ", words);
  if (g_utf8_strlen (joined, -1) <= LABEL_MAX_CHARS)
    return g_steal_pointer (&joined);
  {
    g_autofree char *head = g_utf8_substring (joined, 0, LABEL_MAX_CHARS - 1);
    return g_strconcat (head, "…", NULL);
  }
}

static gboolean
is_helper (const TideProcess *p)
{
  for (guint i = 0; i < G_N_ELEMENTS (helper_commands); i++)
    if (strstr (p->command, helper_commands[i]) != NULL)
      return TRUE;
  return FALSE;
}

/* @processes: as tide_trace_list_processes() returns them, by id; a
 * binary search, so that a trace of many processes stays cheap. */
TideProcess *
tide_processes_find (GPtrArray *processes,
                     gint64     process_id)
{
  guint lo = 0, hi = processes->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      TideProcess *p = g_ptr_array_index (processes, mid);

      if (p->id == process_id)
        return p;
      if (p->id < process_id)
        lo = mid + 1;
      else
        hi = mid;
    }
  return NULL;
}

/* A parent of ranks is their launcher; so is a parent of DataLoader workers
 * that does not step itself (one that does is the training process, named
 * by its command).  A worker started by rank N works for rank N. */
static void
derive_from_children (GPtrArray *processes)
{
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);
      TideProcess *parent = tide_processes_find (processes, p->parent_id);

      if (parent == NULL || parent == p)
        continue;
      if (parent->role == TIDE_ROLE_COMMAND &&
          (p->role == TIDE_ROLE_RANK || (p->role == TIDE_ROLE_LOADER_WORKER && !parent->has_steps)))
        parent->role = TIDE_ROLE_LAUNCHER;
      if (p->role == TIDE_ROLE_LOADER_WORKER && p->dist_rank < 0)
        p->dist_rank = parent->dist_rank;
    }
}

/* The rules of the file comment, from what the processes said. */
static void
derive_roles (GPtrArray *processes)
{
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);

      if (is_helper (p))
        p->role = TIDE_ROLE_HELPER;
      else if (p->worker >= 0)
        p->role = TIDE_ROLE_LOADER_WORKER;
      else if (p->dist_rank >= 0)
        p->role = TIDE_ROLE_RANK;
      else
        p->role = TIDE_ROLE_COMMAND;
    }
  derive_from_children (processes);
}

static char *
role_label (const TideProcess *p)
{
  switch (p->role)
    {
    case TIDE_ROLE_RANK:
      return g_strdup_printf ("rank %d", p->dist_rank);
    case TIDE_ROLE_LOADER_WORKER:
      return g_strdup_printf ("DataLoader worker %d", p->worker);
    case TIDE_ROLE_LAUNCHER:
      return g_strdup ("launcher");
    case TIDE_ROLE_HELPER:
      return g_strdup ("helper");
    case TIDE_ROLE_COMMAND:
    default:
      return command_label (p->command);
    }
}

/* A stored role is untrusted input: one that does not fit the rest of its
 * row falls back to the command. */
static TideProcessRole
checked_role (gint64             stored,
              const TideProcess *p)
{
  if ((stored == TIDE_ROLE_RANK && p->dist_rank < 0) ||
      (stored == TIDE_ROLE_LOADER_WORKER && p->worker < 0) ||
      stored < TIDE_ROLE_COMMAND || stored > TIDE_ROLE_HELPER)
    return TIDE_ROLE_COMMAND;
  return (TideProcessRole) stored;
}

static gint
column_index_or_none (sqlite3_stmt *stmt,
                      int           col)
{
  gint64 value = sqlite3_column_int64 (stmt, col);

  if (sqlite3_column_type (stmt, col) == SQLITE_NULL || value < 0 || value > G_MAXINT)
    return -1;
  return (gint) value;
}

static gboolean
has_role_columns (sqlite3 *db)
{
  /* A failed prepare is the answer: the columns are not there. */
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT worker, role FROM processes LIMIT 0", "",
                                            NULL);

  sqlite3_finalize (stmt);
  return stmt != NULL;
}

static TideProcess *
read_process (sqlite3_stmt *stmt)
{
  TideProcess *p = g_new0 (TideProcess, 1);

  p->id = sqlite3_column_int64 (stmt, 0);
  p->pid = sqlite3_column_int64 (stmt, 1);
  p->parent_id = sqlite3_column_int64 (stmt, 2);
  p->start_ns = sqlite3_column_int64 (stmt, 3);
  p->end_ns = sqlite3_column_int64 (stmt, 4);
  p->dist_rank = column_index_or_none (stmt, 5);
  p->worker = column_index_or_none (stmt, 6);
  p->command = short_command ((const char *) sqlite3_column_text (stmt, 8),
                              (const char *) sqlite3_column_text (stmt, 9));
  p->has_steps = sqlite3_column_int (stmt, 10) != 0;
  p->role = checked_role (sqlite3_column_int64 (stmt, 7), p);
  /* No end recorded: it ran until the trace ended (or the recorder died). */
  if (p->end_ns == 0)
    p->end.kind = TIDE_END_RUNNING;
  return p;
}

typedef void (*ProcessRowFunc) (TideProcess  *p,
                                sqlite3_stmt *stmt);

/* Hands each row of @sql to @apply with the process that its first column
 * names, skipping rows of no process.  @table holds the rows: newer than
 * the processes table, so a trace without it reads as having none. */
static gboolean
apply_process_rows (sqlite3         *db,
                    GPtrArray       *processes,
                    const char      *table,
                    const char      *sql,
                    const char      *what,
                    ProcessRowFunc   apply,
                    GError         **error)
{
  sqlite3_stmt *stmt;
  int rc;

  if (!tide_sqlite_has (db, "table", table))
    return TRUE;
  stmt = tide_sqlite_prepare (db, sql, what, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideProcess *p = tide_processes_find (processes, sqlite3_column_int64 (stmt, 0));

      if (p != NULL)
        apply (p, stmt);
    }
  return tide_sqlite_finish (db, stmt, rc, what, error);
}

/* In a merged trace (tide-trace-merge.h), the host each process ran on. */
static void
read_host (TideProcess  *p,
           sqlite3_stmt *stmt)
{
  const char *host = (const char *) sqlite3_column_text (stmt, 1);

  if (host != NULL && p->host == NULL)
    p->host = g_utf8_make_valid (host, -1);
}

/* How a process ended, from a process_ends row, every value checked: the
 * trace is untrusted, and a value out of range reads as an unknown end. */
static void
read_end (TideProcess  *p,
          sqlite3_stmt *stmt)
{
  TideProcessEnd *end = &p->end;
  gint64 kind = sqlite3_column_int64 (stmt, 1);
  gint64 code = sqlite3_column_int64 (stmt, 2);
  gint64 signal = sqlite3_column_int64 (stmt, 3);
  gint64 oom = sqlite3_column_int64 (stmt, 5);
  gint64 limit = sqlite3_column_int64 (stmt, 6);

  /* A process still running has no end yet, whatever the row says. */
  if (p->end_ns == 0)
    return;
  memset (end, 0, sizeof *end);
  if ((kind == TIDE_END_EXITED && (code < 0 || code > 255)) ||
      (kind == TIDE_END_SIGNALED && (signal < 1 || signal > 64)) ||
      kind < TIDE_END_UNKNOWN || kind > TIDE_END_RUNNING)
    return;
  end->kind = kind;
  if (kind == TIDE_END_EXITED)
    end->exit_code = code;
  if (kind != TIDE_END_SIGNALED)
    return;
  end->signal = signal;
  end->core_dumped = sqlite3_column_int64 (stmt, 4) != 0;
  end->oom = oom >= TIDE_OOM_NONE && oom <= TIDE_OOM_MACHINE ? oom : TIDE_OOM_NONE;
  end->limit_bytes = end->oom != TIDE_OOM_NONE && limit > 0 ? limit : 0;
}

/* Whether a process died after a device allocation failed, with no
 * success after it on that device (tide-device-oom.h). */
static void
read_device_oom (TideProcess  *p,
                 sqlite3_stmt *stmt)
{
  gint64 device = sqlite3_column_int64 (stmt, 1);

  if (!tide_process_end_is_death (&p->end) || device < -1 || device > G_MAXINT16)
    return;
  p->end.device_oom = TRUE;
  p->end.oom_device = (gint) device;
}

/* The hosts, the ends, then the device failures, which need the ends. */
static gboolean
load_process_details (sqlite3    *db,
                      GPtrArray  *processes,
                      GError    **error)
{
  return apply_process_rows (db, processes, "merge_processes",
                             "SELECT m.process_id, coalesce (s.host, s.path)"
                             " FROM merge_processes m JOIN merge_sources s"
                             " ON s.id = m.source_id", "cannot read the hosts",
                             read_host, error) &&
         apply_process_rows (db, processes, "process_ends",
                             "SELECT process_id, kind, exit_code, signal, core_dumped, oom,"
                             " limit_bytes FROM process_ends",
                             "cannot read how the processes ended", read_end, error) &&
         apply_process_rows (db, processes, "alloc_failures",
                             "SELECT process_id, device FROM alloc_failures WHERE recovered = 0"
                             " ORDER BY ts_ns", "cannot read the failed allocations",
                             read_device_oom, error);
}

/* Every process with its role: the stored one, or derived when the trace
 * has none (schema 1 and 2, or a capture that did not finish) or when
 * @derive asks for it. */
static GPtrArray *
load_processes (sqlite3  *db,
                gboolean  derive,
                GError  **error)
{
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_process_free);
  gboolean stored = has_role_columns (db);
  g_autofree char *sql = g_strdup_printf (
    "SELECT id, pid, coalesce (parent_id, 0), start_ns, coalesce (end_ns, 0), rank, %s,"
    "  cmdline, exe, EXISTS (SELECT 1 FROM steps s WHERE s.process_id = processes.id)"
    " FROM processes ORDER BY id",
    stored ? "worker, role" : "NULL, NULL");
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, "cannot read the processes", error);
  int rc;

  if (stmt == NULL)
    return NULL;
  derive = derive || !stored;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      derive = derive || sqlite3_column_type (stmt, 7) == SQLITE_NULL;
      g_ptr_array_add (processes, read_process (stmt));
    }
  if (!tide_sqlite_finish (db, stmt, rc, "cannot read the processes", error))
    return NULL;
  if (derive)
    derive_roles (processes);
  if (!load_process_details (db, processes, error))
    return NULL;
  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);
      g_autofree char *role = role_label (p);

      p->label = p->host ? g_strdup_printf ("%s on %s", role, p->host) : g_steal_pointer (&role);
    }
  return g_steal_pointer (&processes);
}

/**
 * tide_trace_list_processes:
 *
 * Returns: (transfer full) (element-type TideProcess): every process of the
 *   trace, in the order the recorder saw them
 */
GPtrArray *
tide_trace_list_processes (TideTrace  *trace,
                           GError    **error)
{
  return load_processes (_tide_trace_get_db (trace), FALSE, error);
}

gboolean
tide_processes_store_roles (sqlite3  *db,
                            GError  **error)
{
  g_autoptr(GPtrArray) processes = NULL;
  sqlite3_stmt *stmt;
  gboolean ok = TRUE;

  /* An unfinished trace of schema 1 or 2, summarized in memory. */
  if (!has_role_columns (db))
    return TRUE;
  processes = load_processes (db, TRUE, error);
  stmt = processes ? tide_sqlite_prepare (db, "UPDATE processes SET role = ?2, rank = ?3"
                                              " WHERE id = ?1", "cannot store roles", error)
                   : NULL;
  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; ok && i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);

      sqlite3_bind_int64 (stmt, 1, p->id);
      sqlite3_bind_int (stmt, 2, p->role);
      if (p->dist_rank >= 0)
        sqlite3_bind_int (stmt, 3, p->dist_rank);
      else
        sqlite3_bind_null (stmt, 3);
      ok = tide_sqlite_step_done (db, stmt, "cannot store roles", error);
    }
  sqlite3_finalize (stmt);
  return ok;
}

/* How the app's process picker lists a process: its role and command, and
 * its leak suspects if it has any: "rank 1 · python3 train.py · 2 suspects";
 * in a merged trace, with its host: "rank 1 on node-b · python3 train.py". */
char *
tide_process_picker_name (const TideProcess *process,
                          guint              n_suspects)
{
  g_autofree char *command = command_label (process->command);
  g_autofree char *suspects = n_suspects == 0 ? g_strdup ("")
                              : g_strdup_printf (" · %u suspect%s", n_suspects,
                                                 n_suspects == 1 ? "" : "s");

  if (process->role == TIDE_ROLE_COMMAND)
    return g_strconcat (process->label ? process->label : command, suspects, NULL);
  return g_strdup_printf ("%s · %s%s", process->label, command, suspects);
}

/* Processes grouped by host (those without one first), in the order the
 * recorders saw them within a host. */
gint
tide_process_compare_by_host (const TideProcess *a,
                              const TideProcess *b)
{
  gint by_host = g_strcmp0 (a->host, b->host);

  if (by_host != 0)
    return by_host;
  return (a->id > b->id) - (a->id < b->id);
}

static gint
compare_by_host (gconstpointer a,
                 gconstpointer b)
{
  return tide_process_compare_by_host (*(TideProcess * const *) a, *(TideProcess * const *) b);
}

/* @processes (TideProcess) host by host, in the order the recorders saw
 * them within a host: as `report --processes`, the app's process list
 * and its job lane order them. */
void
tide_processes_sort_by_host (GPtrArray *processes)
{
  g_ptr_array_sort (processes, compare_by_host);
}

/* "rank 1 (pid 4242)" */
char *
tide_process_describe (const TideProcess *process)
{
  return g_strdup_printf ("%s (pid %" G_GINT64_FORMAT ")", process->label, process->pid);
}

gboolean
tide_process_spec_parse (const char      *text,
                         TideProcessSpec *spec)
{
  guint64 value = 0;
  gboolean by_rank = g_str_has_prefix (text, "rank:");

  if (!g_ascii_string_to_unsigned (by_rank ? text + 5 : text, 10, by_rank ? 0 : 1,
                                   G_MAXINT, &value, NULL))
    return FALSE;
  spec->pid = by_rank ? 0 : (gint64) value;
  spec->dist_rank = by_rank ? (gint) value : -1;
  return TRUE;
}

gboolean
tide_process_spec_matches (const TideProcessSpec *spec,
                           const TideProcess     *process)
{
  if (spec->pid > 0)
    return process->pid == spec->pid;
  return process->role == TIDE_ROLE_RANK && process->dist_rank == spec->dist_rank;
}

/* "pid 4242" or "rank 1", for messages. */
char *
tide_process_spec_describe (const TideProcessSpec *spec)
{
  if (spec->pid > 0)
    return g_strdup_printf ("pid %" G_GINT64_FORMAT, spec->pid);
  return g_strdup_printf ("rank %d", spec->dist_rank);
}

/* Names @label by @process: its id, pid, label and rank.  @process: (nullable):
 * a process that the trace does not list, named "?" and without a rank;
 * @label's id and pid stay as they were. */
void
tide_process_label_set (TideProcessLabel  *label,
                        const TideProcess *process)
{
  g_free (label->role);
  label->role = g_strdup (process != NULL ? process->label : "?");
  label->dist_rank = process != NULL ? process->dist_rank : -1;
  if (process == NULL)
    return;
  label->id = process->id;
  label->pid = process->pid;
}

/* Frees what @label holds, not @label: the rows hold theirs by value. */
void
tide_process_label_clear (TideProcessLabel *label)
{
  g_clear_pointer (&label->role, g_free);
}
