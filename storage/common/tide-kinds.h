/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-kinds.h: the kinds of memory and of counters, numbered once for
 * everything that writes or reads them: the preload's and the eBPF
 * programs' records, the recorder, and the trace's allocations.kind and
 * counters.counter columns.  The numbers are in every trace written, so
 * they never change.  Header only, no dependencies: the preload includes
 * it too.
 */
#pragma once

/* What kind of memory an allocation is: the kind of an ALLOC/FREE record,
 * and allocations.kind. */
typedef enum
{
  TIDE_KIND_MALLOC = 1,  /* malloc family, C++ new */
  TIDE_KIND_MMAP   = 2,  /* anonymous or file mmap made by the program */
  TIDE_KIND_BRK    = 3,  /* brk/sbrk growth */
  TIDE_KIND_DEVICE = 4,  /* accelerator memory (device issue) */
  TIDE_KIND_PINNED = 5,  /* page-locked host memory (device issue) */
  TIDE_KIND_PAGE   = 6,  /* `attach`: a resident page, by the stack that first touched it */
  /* 10..: a language runtime's own allocator (tide-preload-pyalloc.c). */
  TIDE_KIND_PYOBJECT = 10, /* CPython's object and mem domains: objects, their buffers */
  TIDE_KIND_PYARENA  = 11, /* an arena of CPython's allocator: plumbing, never in a stack */
} TideAllocKind;

/* The heap: blocks of the program's allocators (the live-heap counter,
 * a step's heap). */
static inline int
tide_kind_is_heap (int kind)
{
  return kind == TIDE_KIND_MALLOC || kind == TIDE_KIND_PYOBJECT;
}

/* The program's own mappings and break (the mapped counter). */
static inline int
tide_kind_is_mapped (int kind)
{
  return kind == TIDE_KIND_MMAP || kind == TIDE_KIND_BRK || kind == TIDE_KIND_PAGE;
}

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
  /* The part of cow_bytes that the child did not copy: pages it still
   * holds as it inherited them, its alone because its parent wrote or
   * freed its own, which are no longer shared rather than copied.  Only
   * where pagemap shows page frames (a recorder with CAP_SYS_ADMIN). */
  TIDE_COUNTER_COW_LEFT_BYTES = 27,
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
  /* Resident bytes of the preload's own mappings in the process (its
   * buffers and tables, capture/preload/tide-preload-own.h): the
   * profiler's memory, which no hook sees, sent by the process. */
  TIDE_COUNTER_PRELOAD_OWN = 35,
  /* Bytes of CPython's live arenas on pages not present: pymalloc maps an
   * arena whole and touches its pages as it fills it, so the part of
   * py_arena_free on these is in no RSS.  Read with smaps_rollup. */
  TIDE_COUNTER_PY_ARENA_ABSENT = 36,
  /* Bytes of glibc's heaps (the main arena's [heap], the other arenas'
   * heaps) on pages not present: free memory that malloc has not touched
   * yet (its top chunk's tail), in alloc_free but in no RSS.  Read with
   * smaps_rollup. */
  TIDE_COUNTER_ALLOC_FREE_ABSENT = 37,
  /* Bytes of the blocks a fork's child inherited and freed, estimated
   * from its parent's sampled ones: they join alloc_free, or leave a
   * mapping, with no heap record of the child's behind them.  Sent by the
   * child's preload. */
  TIDE_COUNTER_INHERITED_FREED = 38,
  /* The most the process held resident at once (VmHWM of
   * /proc/PID/status), read with its classes: a rise and fall between two
   * polls of its RSS is in it. */
  TIDE_COUNTER_RSS_PEAK    = 39,
} TideCounter;

/* Which way a copy went: the direction of a TRANSFER record, and
 * transfers.direction. */
typedef enum
{
  TIDE_TRANSFER_TO_DEVICE   = 1,
  TIDE_TRANSFER_TO_HOST     = 2,
  TIDE_TRANSFER_ON_DEVICE   = 3,
} TideTransferDirection;
