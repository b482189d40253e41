/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

#include <sys/types.h>

#include "tide-address-space.h"
#include "tide-live-table.h"
#include "tide-nvml.h"
#include "tide-procfs.h"
#include "tide-recorder.h"
#include "tide-stack-cache.h"
#include "tide-stack-table.h"
#include "tide-step-accumulator.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

typedef struct _TideRecorder TideRecorder;

/* Device indexes the per-device counters keep (the wire allows int16). */
#define TIDE_REC_MAX_DEVICES 64

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
  TideStackCache   *stack_cache;    /* raw stacks -> ids, while space and pycodes hold */
  TideLiveTable    *live;
  TideStepAccumulator *steps_acc;   /* step_series and step_stats, as records arrive */
  TideLiveTable    *device_live;    /* device and pinned blocks: their addresses
                                     * may repeat host ones (registered memory) */
  TideProcCounters *counters;
  TidePagemap      *pagemap;
  GHashTable       *threads;        /* tid -> threads.id */
  guint32           last_tid;       /* the last tid looked up, 0: none ... */
  gint64            last_thread_id; /* ... and its threads.id: a message holds
                                     * one thread's records */
  GHashTable       *scopes;         /* local scope id -> Scope* */
  GHashTable       *pycodes;        /* PYFRAME_DEF id -> TidePyCode* */
  guint64           pycode_defs;    /* PYFRAME_DEFs received */
  gint              rank;           /* torch.distributed rank, -1: unknown */

  gint64            written_heap;
  gint64            written_mapped;
  gint64            last_rss;
  gint64            last_rss_shared;
  gint64            last_classes[6]; /* TIDE_COUNTER_PSS ... RSS_SHARED_PAGES */
  gint64            classes_missed;  /* reads of status or smaps_rollup that failed */
  GHashTable       *unknown_pcs;     /* pcs that /proc/PID/maps did not map either */
  guint             maps_reads;      /* fallback reads of /proc/PID/maps */
  double            pinned_live;
  gint64            written_pinned;
  gint64            written_py_arenas;
  gint64            device_allocated[TIDE_REC_MAX_DEVICES];  /* live recorded bytes */
  gint64            written_device[TIDE_REC_MAX_DEVICES];
} TideRecProcess;

struct _TideRecorder
{
  const TideRecordOptions *options;
  TideTraceWriter         *writer;
  TideStackTable          *stacks;
  TideNvml                *nvml;           /* NULL without NVML */

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

  pid_t                    child;
  int                      child_status;
  gint64                   child_exit_ns;
  gboolean                 child_exited;
  gboolean                 restore_sigxfsz; /* the target gets SIGXFSZ's default back */

  gint64                   start_ns;
  guint64                  peak_rss;       /* of the job's RSS summed over its processes */
  guint64                  peak_pss;       /* of its PSS summed: its real footprint */
  gint64                   next_rollup_ns; /* the next snapshot of every process's classes */
  gint64                   total_steps;
  gint64                   total_dropped;
  guint8                  *rx_buffer;
};

gint64          tide_recorder_now_ns           (void);

gboolean        tide_rec_process_sample_classes (TideRecProcess *self,
                                                 gint64          ts_ns,
                                                 gboolean        with_rollup,
                                                 gboolean        always);
void            tide_recorder_snapshot_classes (TideRecorder   *self,
                                                gint64          ts_ns,
                                                TideRecProcess *stepping);
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
