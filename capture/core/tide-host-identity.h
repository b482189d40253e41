/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What a trace records of the machine it was made on, so that the traces
 * of one job's nodes can be merged onto one time axis (tide-trace-merge.h):
 *
 *   hostname            the host name (of the UTS namespace)
 *   boot_id             /proc/sys/kernel/random/boot_id: traces with the same
 *                       one share one CLOCK_MONOTONIC
 *   realtime_offset_ns  CLOCK_REALTIME less CLOCK_MONOTONIC when the
 *                       recording started: a time t of the trace was t plus
 *                       this in real time
 *   launcher_rank       the rank the launcher gave (tide-output-name.h), if any
 *
 * All are meta keys; a trace without them (an older one) is still read.
 */
#pragma once

#include "tide-trace-writer.h"

G_BEGIN_DECLS

gint64 tide_host_realtime_offset_ns (void);
char  *tide_host_boot_id            (void);
void   tide_host_identity_write     (TideTraceWriter *writer);

G_END_DECLS
