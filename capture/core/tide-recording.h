/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-recording.h: one recording, whichever front end feeds it.
 *
 * `tidemark record` (preload records on sockets) and `tidemark attach`
 * (eBPF records on a ring buffer) are drivers: they decode their events and
 * call the recording and its processes (tide-capture-process.h).  The recording
 * owns what a trace needs from both: the trace writer, the stack table, the
 * id counters of processes, threads, scopes and steps, every process image
 * seen, the RSS, RSS-class and NVML polls, and the end of the trace.
 *
 * A plain struct, not a GObject: it lives for one run of one driver, on
 * that driver's event thread, which creates it and frees it; nothing else
 * holds a reference, listens to it or binds to it.
 */
#pragma once

#include <sys/types.h>

#include <glib.h>

#include "tide-anon-split.h"
#include "tide-nvml.h"
#include "tide-oom-watch.h"
#include "tide-stack-table.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

typedef struct _TideCaptureProcess TideCaptureProcess;

typedef struct _TideRecording
{
  TideTraceWriter *writer;
  TideStackTable  *stacks;         /* NULL once the recording finished */
  TideNvml        *nvml;           /* NULL without NVML */
  TideOomWatch    *oom;            /* the kernel's OOM kill counters */
  TideAnonSplitter *anon_splitter; /* thread stacks and libraries' bss, by mapping */
  GPtrArray       *processes;      /* TideCaptureProcess*, every image seen */

  gint64           next_process_id;
  gint64           next_thread_id;
  gint64           next_scope_id;
  gint64           next_step_id;

  gboolean         sync_steps;     /* a step end reads the whole job's RSS classes */
  gint64           start_ns;
  guint64          peak_rss;       /* of the job's RSS summed over its processes */
  guint64          peak_pss;       /* of its PSS summed: its real footprint */
  gint64           next_rollup_ns; /* the next snapshot of every process's classes */
  gint64           snapshot_ns;    /* the last snapshot: when, ... */
  gint64           snapshot_cost_ns; /* ... its CPU time, ... */
  guint64          snapshot_job_rss; /* ... and the job's RSS summed then */
  guint64          job_rss;        /* the job's RSS summed, at the last poll */
  gint64           last_step_ns;   /* the latest step end of any process, 0: none yet */
  gint64           total_steps;
  gint64           total_dropped;
  gint64           memory_limit;   /* the tightest limit a process started under, 0: none read */
} TideRecording;

gint64              tide_capture_now_ns                 (void);
void                tide_recording_step_ended           (TideRecording      *self,
                                                         TideCaptureProcess *stepping,
                                                         gint64              ts_ns);
char               *tide_capture_read_cmdline           (pid_t               pid);
void                tide_capture_remove_trace           (const char         *output);
void                tide_capture_close_fd               (int                *fd);
gboolean            tide_capture_set_errno_error        (GError            **error,
                                                         int                 err,
                                                         const char         *what);

TideRecording      *tide_recording_new                  (const char         *output,
                                                         const char         *symbol_cache_dir,
                                                         GError            **error);
void                tide_recording_free                 (TideRecording      *self);
void                tide_recording_write_run_meta       (TideRecording      *self,
                                                         const char         *mode,
                                                         const char         *command,
                                                         gint64              sample_bytes,
                                                         gboolean            all_mode);
void                tide_recording_open_nvml            (TideRecording      *self);
void                tide_recording_write_memory_limit   (TideRecording      *self,
                                                         pid_t               pid);
TideCaptureProcess *tide_recording_find_process         (TideRecording      *self,
                                                         pid_t               pid);
void                tide_recording_poll                 (TideRecording      *self,
                                                         gint64              now_ns);
void                tide_recording_snapshot_classes     (TideRecording      *self,
                                                         gint64              ts_ns,
                                                         TideCaptureProcess *stepping);
char               *tide_recording_describe_peak        (TideRecording      *self,
                                                         const char         *path);
gboolean            tide_recording_finish               (TideRecording      *self,
                                                         gint64              end_ns,
                                                         GError            **error);

G_END_DECLS
