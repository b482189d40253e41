/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-device-oom.h: where a device (or pinned host memory) ran out, from
 * the failed allocations the trace keeps (alloc_failures): per process and
 * device, how many failed, whether the process survived them, and the one
 * failure to name.
 *
 * A process survived its failures on a device when a later allocation
 * there succeeded (PyTorch's caching allocator frees its cache and
 * retries), or when it did not die.  It did not when it died (a signal, or
 * an exit with an error) with failures not followed by a success: then
 * the device ran out of memory, and the last failure is named.
 */
#pragma once

#include "tide-processes.h"

G_BEGIN_DECLS

typedef struct
{
  TideProcessLabel process;    /* whose allocations failed */
  gint       device;           /* -1: pinned host memory */
  gint64     n_failed;         /* failed allocations on it */
  gboolean   fatal;            /* the process died of it */

  /* The failure named: the last when fatal, else the largest. */
  gint64     ts_ns;
  char      *api;              /* "cudaMalloc" */
  gint64     bytes;            /* asked for */
  gint64     allocated_bytes;  /* the process's recorded blocks on the device then */
  gint       step;             /* the step it failed in; 0: none known */
  GPtrArray *frames;           /* TideFrame*, innermost first */

  /* Fatal only: the leak suspect on the device that held most of it. */
  char      *keeper;           /* its headline; NULL: no suspect */
  gint64     keeper_bytes;     /* its live bytes at the failure */
  double     keeper_bytes_per_step;
} TideDeviceOom;

void       tide_device_oom_free      (TideDeviceOom  *oom);
/* Per process and device with failures, the fatal ones first, then by
 * time: #TideDeviceOom.  An empty array for a trace without failures, or
 * from before they were recorded.  @suspects: (nullable): the trace's
 * suspects by stack, if the caller has them. */
GPtrArray *tide_report_device_ooms   (TideTrace      *trace,
                                      GPtrArray      *suspects,
                                      GError        **error);
/* "cuda:0 ran out of memory at step 8 in main (pid 4242): a 16.00 MiB
 * cudaMalloc at cuda-oom.c:27 forward_activations, with 88.00 MiB
 * allocated, 64.00 MiB of it kept by cuda-oom.c:40 keep_bucket (+8.00
 * MiB/step)", or for failures survived "cuda:0 ran short of memory 2
 * times in main (pid 4242), and the program went on: the largest, ...";
 * "pinned host memory ran out at step 6 in ..." for page-locked memory. */
char      *tide_device_oom_describe  (const TideDeviceOom *oom);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideDeviceOom, tide_device_oom_free)

G_END_DECLS
