/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What the timeline draws besides the lanes: step spans with a leak flag,
 * transfers, and a leak suspect's live bytes at each step end.  Times are
 * nanoseconds from the trace start.
 */
#pragma once

#include "tide-trace.h"

G_BEGIN_DECLS

typedef struct
{
  gint64   process_id;
  gint     number;
  gint64   start_ns;
  gint64   end_ns;
  gint64   retained_bytes;
  gboolean leak;         /* suspect growth happens in this step */
} TideStepSpan;

typedef struct
{
  gint64 process_id;
  gint   direction;      /* TideTransferDirection (tide-kinds.h) */
  gint   device;
  gint64 bytes;
  gint64 start_ns;
  gint64 duration_ns;
} TideTransferMark;

/* One group's live bytes at a step end (a leak suspect's growth). */
typedef struct
{
  gint   number;
  gint64 start_ns;       /* the step's span, from the trace start */
  gint64 end_ns;
  gint64 live_bytes;     /* at its end */
} TideSeriesPoint;

GArray           *tide_timeline_steps          (TideTrace        *trace,
                                                gint64            process_id,
                                                GError          **error);
GArray           *tide_timeline_group_series   (TideTrace        *trace,
                                                gint64            process_id,
                                                gint64            stack_id,
                                                gint64            scope_id,
                                                gint              device,
                                                GError          **error);
GArray           *tide_timeline_transfers      (TideTrace        *trace,
                                                gint64            process_id,
                                                GError          **error);

G_END_DECLS
