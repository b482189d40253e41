/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

#include <linux/types.h>

#include "tide-address-space.h"
#include "tide-attach-event.h"
#include "tide-attach.h"
#include "tide-live-table.h"
#include "tide-procfs.h"
#include "tide-stack-table.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

typedef struct _TideAttach TideAttach;

/* One followed process image (a fork or an exec makes a new one). */
typedef struct
{
  TideAttach       *attach;
  gint64            id;              /* processes.id */
  pid_t             pid;
  gint64            start_ns;
  gint64            end_ns;
  gint64            last_step_end_ns;
  gint              n_steps;
  gboolean          maps_dirty;      /* an executable mapping changed */

  TideAddressSpace *space;
  GTree            *pages;           /* page address -> PageRecord*, sampled pages */
  TideLiveTable    *live;            /* --uprobes malloc blocks */
  TideProcCounters *counters;
  GHashTable       *threads;         /* tid -> threads.id */
  gint64            last_rss;
} TideAttachProcess;

struct _TideAttach
{
  const TideAttachOptions *options;
  TideTraceWriter         *writer;
  TideStackTable          *stacks;
  GPtrArray               *processes;   /* TideAttachProcess*, every image seen */
  guint                    sample_pages;
  gint64                   next_process_id;
  gint64                   next_thread_id;
  gint64                   next_step_id;
  gint64                   total_steps;
  guint64                  peak_rss;
};

/* An executable file mapping of /proc/PID/maps. */
typedef struct
{
  guint64  start;
  guint64  end;
  guint64  load_bias;   /* runtime address minus ELF vaddr */
  char    *path;
} TideAttachMapping;

/* tide-attach-maps.c: the executable file mappings of @pid, or NULL when
 * its maps cannot be read (the process is gone). */
GArray            *tide_attach_read_maps        (pid_t             pid);

/* tide-attach-process.c */
TideAttachProcess *tide_attach_process_new      (TideAttach        *attach,
                                                 pid_t              pid,
                                                 TideAttachProcess *parent,
                                                 gint64             start_ns);
void               tide_attach_process_event    (TideAttachProcess *self,
                                                 const TideBpfHeader *h);
void               tide_attach_process_step     (TideAttachProcess *self,
                                                 gint64             ts_ns,
                                                 const char        *label);
void               tide_attach_process_sample_rss (TideAttachProcess *self,
                                                   gint64             ts_ns,
                                                   gboolean           always);
void               tide_attach_process_end      (TideAttachProcess *self,
                                                 gint64             end_ns,
                                                 int                exit_status);
void               tide_attach_process_flush    (TideAttachProcess *self);
void               tide_attach_process_free     (TideAttachProcess *self);
TideAttachProcess *tide_attach_find_process     (TideAttach        *attach,
                                                 pid_t              pid);

G_END_DECLS
