/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-attach.h: `tidemark attach`: records a process that is already
 * running, with eBPF programs (capture/attach/bpf/tide-attach.bpf.c), into the same
 * trace schema as `tidemark record`.
 *
 * What "retained host pages" means here: which stack first touched the
 * pages that are resident now.  Page faults are sampled one page in
 * sample_pages (stratified by block); each sampled page becomes an
 * allocation row of kind TIDE_KIND_PAGE, size one page, weight sample_pages,
 * freed when munmap, mremap, brk or madvise(DONTNEED) releases it.  Its
 * stack is unwound from a copy of the top of the thread's stack with the
 * DWARF call frame information (tide-unwinder.h), so code built without
 * frame pointers has its callers too.
 *
 * When the process maps libcudart or libcuda, uprobes on their allocation,
 * free and copy calls give exact device rows (TIDE_KIND_DEVICE/PINNED) and
 * transfers, as the preload does; the device is the one cudaSetDevice last
 * chose on the thread (0 before any seen), cudaMemcpyDefault and
 * device-to-device copies are not recorded, and NVTX ranges are not scopes.
 */
#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

#define TIDE_ATTACH_DEFAULT_SAMPLE_PAGES 16u

/* The marker that tidemark.h's tidemark_step() calls (see there). */
#define TIDE_ATTACH_STEP_MARKER "tidemark_attach_step_marker"

typedef struct
{
  pid_t        pid;
  const char  *output;           /* trace path */
  double       duration_s;       /* 0: until the target exits or a signal */
  guint        sample_pages;     /* 0: TIDE_ATTACH_DEFAULT_SAMPLE_PAGES */
  const char  *step_symbol;      /* NULL: the tidemark.h marker */
  guint        step_interval_ms; /* > 0: steps by time instead */
  gboolean     uprobes_malloc;   /* uprobes on malloc and free (costly) */
  gboolean     verbose;          /* libbpf's own messages */
  gboolean     quiet;            /* no summary on stderr */
  int          ready_fd;         /* >= 0: "attached" is written here once attached,
                                  * then "python PID" for each image found later
                                  * whose Python frames are read from then on */
  const char  *symbol_cache_dir; /* NULL: no symbol cache (tide-symbol-cache.h) */
} TideAttachOptions;

/* Whether this process may attach to @pid: root, or CAP_BPF and CAP_PERFMON
 * (and, for another user's process, CAP_SYS_PTRACE).  The error message is
 * one line that says what is needed. */
gboolean tide_attach_check_privileges (pid_t    pid,
                                       GError **error);

/* Attaches, records until @options->duration_s passes, the target exits or
 * SIGINT/SIGTERM arrive, detaches (the target keeps running, unchanged)
 * and writes the trace.  Returns 0, or -1 with @error set. */
int      tide_attach_run              (const TideAttachOptions  *options,
                                       GError                  **error);

G_END_DECLS
