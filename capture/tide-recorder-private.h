/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

#include <sys/types.h>

#include "tide-address-space.h"
#include "tide-live-table.h"
#include "tide-procfs.h"
#include "tide-recorder.h"
#include "tide-stack-table.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

typedef struct _TideRecorder TideRecorder;

/* One connected process image (a fork or an exec makes a new one). */
typedef struct
{
  TideRecorder     *recorder;
  int               fd;             /* -1 once the connection closed */
  gint64            id;             /* processes.id */
  pid_t             pid;
  pid_t             ppid;
  gint64            start_ns;
  gint64            end_ns;
  gint64            last_step_end_ns;
  gint              n_steps;
  gboolean          all_mode;
  guint64           sample_bytes;
  gint64            dropped;
  gint64            protocol_errors;

  TideAddressSpace *space;
  TideLiveTable    *live;
  TideProcCounters *counters;
  TidePagemap      *pagemap;
  GHashTable       *threads;        /* tid -> threads.id */
  GHashTable       *scopes;         /* local scope id -> Scope* */

  double            heap_live;      /* estimated live bytes, for the counters */
  double            mapped_live;
  gint64            written_heap;
  gint64            written_mapped;
  gint64            last_rss;
  gint64            last_rss_shared;
} TideRecProcess;

struct _TideRecorder
{
  const TideRecordOptions *options;
  TideTraceWriter         *writer;
  TideStackTable          *stacks;

  char                    *socket_dir;
  char                    *socket_path;
  int                      listen_fd;
  int                      signal_fd;
  int                      timer_fd;

  GPtrArray               *processes;      /* TideRecProcess*, every image seen */
  GPtrArray               *pending;        /* accepted fds whose HELLO has not come */
  gint64                   next_process_id;
  gint64                   next_thread_id;
  gint64                   next_scope_id;
  gint64                   next_step_id;
  gint64                   next_alloc_id;

  pid_t                    child;
  int                      child_status;
  gint64                   child_exit_ns;
  gboolean                 child_exited;

  gint64                   start_ns;
  guint64                  peak_rss;
  gint64                   total_steps;
  gint64                   total_dropped;
  guint8                  *rx_buffer;
};

gint64          tide_recorder_now_ns           (void);

TideRecProcess *tide_rec_process_new           (TideRecorder   *recorder,
                                                int             fd,
                                                const void     *hello,
                                                gsize           hello_len,
                                                GError        **error);
gboolean        tide_rec_process_receive       (TideRecProcess *self,
                                                const guint8   *message,
                                                gsize           len);
void            tide_rec_process_poll          (TideRecProcess *self,
                                                gint64          now_ns);
void            tide_rec_process_end           (TideRecProcess *self,
                                                gint64          end_ns);
void            tide_rec_process_flush_live    (TideRecProcess *self);
void            tide_rec_process_free          (TideRecProcess *self);
void            tide_rec_process_measure_residency (TideRecProcess *self,
                                                    gint64          step_id,
                                                    gint64          step_start_ns,
                                                    gint64          step_end_ns);

G_END_DECLS
