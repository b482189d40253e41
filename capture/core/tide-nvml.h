/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-nvml.h: device memory as NVML sees it, for a recording's counters.
 * libnvidia-ml.so.1 is opened at run time; without it (no NVIDIA driver)
 * tide_nvml_open returns NULL and nothing else changes.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideNvml TideNvml;
typedef struct _TideRecording TideRecording;

TideNvml *tide_nvml_open            (void);
void      tide_nvml_free            (TideNvml     *self);
guint     tide_nvml_get_n_devices   (TideNvml     *self);
gboolean  tide_nvml_device_memory   (TideNvml     *self,
                                     guint         device,
                                     guint64      *used,
                                     guint64      *total);
gboolean  tide_nvml_process_memory  (TideNvml     *self,
                                     guint         device,
                                     guint         pid,
                                     guint64      *used);

/* Writes device_used/device_total (on the first process) and
 * device_process (per process) when they changed; at most every
 * TIDE_NVML_PERIOD_NS. */
#define TIDE_NVML_PERIOD_NS (G_GINT64_CONSTANT (100000000))
void      tide_nvml_poll            (TideNvml      *self,
                                     TideRecording *recording,
                                     gint64         now_ns);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideNvml, tide_nvml_free)

G_END_DECLS
