/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-capture-process.h: one process image of a recording (a fork or
 * an exec makes a new one): its threads, scopes, interned stacks, live
 * blocks, step summaries, counters and residency.  The drivers
 * (capture/recorder, capture/attach) turn their events into these calls,
 * and read what they need of it through them too: its state is the
 * core's (tide-capture-process-private.h).
 *
 * An allocation's row is written once, when its free is seen or when the
 * capture ends, so the allocations table is insert-only.
 */
#pragma once

#include <sys/types.h>

#include "tide-address-space.h"
#include "tide-live-table.h"
#include "tide-recording.h"
#include "tide-stack-table.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

/* Device indexes the per-device counters keep (the wire allows int16). */
#define TIDE_CAPTURE_MAX_DEVICES 64

/* Host blocks that a driver keeps outside the live tables (attach's
 * sampled pages): @func is called once for each, as a live block. */
typedef void (*TideCaptureBlocksFunc) (TideLiveFunc  func,
                                       gpointer      func_data,
                                       gpointer      user_data);

/* What the recorder asks a process over its connection. */
typedef enum
{
  /* The figures that only it can give (its allocator's free bytes, the
   * preload's own pages) as of @at_ns, the time of a reading of its
   * private memory: TIDE_WIRE_FIGURES_REQUEST. */
  TIDE_CAPTURE_REQUEST_FIGURES,
  /* That its next step end wait for the recorder's reading, at most
   * @value milliseconds: TIDE_WIRE_STEP_WAIT_REQUEST. */
  TIDE_CAPTURE_REQUEST_STEP_WAIT,
  /* Not a request but its answer: the driver takes in what the process
   * sent, up to its figures as of the last FIGURES request
   * (tide_capture_process_figures_sent()), or until @value, a time on
   * tide_capture_now_ns()'s clock. */
  TIDE_CAPTURE_AWAIT_FIGURES,
} TideCaptureRequest;

/* @value: the reading's time (FIGURES), how long the step end waits
 * (STEP_WAIT), or until when (AWAIT_FIGURES).  Returns whether the
 * request went, or the answer came. */
typedef gboolean (*TideCaptureRequestFunc) (TideCaptureRequest request,
                                            gint64             value,
                                            gpointer           user_data);

/* Adds the image that @row describes (its id is filled in) to @recording and
 * writes its row. */
TideCaptureProcess *tide_capture_process_new          (TideRecording       *recording,
                                                       TideProcessRow      *row);
void                tide_capture_process_free         (TideCaptureProcess  *self);

gint64              tide_capture_process_get_id       (TideCaptureProcess  *self);
pid_t               tide_capture_process_get_pid      (TideCaptureProcess  *self);
gint64              tide_capture_process_get_start_ns (TideCaptureProcess  *self);
gboolean            tide_capture_process_has_ended    (TideCaptureProcess  *self);
const TideProcessEnd *tide_capture_process_get_end    (TideCaptureProcess  *self);
gint64              tide_capture_process_get_last_step_end_ns (TideCaptureProcess *self);
TideAddressSpace   *tide_capture_process_get_address_space (TideCaptureProcess *self);
void                tide_capture_process_set_mark_rss (TideCaptureProcess  *self,
                                                       gint64               rss);
void                tide_capture_process_set_more_blocks (TideCaptureProcess   *self,
                                                          TideCaptureBlocksFunc func,
                                                          gpointer              data);
void                tide_capture_process_set_requests (TideCaptureProcess    *self,
                                                       TideCaptureRequestFunc func,
                                                       gpointer               data);
void                tide_capture_process_request_figures (TideCaptureProcess *self,
                                                          gint64              at_ns);
void                tide_capture_process_figures_sent (TideCaptureProcess *self,
                                                       gint64              at_ns);
void                tide_capture_process_await_figures (TideCaptureProcess *self,
                                                        gint64              deadline_ns);
gboolean            tide_capture_process_has_figures (TideCaptureProcess *self);
void                tide_capture_process_ask_step_wait (TideCaptureProcess *self,
                                                        guint               patience_ms);
void                tide_capture_process_expect_step_wait (TideCaptureProcess *self);
void                tide_capture_process_step_waits (TideCaptureProcess *self);

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
                                                       double               sign,
                                                       gint64               ts_ns);
void                tide_capture_process_write_allocation (TideCaptureProcess  *self,
                                                           const TideLiveAlloc *alloc,
                                                           gint64               free_ns);

gint64              tide_capture_process_step         (TideCaptureProcess  *self,
                                                       gint64               ts_ns,
                                                       const char          *label,
                                                       guint                wait_ms);
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
