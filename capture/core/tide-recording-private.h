/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-recording-private.h: the recording's struct, for the .c files of
 * the capture core (capture/core) alone.  The drivers see the recording
 * through tide-recording.h only, so that no front end writes the trace
 * or the counters of the recording but through the core.
 */
#pragma once

#ifndef TIDE_CAPTURE_CORE_COMPILATION
# error "tide-recording-private.h is for the files of capture/core only"
#endif

#include "tide-anon-split.h"
#include "tide-nvml.h"
#include "tide-oom-watch.h"
#include "tide-recording.h"
#include "tide-stack-table.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

struct _TideRecording
{
  TideTraceWriter  *writer;
  TideStackTable   *stacks;         /* NULL once the recording finished */
  TideNvml         *nvml;           /* NULL without NVML */
  TideOomWatch     *oom;            /* the kernel's OOM kill counters */
  TideAnonSplitter *anon_splitter;  /* thread stacks and libraries' bss, by mapping */
  GPtrArray        *processes;      /* TideCaptureProcess*, every image seen */

  gint64            next_process_id;
  gint64            next_thread_id;
  gint64            next_scope_id;
  gint64            next_step_id;

  gboolean          sync_steps;     /* a step end reads the whole job's RSS classes */
  gboolean          awaiting_figures; /* tide_capture_process_await_figures() runs */
  TideRecordingAdmitFunc admit;     /* NULL, or how the driver takes in new processes */
  gpointer          admit_data;
  gboolean          admitting;      /* @admit runs */
  gint64            start_ns;
  guint64           peak_rss;       /* of the job's RSS summed over its processes */
  guint64           peak_pss;       /* of its PSS summed: its real footprint */
  gint64            next_rollup_ns; /* the next snapshot of every process's classes */
  gboolean          stepped_snapshot; /* a snapshot was taken at a step end */
  gboolean          step_ends_waited; /* a process waited at a step end for its reading */
  gint64            snapshot_ns;    /* the last snapshot: when, ... */
  gint64            snapshot_cost_ns; /* ... its CPU time, ... */
  guint64           snapshot_job_rss; /* ... and the job's RSS summed then */
  guint64           job_rss;        /* the job's RSS summed, at the last poll */
  gint64            last_step_ns;   /* the latest step end of any process, 0: none yet */
  gint64            total_steps;
  gint64            total_dropped;
  gint64            memory_limit;   /* the tightest limit a process started under, 0: none read */
};

void _tide_recording_write_memory_limit (TideRecording      *self,
                                         pid_t               pid);
void _tide_recording_step_ended         (TideRecording      *self,
                                         TideCaptureProcess *stepping,
                                         gint64              ts_ns);
gboolean _tide_recording_is_last_live   (TideRecording      *self,
                                         TideCaptureProcess *process);

G_END_DECLS
