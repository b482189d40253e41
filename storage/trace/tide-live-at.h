/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-live-at.h: what a process's recorded blocks held at given times,
 * from its allocation rows.
 */
#pragma once

#include "tide-trace.h"

G_BEGIN_DECLS

/* Estimated live bytes at one time, as the live-heap and mapped counters
 * count them (tide_kind_is_heap(), tide_kind_is_mapped()). */
typedef struct
{
  gint64 heap;
  gint64 mapped;
} TideLiveBytes;

/* A process and the times to answer for it (tide_trace_live_at()). */
typedef struct
{
  gint64         process_id;
  const gint64  *times;
  guint          n_times;
  TideLiveBytes *live;        /* n_times of them, set by the call */
} TideLiveAtRequest;

gboolean tide_trace_live_at (TideTrace         *trace,
                             TideLiveAtRequest *requests,
                             guint              n_requests,
                             GError           **error);

G_END_DECLS
