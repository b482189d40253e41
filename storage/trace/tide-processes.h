/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The processes of a job and what each one is: a distributed rank, a
 * DataLoader worker, the launcher of those, a helper process, or otherwise
 * its command.  Reports and the app name a process by its role, as in
 * "rank 1 (pid 4242)".
 */
#pragma once

#include <sqlite3.h>

#include "tide-process-end.h"
#include "tide-trace.h"

G_BEGIN_DECLS

/* Values of processes.role (schema 3). */
typedef enum
{
  TIDE_ROLE_COMMAND       = 0,  /* none of the others: named by its command */
  TIDE_ROLE_RANK          = 1,  /* a torch.distributed rank */
  TIDE_ROLE_LOADER_WORKER = 2,  /* a DataLoader worker */
  TIDE_ROLE_LAUNCHER      = 3,  /* a parent of ranks (or of workers, not stepping itself) */
  TIDE_ROLE_HELPER        = 4,  /* multiprocessing's resource tracker and the like */
} TideProcessRole;

typedef struct
{
  gint64          id;           /* processes.id */
  gint64          pid;
  gint64          parent_id;    /* 0: none */
  gint64          start_ns;
  gint64          end_ns;       /* 0: still running when the trace ended */
  TideProcessRole role;
  gint            dist_rank;    /* -1 outside a distributed job */
  gint            worker;       /* DataLoader worker index, -1 if none */
  gboolean        has_steps;    /* it marked steps of its own */
  char           *command;      /* its command line, program by its base name */
  char           *label;       /* "rank 1", "DataLoader worker 0", "launcher", "helper",
                                 * or the command; in a merged trace with " on HOST" */
  char           *host;         /* merged traces: the host it ran on; NULL otherwise */
  TideProcessEnd  end;          /* how it ended: TIDE_END_RUNNING without end_ns,
                                 * TIDE_END_UNKNOWN where the trace does not say
                                 * (traces from before process_ends) */
} TideProcess;

/* Which process a report's row belongs to, named as the reports name it
 * ("rank 1 (pid 4242)"): the steps, the suspects and the device failures
 * each carry one. */
typedef struct
{
  gint64   id;                  /* processes.id */
  gint64   pid;
  char    *role;                /* the process's label (TideProcess.label) */
  gint     dist_rank;           /* -1 outside a distributed job */
} TideProcessLabel;

/* A --process argument: a pid, or "rank:N". */
typedef struct
{
  gint64   pid;                 /* 0 when by rank */
  gint     dist_rank;           /* -1 when by pid */
} TideProcessSpec;

void         tide_process_free          (TideProcess       *process);
GPtrArray   *tide_trace_list_processes  (TideTrace         *trace,
                                         GError           **error);
TideProcess *tide_processes_find        (GPtrArray         *processes,
                                         gint64             process_id);
char        *tide_process_describe      (const TideProcess *process);
gint         tide_process_compare_by_host (const TideProcess *a,
                                           const TideProcess *b);
void         tide_processes_sort_by_host (GPtrArray        *processes);
char        *tide_process_picker_name   (const TideProcess *process,
                                         guint              n_suspects);
gboolean     tide_process_spec_parse    (const char        *text,
                                         TideProcessSpec   *spec);
gboolean     tide_process_spec_matches  (const TideProcessSpec *spec,
                                         const TideProcess     *process);
char        *tide_process_spec_describe (const TideProcessSpec *spec);
void         tide_process_label_set     (TideProcessLabel  *label,
                                         const TideProcess *process);
void         tide_process_label_clear   (TideProcessLabel  *label);

/* At the end of a capture: gives every process its role (tide-analysis.c). */
gboolean     tide_processes_store_roles (sqlite3           *db,
                                         GError           **error);

G_END_DECLS
