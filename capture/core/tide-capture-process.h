/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-capture-process.h: one process image of a recording (a fork or
 * an exec makes a new one): its threads, scopes, interned stacks, live
 * blocks, step summaries, counters and residency.  The drivers
 * (capture/recorder, capture/attach) turn their events into these calls.
 *
 * An allocation's row is written once, when its free is seen or when the
 * capture ends, so the allocations table is insert-only.
 */
#pragma once

#include <sys/types.h>

#include "tide-address-space.h"
#include "tide-cow.h"
#include "tide-live-table.h"
#include "tide-procfs.h"
#include "tide-pymalloc-free.h"
#include "tide-recording.h"
#include "tide-stack-cache.h"
#include "tide-stack-table.h"
#include "tide-step-accumulator.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

/* Device indexes the per-device counters keep (the wire allows int16). */
#define TIDE_CAPTURE_MAX_DEVICES 64

/* Host blocks that a driver keeps outside the live tables (attach's
 * sampled pages): @func is called once for each, as a live block. */
typedef void (*TideCaptureBlocksFunc) (TideLiveFunc  func,
                                       gpointer      func_data,
                                       gpointer      user_data);

struct _TideCaptureProcess
{
  TideRecording       *recording;
  gint64               id;             /* processes.id */
  pid_t                pid;
  pid_t                ppid;
  gint64               start_ns;
  gint64               end_ns;
  gint64               last_step_end_ns;
  gint                 n_steps;
  gint64               dropped;
  TideProcessEnd       end;            /* how it ended, once end_ns is set */

  TideAddressSpace    *space;
  TideStackCache      *stack_cache;    /* raw stacks -> ids, while space and pycodes hold */
  GArray              *last_frames;    /* the last stack interned, raw (guint64) ... */
  GArray              *last_path;      /* ... its frame ids, outermost first (gint64) ... */
  guint64              last_generation; /* ... and the stack generation it was interned in */
  TideLiveTable       *live;
  TideStepAccumulator *steps_acc;      /* step_series and step_stats, as records arrive */
  TideLiveTable       *device_live;    /* device and pinned blocks: their addresses
                                        * may repeat host ones (registered memory) */
  TideProcCounters    *counters;
  TidePagemap         *pagemap;
  GHashTable          *residency_groups; /* ResidencyGroup: the live blocks' groups */
  GArray              *whole_blocks;   /* WholeBlock: the blocks that lay whole on
                                        * present pages at the last residency */
  gint64               unswapped_ns;   /* when a read of its status last found none of
                                        * its pages in swap; 0: the last read found some */
  GHashTable          *threads;        /* tid -> threads.id */
  guint32              last_tid;       /* the last tid looked up, 0: none ... */
  gint64               last_thread_id; /* ... and its threads.id: a message holds
                                        * one thread's records */
  GHashTable          *scopes;         /* local scope id -> Scope* */
  GHashTable          *pycodes;        /* PYFRAME_DEF id -> TidePyCode* */
  guint64              pycode_defs;    /* PYFRAME_DEFs received */
  gint                 rank;           /* torch.distributed rank, -1: unknown */

  gint64               written_heap;
  gint64               written_mapped;
  gint64               last_rss;
  gint64               mark_rss;        /* its resident bytes at its last step mark, as it
                                         * sent them; -1: none (the step fence) */
  gint64               last_rss_shared;
  gint64               last_classes[6]; /* TIDE_COUNTER_PSS ... RSS_SHARED_PAGES */
  gint64               last_thread_stacks;
  gint64               last_lib_data;
  gint64               last_alloc_free_absent;
  gint64               classes_missed;  /* reads of status or smaps_rollup that failed */
  gboolean             rolled_up_at_step; /* smaps_rollup was read at one of its step ends */
  guint                step_rollup_tries; /* ... tried at this many before that */
  gint64               classes_ns;      /* when its classes were last written */
  gboolean             read_at_exit;    /* its last reading is taken: what follows is
                                         * the interpreter's or libc's teardown */
  GHashTable          *unknown_pcs;     /* pcs that /proc/PID/maps did not map either */
  guint                maps_reads;      /* fallback reads of /proc/PID/maps */
  double               pinned_live;
  gint64               written_pinned;
  gint64               written_py_arenas;
  TidePymallocFree     pymalloc;       /* its arenas and the objects it serves */
  gint64               written_py_arena_free;
  gint64               written_py_arena_absent;
  gint64               device_allocated[TIDE_CAPTURE_MAX_DEVICES];  /* live recorded bytes */
  gint64               written_device[TIDE_CAPTURE_MAX_DEVICES];
  guint64              failed_devices;  /* bit device + 1 (pinned: bit 0): an allocation
                                         * there failed and none has succeeded since */

  TideCaptureBlocksFunc more_blocks;    /* NULL, or the driver's own host blocks */
  gpointer             more_blocks_data;

  /* A fork's child (tide-capture-process-cow.c); NULL otherwise. */
  TideCow             *cow;
  TideCaptureProcess  *fork_parent;    /* whose pages it copies */
  gint64               last_cow;
  gint64               last_cow_left;  /* of it, the frames it inherited: its parent's writes */
  guint64              cow_attributed; /* the copied bytes last attributed */
};

/* Adds the image that @row describes (its id is filled in) to @recording and
 * writes its row. */
TideCaptureProcess *tide_capture_process_new          (TideRecording       *recording,
                                                       TideProcessRow      *row);
void                tide_capture_process_free         (TideCaptureProcess  *self);

gint64              tide_capture_process_thread_id    (TideCaptureProcess  *self,
                                                       guint32              tid,
                                                       const char          *name);
gint64              tide_capture_process_scope_id     (TideCaptureProcess  *self,
                                                       guint32              local_id);
void                tide_capture_process_define_scope (TideCaptureProcess  *self,
                                                       guint32              local_id,
                                                       guint32              parent_local_id,
                                                       const char          *name);
void                tide_capture_process_define_pycode (TideCaptureProcess *self,
                                                        guint32             id,
                                                        TidePyCode         *code);
gint64              tide_capture_process_intern_stack (TideCaptureProcess  *self,
                                                       const guint64       *frames,
                                                       guint                n_frames);
void                tide_capture_process_add_mapping  (TideCaptureProcess  *self,
                                                       guint64              start,
                                                       guint64              end,
                                                       guint64              load_bias,
                                                       const char          *path,
                                                       gint64               ts_ns);

void                tide_capture_process_alloc        (TideCaptureProcess  *self,
                                                       const TideLiveAlloc *alloc,
                                                       gint64               lifetime_ns);
void                tide_capture_process_alloc_failed (TideCaptureProcess  *self,
                                                       TideAllocFailureRow *row);
void                tide_capture_process_release      (TideCaptureProcess  *self,
                                                       guint                kind,
                                                       guint64              addr,
                                                       gint64               ts_ns);
void                tide_capture_process_account      (TideCaptureProcess  *self,
                                                       const TideLiveAlloc *alloc,
                                                       double               sign);
void                tide_capture_process_write_allocation (TideCaptureProcess  *self,
                                                           const TideLiveAlloc *alloc,
                                                           gint64               free_ns);

gint64              tide_capture_process_step         (TideCaptureProcess  *self,
                                                       gint64               ts_ns,
                                                       const char          *label);
void                tide_capture_process_inherit_arenas (TideCaptureProcess *self,
                                                         TideCaptureProcess *parent);
void                tide_capture_process_add_py_unhooked (TideCaptureProcess *self,
                                                          gint64              ts_ns,
                                                          gint64              bytes);
void                tide_capture_process_add_counter  (TideCaptureProcess  *self,
                                                       gint                 counter,
                                                       gint                 device,
                                                       gint64               ts_ns,
                                                       gint64               value);
void                tide_capture_process_add_transfer (TideCaptureProcess    *self,
                                                       const TideTransferRow *transfer);
void                tide_capture_process_set_rank     (TideCaptureProcess  *self,
                                                       gint                 rank);
void                tide_capture_process_set_loader_worker (TideCaptureProcess *self,
                                                            gint                worker);
void                tide_capture_process_add_dropped  (TideCaptureProcess  *self,
                                                       gint64               count);
void                tide_capture_process_set_rss      (TideCaptureProcess  *self,
                                                       gint64               ts_ns,
                                                       gint64               rss);
void                tide_capture_process_sample_rss   (TideCaptureProcess  *self,
                                                       gint64               ts_ns,
                                                       gboolean             always);
gboolean            tide_capture_process_sample_classes (TideCaptureProcess *self,
                                                         gint64              ts_ns,
                                                         gboolean            with_rollup,
                                                         gboolean            always);
gboolean            tide_capture_process_sample_classes_by (TideCaptureProcess *self,
                                                            gint64              ts_ns,
                                                            gint64              deadline_ns,
                                                            gboolean            with_rollup,
                                                            gboolean            always);
void                tide_capture_process_poll         (TideCaptureProcess  *self,
                                                       gint64               now_ns);
void                tide_capture_process_read_at_exit (TideCaptureProcess  *self,
                                                       gint64               ts_ns);
void                tide_capture_process_measure_residency (TideCaptureProcess *self,
                                                            gint64              step_id,
                                                            gint64              step_start_ns,
                                                            gint64              step_end_ns);
void                tide_capture_process_read_at_fork (TideCaptureProcess *self);
gboolean            tide_capture_process_measure_py_arena_absent (TideCaptureProcess *self,
                                                                  gint64             *absent);
void                tide_capture_process_explain_wait (TideCaptureProcess  *self,
                                                       int                  wait_status,
                                                       TideProcessEnd      *end);
void                tide_capture_process_explain_victim (TideCaptureProcess *self,
                                                         int                 wait_status,
                                                         gboolean            oom_victim,
                                                         TideProcessEnd     *end);
void                tide_capture_process_read_end     (TideCaptureProcess  *self,
                                                       gboolean             finishing,
                                                       TideProcessEnd      *end);
void                tide_capture_process_end          (TideCaptureProcess  *self,
                                                       gint64               end_ns,
                                                       const TideProcessEnd *end);
void                tide_capture_process_end_as       (TideCaptureProcess  *self,
                                                       gint64               end_ns,
                                                       TideEndKind          kind);
void                tide_capture_process_amend_end    (TideCaptureProcess  *self,
                                                       gint64               ended_ns,
                                                       const TideProcessEnd *end);
void                tide_capture_process_flush_live   (TideCaptureProcess  *self);

void                tide_capture_process_start_cow    (TideCaptureProcess  *self,
                                                       TideCaptureProcess  *parent);
void                tide_capture_process_measure_cow  (TideCaptureProcess  *self,
                                                       gint64               ts_ns);

G_END_DECLS
