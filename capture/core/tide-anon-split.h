/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-anon-split.h: what a process's anonymous memory is, mapping by
 * mapping, where /proc/PID/maps and the mapped files tell:
 *
 *   thread stacks   the main thread's [stack], and each anonymous
 *                   read-write mapping that starts where an anonymous
 *                   inaccessible guard of at most 64 KiB ends (glibc puts
 *                   a pthread's guard below its stack, in one mmap);
 *   library data    the bss of every mapped ELF object: the part of a
 *                   writable PT_LOAD segment beyond the file
 *                   (p_memsz > p_filesz), which the loader maps anonymous
 *                   after the file's pages; and the pages of the file part
 *                   of that segment (initialized data, and what the loader
 *                   relocates: the GOT, vtables, .data.rel.ro, read-only
 *                   again once relocated) that the process wrote, which
 *                   the kernel copied into anonymous pages;
 *   malloc heaps    glibc's: the main arena's [heap], and the read-write
 *                   part of each other arena's heap (anonymous, aligned
 *                   to its 64 MiB, the inaccessible rest right above),
 *                   whose pages not present are free memory that the
 *                   allocator has never touched (the top chunk's tail),
 *                   in its free bytes but in no RSS.
 *
 * Each is counted in resident bytes, from pagemap (the written file pages:
 * the anonymous ones alone).  The segments of a file are read once per
 * path and kept (an object loaded again at another address has the same
 * segments).
 */
#pragma once

#include <glib.h>

#include "tide-procfs.h"

G_BEGIN_DECLS

typedef struct
{
  guint64 thread_stacks_bytes;
  guint64 lib_data_bytes;     /* the bss and the written data pages */
  guint64 lib_written_bytes;  /* of which the written data pages */
  guint64 malloc_heap_bytes;  /* mapped */
  guint64 malloc_heap_resident_bytes;
} TideAnonSplit;

typedef struct _TideAnonSplitter TideAnonSplitter;

TideAnonSplitter *tide_anon_splitter_new   (void);
void              tide_anon_splitter_free  (TideAnonSplitter *self);

/* FALSE when @pid's maps or pagemap could not be read (it is gone). */
gboolean          tide_anon_splitter_read  (TideAnonSplitter *self,
                                            int               pid,
                                            TidePagemap      *pagemap,
                                            TideAnonSplit    *out);

/* For tests: the same from the text of a maps file (split into lines in
 * place), with the resident
 * bytes of each range counted by @pagemap (NULL: each range of stacks,
 * bss and heaps counts whole, the written data pages none); the ranges of
 * each kind are appended to @stacks, @data (bss), @written (the file part
 * of writable segments) and @heaps (TideRange, each may be NULL). */
gboolean          _tide_anon_splitter_split (TideAnonSplitter *self,
                                             char             *maps,
                                             TidePagemap      *pagemap,
                                             GArray           *stacks,
                                             GArray           *data,
                                             GArray           *written,
                                             GArray           *heaps,
                                             TideAnonSplit    *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideAnonSplitter, tide_anon_splitter_free)

G_END_DECLS
