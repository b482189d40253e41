/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-oom-watch.h: whether the kernel's OOM killer ended a process, and
 * the memory limit the job runs under.
 *
 * A process killed by SIGKILL may have been killed by anyone; the kernel
 * counts its OOM kills in /proc/vmstat (oom_kill) and in the victim's
 * memory cgroup (cgroup v2 memory.events, v1 memory.oom_control).  The
 * watch remembers those counters as processes start, and credits a
 * SIGKILL to the OOM killer only when they went up: a plain `kill -9`
 * never reads as an OOM kill.  Where neither counter can be read, the
 * death stays "killed by SIGKILL".  Where the kernel's log can be read
 * (tide-kernel-log.h), it names the victim, and a SIGKILL of another
 * process is none even when the counters moved.
 *
 * The limit is the cgroup's (the smallest memory.max up a v2 tree, v1's
 * hierarchical_memory_limit), else the machine's memory (MemTotal).
 *
 * Unprivileged: these files are world-readable; the log is not always.
 */
#pragma once

#include <glib.h>

#include "tide-process-end.h"

G_BEGIN_DECLS

typedef struct _TideOomWatch TideOomWatch;

/* The directory layout of a machine: where cgroup v1's memory controller
 * and cgroup v2 are mounted, from @mountinfo (NULL: /proc/self/mountinfo),
 * and the machine's counters under @proc_root (NULL: /proc). */
TideOomWatch *tide_oom_watch_new          (const char     *mountinfo,
                                           const char     *proc_root);
void          tide_oom_watch_free         (TideOomWatch   *self);
/* Reads @pid's memory cgroup and its OOM kill count now. */
void          tide_oom_watch_add_process  (TideOomWatch   *self,
                                           int             pid);
/* The limit @pid runs under (0: unknown), and whose it is: a cgroup's
 * (TIDE_OOM_CGROUP_V1 or _V2) or the machine's (TIDE_OOM_MACHINE). */
gint64        tide_oom_watch_read_limit   (TideOomWatch   *self,
                                           int             pid,
                                           TideOomScope   *scope);
/* For @end of @pid, killed by SIGKILL: sets end->oom and end->limit_bytes
 * when the kernel's log names @pid the OOM killer's victim, or, without
 * the log, when the kernel counted an OOM kill since the last one
 * explained. */
void          tide_oom_watch_explain      (TideOomWatch   *self,
                                           int             pid,
                                           TideProcessEnd *end);
/* As tide_oom_watch_explain(), where the kernel said whether the OOM
 * killer chose @pid (oom:mark_victim). */
void          tide_oom_watch_explain_victim (TideOomWatch   *self,
                                             int             pid,
                                             gboolean        victim,
                                             TideProcessEnd *end);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideOomWatch, tide_oom_watch_free)

G_END_DECLS
