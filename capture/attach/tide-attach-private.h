/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-attach-private.h: the state of `tidemark attach`, shared by its files.
 */
#pragma once

#include <linux/types.h>

#include "tide-attach-event.h"
#include "tide-attach-python.h"
#include "tide-attach.h"
#include "tide-capture-process.h"
#include "tide-proc-maps.h"
#include "tide-recording.h"
#include "tide-unwinder.h"

G_BEGIN_DECLS

typedef struct _TideAttach TideAttach;

/* One followed process image (a fork or an exec makes a new one): the
 * image the recording keeps for it, and what only attach knows of it. */
typedef struct
{
  TideAttach         *attach;
  TideCaptureProcess *core;          /* owned by the recording */
  gboolean            maps_dirty;    /* an executable mapping changed */
  GTree              *pages;         /* page address -> PageRecord*, sampled pages */
  GTree              *tensors;       /* address -> size | TENSOR_SAMPLED: PyTorch's live
                                      * CPU blocks (c10::alloc_cpu) */
  TideUnwinder       *unwinder;      /* walks the stack copies of its samples */
  TideAttachPython   *python;        /* its CPython interpreter, if it can be read */
  TideBpfPyTarget     py_target;     /* ... and where the BPF program finds its frames */
  gboolean            py_starting;   /* its interpreter had not started: confirm it */
} TideAttachProcess;

struct _TideAttach
{
  const TideAttachOptions *options;
  TideRecording           *recording;
  GPtrArray               *images;      /* TideAttachProcess*, every image seen */
  guint                    sample_pages;
  gint64                   n_unwound;   /* stacks unwound from their copies */
  gint64                   unwind_ns;   /* the time that took, in all */
  gboolean                 py_said;     /* why Python frames are left out was said */
  gboolean                 optimizer_steps; /* steps are torch.optim's (no other step source) */
};

/* tide-attach-process.c */
TideAttachProcess *tide_attach_process_new      (TideAttach        *attach,
                                                 pid_t              pid,
                                                 TideAttachProcess *parent,
                                                 gint64             start_ns);
void               tide_attach_process_event    (TideAttachProcess *self,
                                                 const TideBpfHeader *h);
void               tide_attach_process_step     (TideAttachProcess *self,
                                                 gint64             ts_ns,
                                                 const char        *label);
void               tide_attach_process_end      (TideAttachProcess *self,
                                                 gint64             end_ns,
                                                 int                wait_status,
                                                 int                oom_victim);
void               tide_attach_process_flush    (TideAttachProcess *self);
void               tide_attach_process_free     (TideAttachProcess *self);
TideAttachProcess *tide_attach_find_process     (TideAttach        *attach,
                                                 pid_t              pid);
gboolean           tide_attach_process_confirm_python (TideAttachProcess *self);

G_END_DECLS
