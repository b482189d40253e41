/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-process-end.h: how a process of the job ended: it exited with a
 * status, a signal killed it (and whether the kernel's OOM killer sent
 * that signal, at which limit), or its end could not be read.  The
 * recorder fills one per process; the trace keeps it in process_ends.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Values of process_ends.kind. */
typedef enum
{
  TIDE_END_UNKNOWN  = 0,  /* its end could not be read: never guessed */
  TIDE_END_EXITED   = 1,
  TIDE_END_SIGNALED = 2,
  TIDE_END_EXEC     = 3,  /* the image was replaced by exec: the pid lives on */
  TIDE_END_RUNNING  = 4,  /* still running when the capture ended */
} TideEndKind;

/* Values of process_ends.oom: who found the OOM kill, and so which limit. */
typedef enum
{
  TIDE_OOM_NONE      = 0,  /* not killed by the OOM killer, as far as the kernel says */
  TIDE_OOM_CGROUP_V1 = 1,  /* memory.oom_control of its cgroup counted it */
  TIDE_OOM_CGROUP_V2 = 2,  /* memory.events of its cgroup counted it */
  TIDE_OOM_MACHINE   = 3,  /* /proc/vmstat counted it; no cgroup limit applied */
} TideOomScope;

typedef struct
{
  TideEndKind  kind;
  gint         exit_code;    /* TIDE_END_EXITED: 0..255 */
  gint         signal;       /* TIDE_END_SIGNALED: 1..64 */
  gboolean     core_dumped;
  TideOomScope oom;
  gint64       limit_bytes;  /* the limit it ran under (cgroup or machine); 0: unknown */
  gboolean     device_oom;   /* it died after an allocation failed for want of memory ... */
  gint         oom_device;   /* ... on this device; -1: pinned host memory */
} TideProcessEnd;

/* @wait_status: as waitpid() gives it; negative: unknown. */
void        tide_process_end_from_wait_status (TideProcessEnd       *end,
                                               int                   wait_status);
/* Whether the process died: a signal killed it, or it exited with an
 * error status.  What the reports give a step and the app marks. */
gboolean    tide_process_end_is_death         (const TideProcessEnd *end);
/* The status a shell reports: the exit code, or 128 + the signal; -1 unknown. */
gint        tide_process_end_shell_status     (const TideProcessEnd *end);
/* "SIGKILL", or "signal 42" for a number without a name: @buf holds it. */
const char *tide_signal_name                  (gint                  signal,
                                               char                  buf[16]);
/* "exited 0", "exited 1", "killed by SIGSEGV (core dumped)", "killed by
 * SIGKILL (OOM killer)", "exited 1 (cuda:0 out of memory)", "exec",
 * "running", "unknown". */
char       *tide_process_end_describe_short   (const TideProcessEnd *end);
/* Why the OOM killer struck: "the kernel's OOM killer, at the cgroup's
 * limit of 600.00 MiB" or "... when the machine (15.52 GiB) ran out";
 * NULL when it did not. */
char       *tide_process_end_describe_oom     (const TideProcessEnd *end);
const char *tide_oom_scope_name               (TideOomScope          scope);

G_END_DECLS
