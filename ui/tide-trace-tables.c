/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTraceTables: the rows that several views show of one trace, read
 * together when the session's trace is set (a file opened, or a live
 * capture reopened as it grows): its steps, the transfers counted in
 * them, its leak suspects by stack and by memory class, its processes,
 * and when those of them died.  The session holds one for its trace
 * (its "tables"), so the steps table, the suspects, the process picker
 * and the drill-down's step spans read the same rows, and no view is
 * handed a copy.  Made once and never changed: a newer trace makes new
 * tables.
 */
#include "config.h"

#include "tide-trace-tables.h"

#include "tide-process-end.h"
#include "tide-report-rss.h"
#include "tide-timeline-data.h"

struct _TideTraceTables
{
  GObject    parent_instance;

  GPtrArray *steps;           /* TideStepRow*, or NULL: see error */
  GArray    *transfers;       /* TideTransferMark, or NULL */
  GPtrArray *suspects;        /* TideGroup*, or NULL */
  GPtrArray *class_suspects;  /* TideClassSuspect*, or NULL */
  GPtrArray *processes;       /* TideProcess*, host by host, in the order they started */
  GArray    *deaths;          /* gint64: when processes of the job died, from the
                               * trace's start (the steps table's "Ended") */
  char      *death_message;   /* a line that says so, or NULL */
  char      *error;           /* why the steps could not be read, or NULL */
};

G_DEFINE_FINAL_TYPE (TideTraceTables, tide_trace_tables, G_TYPE_OBJECT)

static void
tide_trace_tables_finalize (GObject *object)
{
  TideTraceTables *self = TIDE_TRACE_TABLES (object);

  g_clear_pointer (&self->steps, g_ptr_array_unref);
  g_clear_pointer (&self->transfers, g_array_unref);
  g_clear_pointer (&self->suspects, g_ptr_array_unref);
  g_clear_pointer (&self->class_suspects, g_ptr_array_unref);
  g_clear_pointer (&self->processes, g_ptr_array_unref);
  g_clear_pointer (&self->deaths, g_array_unref);
  g_free (self->death_message);
  g_free (self->error);
  G_OBJECT_CLASS (tide_trace_tables_parent_class)->finalize (object);
}

static void
tide_trace_tables_class_init (TideTraceTablesClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tide_trace_tables_finalize;
}

static void
tide_trace_tables_init (TideTraceTables *self)
{
}

/* When processes of the job died (a signal, or an exit with an error),
 * and a line that says so for the banner: a dead job is news, in a file
 * opened and in a live capture as it happens. */
static void
read_deaths (TideTraceTables *self,
             TideTrace       *trace)
{
  const TideProcess *last = NULL;
  g_autofree char *how = NULL;
  const char *what;

  self->deaths = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; self->processes != NULL && i < self->processes->len; i++)
    {
      const TideProcess *p = g_ptr_array_index (self->processes, i);
      gint64 ns = p->end_ns - tide_trace_get_start_ns (trace);

      if (!tide_process_end_is_death (&p->end))
        continue;
      g_array_append_val (self->deaths, ns);
      if (last == NULL || p->end_ns >= last->end_ns)
        last = p;
    }
  if (last == NULL)
    return;
  how = tide_process_end_describe_short (&last->end);
  /* A signal killed it, or it exited with an error. */
  what = last->end.kind == TIDE_END_SIGNALED ? "died" : "failed";
  self->death_message = self->deaths->len == 1
    ? g_strdup_printf ("A process of the job %s: %s (pid %" G_GINT64_FORMAT ") %s.",
                       what, last->label, last->pid, how)
    : g_strdup_printf ("%u processes of the job died or failed; the last, %s (pid %"
                       G_GINT64_FORMAT "), %s.", self->deaths->len, last->label, last->pid, how);
}

/**
 * tide_trace_tables_new:
 *
 * Reads the tables of @trace.  A table that cannot be read is left out
 * (NULL); the steps' error says why they are missing.
 */
TideTraceTables *
tide_trace_tables_new (TideTrace *trace)
{
  TideTraceTables *self;
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);

  self = g_object_new (TIDE_TYPE_TRACE_TABLES, NULL);
  if ((self->steps = tide_report_steps (trace, &error)) == NULL)
    self->error = g_strdup (error->message);
  self->transfers = tide_timeline_transfers (trace, 0, NULL);
  self->suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  self->class_suspects = tide_report_class_suspects (trace, NULL);
  if ((self->processes = tide_trace_list_processes (trace, NULL)) != NULL)
    tide_processes_sort_by_host (self->processes);
  read_deaths (self, trace);
  return self;
}

/**
 * tide_trace_tables_get_steps:
 *
 * Returns: (transfer none) (nullable) (element-type TideStepRow): every
 *   process's steps, process by process
 */
GPtrArray *
tide_trace_tables_get_steps (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->steps;
}

/**
 * tide_trace_tables_get_transfers:
 *
 * Returns: (transfer none) (nullable) (element-type TideTransferMark)
 */
GArray *
tide_trace_tables_get_transfers (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->transfers;
}

/**
 * tide_trace_tables_get_suspects:
 *
 * Returns: (transfer none) (nullable) (element-type TideGroup): the leak
 *   suspects by stack, fastest growth first
 */
GPtrArray *
tide_trace_tables_get_suspects (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->suspects;
}

/**
 * tide_trace_tables_get_class_suspects:
 *
 * Returns: (transfer none) (nullable) (element-type TideClassSuspect)
 */
GPtrArray *
tide_trace_tables_get_class_suspects (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->class_suspects;
}

/**
 * tide_trace_tables_get_processes:
 *
 * Returns: (transfer none) (nullable) (element-type TideProcess): host by
 *   host, in the order they started, as `report --processes` lists them
 */
GPtrArray *
tide_trace_tables_get_processes (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->processes;
}

/**
 * tide_trace_tables_get_deaths:
 *
 * Returns: (transfer none) (element-type gint64): when processes of the
 *   job died, from the trace's start
 */
GArray *
tide_trace_tables_get_deaths (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->deaths;
}

/* A line for the banner when processes of the job died, or NULL. */
const char *
tide_trace_tables_get_death_message (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->death_message;
}

/* Why the steps could not be read, or NULL. */
const char *
tide_trace_tables_get_error (TideTraceTables *self)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);
  return self->error;
}

/**
 * tide_trace_tables_find_step:
 *
 * Returns: (transfer none) (nullable): step @number of the process
 *   @process_id, or NULL
 */
const TideStepRow *
tide_trace_tables_find_step (TideTraceTables *self,
                             gint64           process_id,
                             gint             number)
{
  g_return_val_if_fail (TIDE_IS_TRACE_TABLES (self), NULL);

  for (guint i = 0; self->steps != NULL && i < self->steps->len; i++)
    {
      const TideStepRow *row = g_ptr_array_index (self->steps, i);

      if (row->process.id == process_id && row->number == number)
        return row;
    }
  return NULL;
}
