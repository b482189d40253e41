/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-procfs.h: the /proc readers of the recorder.
 *
 * TideProcCounters keeps /proc/PID/statm open and re-reads it with pread on
 * every poll; /proc/PID/smaps_rollup is opened on first use, for a less
 * frequent poll.  TidePagemap answers "how many bytes of these ranges are
 * resident" from /proc/PID/pagemap, in large reads.  Both work unprivileged
 * on processes of the same user (pagemap hides PFNs, not the present bit).
 *
 * Handles are bound to the process, not to its pid number, so a reused pid
 * never reads as the old process.  smaps_rollup and pagemap are bound to the
 * process image: TideProcCounters reopens smaps_rollup after an exec by
 * itself; a TidePagemap must be reopened by the caller after an exec.
 *
 * Open errors are in the G_IO_ERROR domain (from errno).
 *
 * Not thread-safe: one thread uses a handle.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideProcCounters TideProcCounters;
typedef struct _TidePagemap TidePagemap;

typedef struct
{
  guint64 rss_bytes;     /* resident: anonymous + file + shmem */
  guint64 shared_bytes;  /* resident file-backed + shmem */
} TideStatm;

typedef struct
{
  guint64 rss_bytes;
  guint64 pss_bytes;
  guint64 anonymous_bytes;
  guint64 swap_bytes;
  guint64 private_bytes;  /* Private_Clean + Private_Dirty: the USS */
  guint64 shared_bytes;   /* Shared_Clean + Shared_Dirty: mapped by another process too */
} TideRollup;

/* What the resident pages are.  anon + file + shmem is the RSS exactly
 * (the kernel's own split, from /proc/PID/status); private + shared is the
 * RSS of smaps_rollup, read a moment later. */
typedef struct
{
  guint64 rss_bytes;
  guint64 anon_bytes;     /* RssAnon: heap, stacks, private anonymous maps */
  guint64 file_bytes;     /* RssFile: code, mmap'd datasets and checkpoints */
  guint64 shmem_bytes;    /* RssShmem: /dev/shm, memfd, shared anonymous maps */
  guint64 pss_bytes;      /* shared pages split among the processes that map them */
  guint64 private_bytes;  /* USS */
  guint64 shared_bytes;
  guint64 swap_bytes;     /* VmSwap: its anonymous pages out in swap, not resident */
  guint64 peak_bytes;     /* VmHWM: the most it held resident at once */
} TideRssClasses;

typedef struct
{
  guint64 addr;
  guint64 size;
} TideRange;

TideProcCounters *tide_proc_counters_open        (int               pid,
                                                  GError          **error);
void              tide_proc_counters_free        (TideProcCounters *self);

/* How the process ended, as waitpid() would tell its parent: TRUE while it
 * is exiting or a zombie, its parent not having reaped it; FALSE while it
 * runs, once reaped, or where the kernel hides it. */
gboolean          tide_proc_counters_read_exit   (TideProcCounters *self,
                                                  int              *wait_status);
/* FALSE once the process has exited (zombie or reaped). */
gboolean          tide_proc_counters_read_statm  (TideProcCounters *self,
                                                  TideStatm        *out);

/* FALSE once the process has exited, or when smaps_rollup is unreadable
 * (another user's process, or a kernel without it). */
gboolean          tide_proc_counters_read_rollup (TideProcCounters *self,
                                                  TideRollup       *out);

/* FALSE once the process has exited, or when status (or, with
 * @with_rollup, smaps_rollup) is unreadable.  Without @with_rollup only
 * the kernel's split (rss, anon, file, shmem) is read: status costs a
 * constant, smaps_rollup a walk of every resident page. */
gboolean          tide_proc_counters_read_classes (TideProcCounters *self,
                                                   gboolean          with_rollup,
                                                   TideRssClasses   *out);

TidePagemap      *tide_pagemap_open              (int               pid,
                                                  GError          **error);
void              tide_pagemap_free              (TidePagemap      *self);

/* For each of the @n ranges, sets @resident_out[i] to the bytes of
 * [addr, addr + size) that lie on present pages (swapped pages do not
 * count).  Ranges should be sorted by addr (unsorted input is correct but
 * slower) and may share pages.  Returns FALSE when a read failed, e.g. the
 * process is gone; the ranges that could not be read count as 0. */
gboolean          tide_pagemap_resident          (TidePagemap      *self,
                                                  const TideRange  *ranges,
                                                  guint             n,
                                                  guint64          *resident_out);

/* tide_pagemap_resident() for the anonymous pages alone: in a private file
 * mapping, the copies that the process wrote (relocations, initialized
 * data), which the kernel counts as anonymous memory, not the file's own
 * pages. */
gboolean          tide_pagemap_anonymous         (TidePagemap      *self,
                                                  const TideRange  *ranges,
                                                  guint             n,
                                                  guint64          *anonymous_out);

/* Whether this kernel has the PAGEMAP_SCAN ioctl (Linux 6.7), through which
 * tide_pagemap_resident() reads runs of present pages; without it, it
 * reads every page's entry. */
gboolean          tide_pagemap_kernel_has_scan   (void);

/* For tests: with @scan FALSE, reads pagemap entries as on a kernel
 * without the PAGEMAP_SCAN ioctl. */
void              _tide_pagemap_set_scan         (TidePagemap      *self,
                                                  gboolean          scan);
/* Whether the last reads went through PAGEMAP_SCAN. */
gboolean          _tide_pagemap_get_scan         (TidePagemap      *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideProcCounters, tide_proc_counters_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TidePagemap, tide_pagemap_free)

G_END_DECLS
