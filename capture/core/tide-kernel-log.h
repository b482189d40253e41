/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-kernel-log.h: the OOM killer's victims, as the kernel's log names
 * them ("Killed process PID (COMM)"), from /dev/kmsg.
 *
 * The OOM kill counters (tide-oom-watch.c) say that the kernel killed a
 * process, not which: a plain SIGKILL of one process while the OOM killer
 * ended another, in the same cgroup tree or anywhere on the machine when
 * no cgroup counts, reads as an OOM kill from them.  The log names the
 * victim.  Reading it takes CAP_SYSLOG where kernel.dmesg_restrict is
 * set (Debian's default), and its pids are the initial PID namespace's:
 * elsewhere the log is not opened and the counters decide alone.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideKernelLog TideKernelLog;

/* The log from now on; NULL where it cannot be read, or its pids are not
 * this process's. */
TideKernelLog *tide_kernel_log_open          (void);
void           tide_kernel_log_free          (TideKernelLog *self);
/* Whether the log named @pid an OOM victim since it was opened.  The
 * kernel logs a kill just after it sends its SIGKILL, so the victim may
 * be seen dead first: the log is read on until it names @pid, or names
 * @kills victims in all (every kill counted), or @patience_ms passed. */
gboolean       tide_kernel_log_is_oom_victim (TideKernelLog *self,
                                              int            pid,
                                              gint64         kills,
                                              guint          patience_ms);
/* The victim's pid that one record of the log names, or -1. */
int            tide_kernel_log_parse_oom_victim (const char *record);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideKernelLog, tide_kernel_log_free)

G_END_DECLS
