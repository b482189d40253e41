/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-wire.h: the binary records that libtidemark-preload.so sends to the
 * recorder.  Plain C11, no GLib: the target side must not depend on it.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET connection per process image, to the
 * path in $TIDEMARK_SOCKET.  Each send is one message of at most
 * TIDE_WIRE_MAX_MESSAGE bytes holding whole records back to back; a record
 * never spans two messages.  The first record on a connection is HELLO.
 * Records of one thread arrive in the order that thread made them; records of
 * different threads may interleave in any order, so the recorder orders by
 * time_ns (CLOCK_MONOTONIC), never by arrival.
 *
 * Every record starts with TideWireHeader, is 8-byte aligned and its length
 * is a multiple of 8.  Strings are NUL-terminated and padded with NULs to the
 * record length.
 */
#pragma once

#include <stdint.h>

#include "tide-kinds.h"

#define TIDE_WIRE_VERSION      5u
#define TIDE_WIRE_MAX_MESSAGE  65536u
#define TIDE_WIRE_MAX_FRAMES   128u
#define TIDE_WIRE_MAX_STRING   4096u

/* Environment variables set by `tidemark record` for the target. */
#define TIDE_ENV_SOCKET        "TIDEMARK_SOCKET"        /* path of the recorder's socket */
#define TIDE_ENV_SAMPLE_BYTES  "TIDEMARK_SAMPLE_BYTES"  /* mean sampling interval in bytes */
#define TIDE_ENV_ALL           "TIDEMARK_ALL"           /* "1": record every allocation */
#define TIDE_ENV_SYNC_STEPS    "TIDEMARK_SYNC_STEPS"    /* "1": a step waits for the recorder */
#define TIDE_ENV_SEED          "TIDEMARK_SEED"          /* optional: fixed sampler seed */
#define TIDE_ENV_TORCH         "TIDEMARK_TORCH"         /* "1": PyTorch hooks (`record --torch`) */

#define TIDE_DEFAULT_SAMPLE_BYTES (64u * 1024u)

typedef enum
{
  TIDE_WIRE_HELLO     = 1,
  TIDE_WIRE_MAPPING   = 2,
  TIDE_WIRE_ALLOC     = 3,
  TIDE_WIRE_FREE      = 4,
  TIDE_WIRE_STEP      = 5,
  TIDE_WIRE_SCOPE_DEF = 6,
  TIDE_WIRE_THREAD    = 7,
  TIDE_WIRE_DROPPED   = 8,
  TIDE_WIRE_UNMAPPING = 9,
  TIDE_WIRE_TRANSFER  = 10,
  /* 11..19: Python (tide-preload-python.c). */
  TIDE_WIRE_PYFRAME_DEF  = 11,
  TIDE_WIRE_PROCESS_INFO = 12,
  /* 20..: device memory (tide-preload-cuda*.c). */
  TIDE_WIRE_COUNTER      = 20,
  TIDE_WIRE_ALLOC_FAILED = 21,
  /* 30..: records the recorder answers. */
  TIDE_WIRE_EXIT_BARRIER = 30,  /* TideWireBarrier; the recorder sends its header back */
  /* The records the recorder sends unasked: TideWireFiguresRequest, and
   * TideWireStepWaitRequest. */
  TIDE_WIRE_FIGURES_REQUEST   = 31,
  TIDE_WIRE_STEP_WAIT_REQUEST = 32,
  /* A bare header that ends the answer to a FIGURES_REQUEST, stamped
   * with the request's at_ns: every record the process made before it
   * was sent ahead of it. */
  TIDE_WIRE_FIGURES_SENT      = 33,
  /* 40..: the process's children. */
  TIDE_WIRE_CHILD_END    = 40,
} TideWireType;

typedef struct
{
  uint16_t type;     /* TideWireType */
  uint16_t len;      /* whole record, header included, multiple of 8 */
  uint32_t tid;      /* gettid() of the thread that made the record */
  uint64_t time_ns;  /* CLOCK_MONOTONIC */
} TideWireHeader;

/* From the recorder to a process that marks no steps, as it reads the
 * job's private memory at another process's step end: the figures that
 * only the process can give (its allocator's free bytes, the preload's
 * own pages, the inherited blocks it freed) are wanted now.  Its flusher
 * sends them as COUNTER records stamped @at_ns, beside that reading
 * rather than up to a tick of its own away, then what every thread has
 * buffered, and last FIGURES_SENT.  The recorder reads the process once
 * that came: its figures, and the blocks it holds, are then of the
 * moment of the reading, not of before or after it. */
typedef struct
{
  TideWireHeader h;
  uint64_t at_ns;          /* the reading's time, CLOCK_MONOTONIC */
} TideWireFiguresRequest;

/* From the recorder to a process that marks steps, when a reading of its
 * private memory is due: its next step marker waits for the recorder's
 * answer (a STEP barrier), at most @patience_ms, so that the reading is
 * taken while the step end still holds.  A step shorter than the reading
 * itself (a DDP rank's 25 ms) would otherwise be over before it, and only
 * its next steps' ends, read while they still hold, explain them; where
 * none does, one span covers them all.
 *
 * A process's first step ends wait longer (TIDE_WIRE_FIRST_STEP_WAIT_MS;
 * the first unasked): the recorder meets them behind everything the
 * process sent as it started (the interpreter's and torch's imports),
 * which on a loaded machine takes it hundreds of milliseconds.  Those
 * readings start the report's first span; later ones, asked every half
 * second at most, wait TIDE_WIRE_STEP_WAIT_MS, so that a recorder that
 * falls behind slows the program little. */
typedef struct
{
  TideWireHeader h;
  uint64_t patience_ms;    /* at most TIDE_WIRE_FIRST_STEP_WAIT_MS */
} TideWireStepWaitRequest;

#define TIDE_WIRE_STEP_WAIT_MS       100
#define TIDE_WIRE_FIRST_STEP_WAIT_MS 1000

/* First record of every connection. */
typedef struct
{
  TideWireHeader h;
  uint32_t pid;
  uint32_t ppid;
  uint32_t wire_version;   /* TIDE_WIRE_VERSION */
  uint32_t flags;          /* TIDE_HELLO_* */
  uint64_t sample_bytes;   /* mean sampling interval in effect */
  char     exe[];          /* /proc/self/exe, NUL-terminated */
} TideWireHello;

#define TIDE_HELLO_ALL 1u     /* every allocation is recorded */
/* A fork's child, sent before fork() returns in it: the process then waits
 * for the recorder's answer to an EXIT_BARRIER, so that the recorder notes
 * which pages it inherited before it writes any. */
#define TIDE_HELLO_FORKED 2u

/* One loaded object segment (from dl_iterate_phdr, at start and after
 * every dlopen).  Native frames are symbolized against these. */
typedef struct
{
  TideWireHeader h;
  uint64_t start;          /* first address of the executable segment */
  uint64_t end;            /* one past its last address */
  uint64_t load_bias;      /* dlpi_addr: runtime address minus ELF vaddr */
  char     path[];         /* absolute path; "" for the main program is
                            * replaced by /proc/self/exe by the sender */
} TideWireMapping;

typedef struct
{
  TideWireHeader h;
  uint64_t start;
  uint64_t end;
} TideWireUnmapping;

/* A recorded allocation.  weight is how many allocations like this one the
 * record stands for: 1 in --all mode or for blocks at least as large as the
 * sampling interval, 1/p otherwise, with p = 1 - exp(-size/sample_bytes).
 * Estimated bytes are size * weight.
 *
 * lifetime_ns is 0 when the block was live when the record was sent.  When
 * the thread that sampled a block frees it while the record still waits in
 * that thread's buffer, the preload writes the time from allocation to free
 * here instead of sending a FREE (at least 1: a free in the same nanosecond
 * counts as one later); no FREE ever follows such a record. */
typedef struct
{
  TideWireHeader h;
  uint64_t addr;
  uint64_t size;
  double   weight;
  uint32_t scope_id;       /* 0: no scope; else an id from SCOPE_DEF */
  uint16_t kind;           /* TideAllocKind */
  int16_t  device;         /* -1 host, else accelerator index */
  uint32_t n_frames;
  uint32_t lifetime_ns;    /* 0: not freed yet; see above */
  uint64_t frames[];       /* return addresses, innermost first; the
                            * profiler's own frames already removed */
} TideWireAlloc;

/* Sent for every free of a recorded block whose ALLOC record did not take
 * it (and, in --all mode, for every free).  The recorder ignores frees of
 * addresses it does not know. */
typedef struct
{
  TideWireHeader h;
  uint64_t addr;
  uint16_t kind;
  int16_t  device;
  uint32_t reserved;
} TideWireFree;

/* tidemark_step(label): the end of one step of this process.  A marker
 * that waits for the recorder's reading (TideWireStepWaitRequest, or the
 * process's first) says so here: the recorder reads that step end once
 * its barrier comes, and knows how long it holds. */
typedef struct
{
  TideWireHeader h;
  uint32_t wait_ms;        /* it waits for the answer to its barrier so long at most; 0: it
                            * does not */
  uint32_t reserved;
  char label[];            /* "" when none was given */
} TideWireStep;

/* A scope node, sent once, before any ALLOC that names it.  Scopes form a
 * tree per process: the scope "b" pushed inside "a" is a node whose parent
 * is "a". */
typedef struct
{
  TideWireHeader h;
  uint32_t id;             /* > 0, unique in this process */
  uint32_t parent_id;      /* 0: root */
  char     name[];
} TideWireScopeDef;

typedef struct
{
  TideWireHeader h;
  char name[];             /* thread name (prctl PR_SET_NAME / pthread_setname_np) */
} TideWireThread;

/* Records that the target had to drop (the recorder did not take a
 * message in time).  Counted, never lost silently. */
typedef struct
{
  TideWireHeader h;
  uint64_t count;
} TideWireDropped;

/* A host<->device copy (device issue). */
typedef struct
{
  TideWireHeader h;
  uint64_t bytes;
  uint64_t duration_ns;
  uint32_t direction;      /* TideTransferDirection */
  int16_t  device;
  uint16_t reserved;
  uint32_t scope_id;
  uint32_t n_frames;
  uint64_t frames[];
} TideWireTransfer;

/* Python frames in a stack.  A `frames[]` entry of ALLOC or TRANSFER with
 * bit 63 set is not a return address but a Python frame: bits 32..62 hold
 * the id of a PYFRAME_DEF of this process, bits 0..31 the line number.  The
 * preload puts them where the interpreter's evaluation frames were among the
 * native frames (those are removed), so frames[] stays one mixed stack,
 * innermost first.  User-space addresses never have bit 63 set. */
#define TIDE_WIRE_PYFRAME_BIT (UINT64_C (1) << 63)

static inline uint64_t
tide_wire_pyframe_pack (uint32_t id,
                        uint32_t line)
{
  return TIDE_WIRE_PYFRAME_BIT | ((uint64_t) (id & 0x7fffffffu) << 32) | line;
}

static inline int
tide_wire_is_pyframe (uint64_t frame)
{
  return (frame & TIDE_WIRE_PYFRAME_BIT) != 0;
}

static inline uint32_t
tide_wire_pyframe_id (uint64_t frame)
{
  return (uint32_t) (frame >> 32) & 0x7fffffffu;
}

static inline uint32_t
tide_wire_pyframe_line (uint64_t frame)
{
  return (uint32_t) frame;
}

/* A Python code object, sent once per process before any frames[] entry
 * names it (and again on the new connection after a fork). */
typedef struct
{
  TideWireHeader h;
  uint32_t id;             /* > 0, unique in this process */
  int32_t  first_line;     /* co_firstlineno */
  uint32_t file_len;       /* bytes of the file name, NUL excluded */
  uint32_t reserved;
  char     strings[];      /* co_filename NUL co_qualname (co_name before 3.11) NUL */
} TideWirePyFrameDef;

/* What the process says about itself: its torch.distributed rank, from
 * RANK / LOCAL_RANK / WORLD_SIZE or from torch.distributed once its process
 * group is up, and the index of the DataLoader worker it is; -1 where
 * unknown (a later record keeps what an earlier one said). */
typedef struct
{
  TideWireHeader h;
  int32_t  rank;
  int32_t  local_rank;
  int32_t  world_size;
  int32_t  loader_worker;
} TideWireProcessInfo;

/* A child's end, as a wait call of this process learned it (waitpid,
 * wait4, wait, waitid; with WNOWAIT too): the recorder reads a dying
 * process's end from /proc, but a parent that reaps at once may be
 * faster, and then only it knows. */
typedef struct
{
  TideWireHeader h;
  uint32_t pid;
  int32_t  wait_status;    /* as waitpid() gives it: exited or killed only */
} TideWireChildEnd;

/* What a process waits for the recorder at (EXIT_BARRIER): once every
 * record before it is handled, the recorder answers; at exit it first
 * takes the process's last reading.  A bare header, as an older preload
 * sends, is an exit. */
typedef enum
{
  TIDE_BARRIER_EXIT = 0,   /* the process is exiting */
  TIDE_BARRIER_FORK = 1,   /* a fork's child, before it writes a page */
  TIDE_BARRIER_STEP = 2,   /* a step end, with TIDEMARK_SYNC_STEPS or asked
                            * (TideWireStepWaitRequest) */
} TideBarrierReason;

typedef struct
{
  TideWireHeader h;
  uint32_t reason;         /* TideBarrierReason */
  uint32_t reserved;
} TideWireBarrier;

_Static_assert (sizeof (TideWireBarrier) == 24, "barrier is 24 bytes");
_Static_assert (sizeof (TideWireFiguresRequest) == 24, "figures request is 24 bytes");
_Static_assert (sizeof (TideWireStepWaitRequest) == sizeof (TideWireFiguresRequest),
                "the recorder's requests are read alike");
_Static_assert (sizeof (TideWirePyFrameDef) == 32, "pyframe def is 32 bytes plus strings");
_Static_assert (sizeof (TideWireChildEnd) == 24, "child end is 24 bytes");
_Static_assert (sizeof (TideWireProcessInfo) == 32, "process info is 32 bytes");
/* A value the process measured itself (tidemark_preload_counter): the
 * `--torch` hooks send torch.cuda.memory_allocated/memory_reserved per
 * device at each step end.  counter is a TideCounter of storage/common/tide-kinds.h;
 * the recorder takes only the ones a process may report. */
typedef struct
{
  TideWireHeader h;
  uint32_t counter;
  int16_t  device;         /* -1 host */
  uint16_t reserved;
  int64_t  value;
} TideWireCounter;

_Static_assert (sizeof (TideWireCounter) == 32, "counter is 32 bytes");

/* The functions whose out-of-memory failures ALLOC_FAILED reports. */
typedef enum
{
  TIDE_WIRE_API_CUDA_MALLOC         = 1,
  TIDE_WIRE_API_CUDA_MALLOC_ASYNC   = 2,
  TIDE_WIRE_API_CUDA_MALLOC_MANAGED = 3,
  TIDE_WIRE_API_CUDA_MALLOC_PITCH   = 4,
  TIDE_WIRE_API_CUDA_MALLOC_HOST    = 5,
  TIDE_WIRE_API_CUDA_HOST_ALLOC     = 6,
  TIDE_WIRE_API_CU_MEM_ALLOC        = 7,
  TIDE_WIRE_API_CU_MEM_ALLOC_ASYNC  = 8,
  TIDE_WIRE_API_CU_MEM_HOST_ALLOC   = 9,
  TIDE_WIRE_API_CU_MEM_CREATE       = 10,
} TideWireApi;

/* A device or pinned allocation that failed for want of memory (the API's
 * out-of-memory code, nothing else): what was asked, where, and the code.
 * kind is TIDE_KIND_DEVICE or TIDE_KIND_PINNED (device -1). */
typedef struct
{
  TideWireHeader h;
  uint64_t bytes;
  uint32_t error;          /* the API's own return code */
  uint16_t api;            /* TideWireApi */
  uint16_t kind;
  int16_t  device;
  uint16_t reserved;
  uint32_t scope_id;
  uint32_t n_frames;
  uint32_t reserved2;
  uint64_t frames[];
} TideWireAllocFailed;

_Static_assert (sizeof (TideWireAllocFailed) == 48, "alloc failed is 48 bytes plus frames");

/* The counters the preload itself sends at each step end: its resident
 * bytes at the mark (TIDE_COUNTER_RSS: the recorder's step fence, not
 * written), the free bytes its allocators hold (TIDE_COUNTER_ALLOC_FREE),
 * and of them jemalloc's or tcmalloc's, when one is the allocator
 * (TIDE_COUNTER_JEMALLOC_FREE, TIDE_COUNTER_TCMALLOC_FREE); the recorder
 * checks that the ids agree. */
#define TIDE_WIRE_COUNTER_RSS           1
#define TIDE_WIRE_COUNTER_ALLOC_FREE    18
#define TIDE_WIRE_COUNTER_JEMALLOC_FREE 25
#define TIDE_WIRE_COUNTER_TCMALLOC_FREE 26
/* Sent once, when the allocator hooks are set: the bytes of pymalloc's
 * blocks in use then (TIDE_COUNTER_PY_UNHOOKED), objects never recorded. */
#define TIDE_WIRE_COUNTER_PY_UNHOOKED   32
/* Sent with the allocators' free bytes: the resident bytes of the
 * preload's own mappings (TIDE_COUNTER_PRELOAD_OWN). */
#define TIDE_WIRE_COUNTER_PRELOAD_OWN   35
/* Sent with them by a fork's child: the weighted bytes of its parent's
 * sampled blocks that it has freed (TIDE_COUNTER_INHERITED_FREED). */
#define TIDE_WIRE_COUNTER_INHERITED_FREED 38
_Static_assert (sizeof (TideWireHeader) == 16, "wire header is 16 bytes");
_Static_assert (sizeof (TideWireHello) == 40, "hello is 40 bytes plus exe");
_Static_assert (sizeof (TideWireMapping) == 40, "mapping is 40 bytes plus path");
_Static_assert (sizeof (TideWireAlloc) == 56, "alloc is 56 bytes plus frames");
_Static_assert (sizeof (TideWireFree) == 32, "free is 32 bytes");
_Static_assert (sizeof (TideWireScopeDef) == 24, "scope def is 24 bytes plus name");
_Static_assert (sizeof (TideWireDropped) == 24, "dropped is 24 bytes");
_Static_assert (sizeof (TideWireTransfer) == 48, "transfer is 48 bytes plus frames");

static inline uint32_t
tide_wire_align (uint32_t len)
{
  return (len + 7u) & ~7u;
}
