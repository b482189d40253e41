/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "tide-sqlite.h"

G_BEGIN_DECLS

/* PRAGMA application_id: "TIDE" in ASCII, so `file` and our opener can tell
 * a trace from any other SQLite file. */
#define TIDE_APPLICATION_ID 0x54494445
/* 2: allocation_ranges, and the writer's allocations_long_lived index in
 * place of allocations_by_alloc.  3: processes.worker and processes.role
 * (tide-processes.h).  Version 1 and 2 traces are still read.  Tables
 * added since without a new version, which readers must do without:
 * modules (build-ids), and in merged traces merge_sources and
 * merge_processes (tide-trace-merge.h). */
#define TIDE_SCHEMA_VERSION 3

/* Counter ids of the counters table (counter_kinds holds their names). */
typedef enum
{
  TIDE_COUNTER_RSS         = 1,  /* resident set, /proc/PID/statm */
  TIDE_COUNTER_RSS_SHARED  = 2,  /* file-backed and shared part of it */
  TIDE_COUNTER_HEAP_LIVE   = 3,  /* estimated live bytes of recorded malloc blocks */
  TIDE_COUNTER_MAPPED      = 4,  /* live bytes of recorded mmap/brk regions */
  TIDE_COUNTER_PINNED      = 5,  /* live pinned host bytes (device issue) */
  TIDE_COUNTER_DEVICE_USED = 6,  /* device memory in use by anyone, per device (NVML) */
  TIDE_COUNTER_DEVICE_TOTAL = 7,      /* device memory size, per device (NVML) */
  TIDE_COUNTER_DEVICE_PROCESS = 8,    /* this process's device memory, per device (NVML) */
  TIDE_COUNTER_DEVICE_ALLOCATED = 9,  /* live bytes of recorded device blocks, per device */
  TIDE_COUNTER_TORCH_ALLOCATED = 10,  /* torch.cuda.memory_allocated at step ends (--torch) */
  TIDE_COUNTER_TORCH_RESERVED = 11,   /* torch.cuda.memory_reserved at step ends (--torch) */
  /* The RSS by class (capture/core/tide-procfs.h), at step ends and a few times
   * a second: anon + file + shmem is the RSS; alloc_free is the part of
   * anon that the allocator holds free (glibc's mallinfo2, sent by the
   * process at each step end). */
  TIDE_COUNTER_PSS         = 12,
  TIDE_COUNTER_RSS_ANON    = 13,
  TIDE_COUNTER_RSS_FILE    = 14,
  TIDE_COUNTER_RSS_SHMEM   = 15,
  TIDE_COUNTER_USS         = 16,  /* private pages: what the process alone holds */
  TIDE_COUNTER_RSS_SHARED_PAGES = 17, /* pages another process maps too */
  TIDE_COUNTER_ALLOC_FREE  = 18,
  /* Bytes of the pages a fork's child inherited that it alone maps now:
   * copied on write (capture/core/tide-cow.c); its sources are in
   * cow_sources. */
  TIDE_COUNTER_COW_BYTES   = 24,
  /* The part of alloc_free that jemalloc holds (resident, not allocated),
   * when it is the process's allocator. */
  TIDE_COUNTER_JEMALLOC_FREE = 25,
  /* The part of alloc_free that tcmalloc holds (free and resident in its
   * page heap and caches, and its metadata), when it is the process's
   * allocator. */
  TIDE_COUNTER_TCMALLOC_FREE = 26,
  /* Live bytes of the arenas of CPython's object allocator: plumbing that
   * the Python objects in them already count in the heap, kept apart. */
  TIDE_COUNTER_PY_ARENAS   = 30,
  /* What those arenas hold that no live object uses: freed blocks of
   * pools that still hold an object, pools no object uses yet (an arena is
   * returned only when all of its objects are freed), headers and rounding
   * (capture/core/tide-pymalloc-free.h).  An estimate from the sampled
   * objects; none without pymalloc (PYTHONMALLOC=malloc). */
  TIDE_COUNTER_PY_ARENA_FREE = 31,
  /* Bytes of pymalloc's blocks in use when the preload hooked CPython's
   * allocators: objects that are never recorded, once per process. */
  TIDE_COUNTER_PY_UNHOOKED = 32,
  /* Resident bytes of the threads' stacks, and of the libraries' bss
   * (capture/core/tide-anon-split.h): anonymous memory that no hook
   * sees, read with smaps_rollup. */
  TIDE_COUNTER_THREAD_STACKS = 33,
  TIDE_COUNTER_LIB_DATA    = 34,
} TideCounter;

/* Frame kinds of the frames table. */
typedef enum
{
  TIDE_FRAME_NATIVE  = 1,
  TIDE_FRAME_PYTHON  = 2,
  TIDE_FRAME_KERNEL  = 3,
  TIDE_FRAME_MISSING = 4,  /* frames the unwinder could not recover */
  /* A call the compiler inlined at a native frame's address: a row of
   * its own, never in stack_nodes, with the native frame's module and
   * module_offset; a native frame's inline rows go innermost first by id. */
  TIDE_FRAME_INLINE  = 5,
} TideFrameKind;

/* Frame ids at and above this are inline frames (TIDE_FRAME_INLINE), which
 * the symbolizer thread numbers on its own: below it, ids belong to the
 * recorder's interning of stack frames. */
#define TIDE_INLINE_FRAME_ID_BASE (G_GINT64_CONSTANT (1) << 40)

gboolean tide_schema_create   (sqlite3     *db,
                               GError     **error);
gboolean tide_schema_ensure   (sqlite3     *db,
                               const char  *name,
                               GError     **error);
gboolean tide_schema_declares (const char  *name);

G_END_DECLS
