/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-trace-writer.h: the recording's one writer of a trace: rows handed
 * over from any thread, written by its own thread in batches.
 */
#pragma once

#include <glib.h>

#include "tide-process-end.h"

#include "tide-step-accumulator.h"

G_BEGIN_DECLS

/* Rows handed to the writer.  Ids are chosen by the caller (the recorder
 * interns frames, stacks and scopes itself), so adding never waits for the
 * database; allocation rows take the next rowid.  An id or time of 0 is
 * stored as NULL where the column allows. */

typedef struct
{
  gint64      id;
  gint64      pid;
  gint64      ppid;
  gint64      parent_id;
  gint64      start_ns;
  gint64      sample_bytes;
  gboolean    all_mode;
  const char *exe;
  const char *cmdline;
} TideProcessRow;

typedef struct
{
  gint64      id;
  gint        kind;           /* TideFrameKind */
  const char *function;
  const char *file;
  gint        line;
  const char *module;
  gint64      module_offset;
} TideFrameRow;

typedef struct
{
  gint64  process_id;
  gint64  thread_id;
  gint64  alloc_ns;
  gint64  free_ns;            /* 0: still live */
  guint64 address;
  guint64 size;
  double  weight;
  gint64  stack_id;
  gint64  scope_id;
  gint    device;             /* -1 host */
  gint    kind;               /* TideAllocKind */
} TideAllocRow;

typedef struct
{
  gint64 step_id;
  gint64 stack_id;
  gint64 scope_id;
  gint   device;
  gint64 resident_bytes;
  gint64 resident_born_bytes;
} TideResidencyRow;

/* A row of transfers (tide-schema.c): a copy between host and device
 * memory. */
typedef struct
{
  gint64 process_id;
  gint   direction;             /* TideTransferDirection */
  gint   device;
  gint64 bytes;
  gint64 start_ns;
  gint64 duration_ns;
  gint64 stack_id;              /* 0: none */
  gint64 scope_id;              /* 0: none */
} TideTransferRow;

/* A row of alloc_failures (tide-schema.c). */
typedef struct
{
  gint64      process_id;
  gint64      ts_ns;
  const char *api;              /* "cudaMalloc" */
  gint        error;            /* the API's own code */
  gint        device;           /* -1: pinned host memory */
  gint64      bytes;            /* asked for */
  gint64      allocated_bytes;  /* the process's recorded blocks on the device */
  gint64      stack_id;         /* 0: none */
  gint64      scope_id;         /* 0: none */
} TideAllocFailureRow;

typedef struct _TideTraceWriter TideTraceWriter;

TideTraceWriter *tide_trace_writer_new            (const char             *path,
                                                   GError                **error);
void             tide_trace_writer_set_meta       (TideTraceWriter        *self,
                                                   const char             *key,
                                                   const char             *value);
void             tide_trace_writer_set_meta_int   (TideTraceWriter        *self,
                                                   const char             *key,
                                                   gint64                  value);
void             tide_trace_writer_add_process    (TideTraceWriter        *self,
                                                   const TideProcessRow   *row);
void             tide_trace_writer_end_process    (TideTraceWriter        *self,
                                                   gint64                  process_id,
                                                   gint64                  end_ns,
                                                   const TideProcessEnd   *end,
                                                   gint64                  dropped);
void             tide_trace_writer_set_process_rank (TideTraceWriter      *self,
                                                     gint64                process_id,
                                                     gint                  rank);
void             tide_trace_writer_set_process_worker (TideTraceWriter    *self,
                                                       gint64              process_id,
                                                       gint                worker);
void             tide_trace_writer_add_thread     (TideTraceWriter        *self,
                                                   gint64                  id,
                                                   gint64                  process_id,
                                                   gint64                  tid,
                                                   const char             *name);
void             tide_trace_writer_add_mapping    (TideTraceWriter        *self,
                                                   gint64                  process_id,
                                                   guint64                 start,
                                                   guint64                 end,
                                                   guint64                 load_bias,
                                                   const char             *path,
                                                   gint64                  ts_ns);
void             tide_trace_writer_add_frame      (TideTraceWriter        *self,
                                                   const TideFrameRow     *row);
void             tide_trace_writer_add_module     (TideTraceWriter        *self,
                                                   const char             *path,
                                                   const char             *build_id);
void             tide_trace_writer_add_stack      (TideTraceWriter        *self,
                                                   gint64                  id,
                                                   const gint64           *frame_ids,
                                                   guint                   n_frames);
/* A node of the tree that traces before schema 4 keep their stacks in
 * (tide-schema.c); no recording writes one, the tests do, so that the
 * readers of that form stay tried. */
void             tide_trace_writer_add_stack_node (TideTraceWriter        *self,
                                                   gint64                  id,
                                                   gint64                  parent_id,
                                                   gint64                  frame_id,
                                                   gint                    depth);
void             tide_trace_writer_add_scope      (TideTraceWriter        *self,
                                                   gint64                  id,
                                                   gint64                  process_id,
                                                   gint64                  parent_id,
                                                   const char             *name,
                                                   const char             *path);
void             tide_trace_writer_add_step       (TideTraceWriter        *self,
                                                   gint64                  id,
                                                   gint64                  process_id,
                                                   gint64                  number,
                                                   const char             *label,
                                                   gint64                  start_ns,
                                                   gint64                  end_ns);
void             tide_trace_writer_add_allocation (TideTraceWriter        *self,
                                                   const TideAllocRow     *row);
void             tide_trace_writer_add_counter    (TideTraceWriter        *self,
                                                   gint64                  process_id,
                                                   gint                    counter,
                                                   gint                    device,
                                                   gint64                  ts_ns,
                                                   gint64                  value);
void             tide_trace_writer_add_transfer   (TideTraceWriter        *self,
                                                   const TideTransferRow  *row);
void             tide_trace_writer_add_alloc_failure (TideTraceWriter           *self,
                                                      const TideAllocFailureRow *row);
void             tide_trace_writer_recover_failures  (TideTraceWriter           *self,
                                                      gint64                     process_id,
                                                      gint                       device);
void             tide_trace_writer_add_residency  (TideTraceWriter        *self,
                                                   const TideResidencyRow *row);
void             tide_trace_writer_add_residency_total (TideTraceWriter   *self,
                                                        gint64             step_id,
                                                        gint64             resident_bytes,
                                                        gint64             resident_born_bytes);
/* @stack_id 0: copied bytes that no recorded block covers. */
void             tide_trace_writer_add_cow_source (TideTraceWriter        *self,
                                                   gint64                  process_id,
                                                   gint64                  ts_ns,
                                                   gint64                  parent_id,
                                                   gint64                  stack_id,
                                                   gint64                  bytes);
void             tide_trace_writer_add_series     (TideTraceWriter        *self,
                                                   const TideSeriesRow    *row);
void             tide_trace_writer_add_step_totals (TideTraceWriter       *self,
                                                   const TideStepTotals   *totals);
void             tide_trace_writer_flush          (TideTraceWriter        *self);
gboolean         tide_trace_writer_finish         (TideTraceWriter        *self,
                                                   GError                **error);
char            *tide_trace_writer_describe_early_end (TideTraceWriter  *self);
void             tide_trace_writer_free           (TideTraceWriter        *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideTraceWriter, tide_trace_writer_free)

G_END_DECLS
