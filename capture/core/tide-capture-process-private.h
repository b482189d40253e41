/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-capture-process-private.h: a process image's state, for the
 * capture core's own files; the drivers (capture/recorder,
 * capture/attach) reach it through tide-capture-process.h's functions.
 */
#pragma once

#include "tide-capture-process.h"
#include "tide-counter-envelope.h"
#include "tide-cow.h"
#include "tide-live-table.h"
#include "tide-procfs.h"
#include "tide-pymalloc-free.h"
#include "tide-stack-cache.h"
#include "tide-stack-table.h"
#include "tide-step-accumulator.h"

G_BEGIN_DECLS

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
  GPtrArray           *residency_marks;  /* ResidencyGroup by its mark - 1; NULL: free */
  GArray              *residency_free_marks; /* guint32: marks to give again */
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

  /* The recorded blocks' counters, every change noted (tide-counter-envelope.c) */
  TideCounterEnvelope  heap_envelope;
  TideCounterEnvelope  mapped_envelope;
  TideCounterEnvelope  pinned_envelope;
  TideCounterEnvelope  device_envelopes[TIDE_CAPTURE_MAX_DEVICES];
  gint64               last_rss;
  gint64               mark_rss;        /* its resident bytes at its last step mark, as it
                                         * sent them; -1: none (the step fence) */
  gboolean             mark_rss_pending; /* ... sent with a mark not yet met */
  gint64               last_rss_shared;
  gint64               last_rss_peak;   /* VmHWM, as last written */
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
  gint64               written_py_arenas;
  TidePymallocFree     pymalloc;       /* its arenas and the objects it serves */
  gint64               written_py_arena_free;
  gint64               written_py_arena_absent;
  gint64               device_allocated[TIDE_CAPTURE_MAX_DEVICES];  /* live recorded bytes */
  guint64              failed_devices;  /* bit device + 1 (pinned: bit 0): an allocation
                                         * there failed and none has succeeded since */

  TideCaptureBlocksFunc more_blocks;    /* NULL, or the driver's own host blocks */
  gpointer             more_blocks_data;
  TideCaptureRequestFunc request;      /* NULL, or how to ask the process */
  gpointer             request_data;
  gint64               figures_asked_ns; /* the last FIGURES request's time; 0: none */
  gboolean             figures_sent;    /* its answer came */
  gboolean             figures_late;    /* the last wait for an answer ran out */
  gboolean             step_wait_asked; /* a step end of its will wait for its reading:
                                         * asked, not yet marked */
  gint64               step_end_pending_ns; /* a step end whose marker waits, read when
                                             * its barrier says it does; 0: none */
  gint64               step_end_wait_ns; /* how long the step end read now waits at most;
                                          * 0: it does not */

  /* A fork's child (tide-capture-process-cow.c); NULL otherwise. */
  TideCow             *cow;
  TideCaptureProcess  *fork_parent;    /* whose pages it copies */
  gint64               last_cow;
  gint64               last_cow_left;  /* of it, the frames it inherited: its parent's writes */
  guint64              cow_attributed; /* the copied bytes last attributed */
};

G_END_DECLS
