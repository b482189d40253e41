/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-private.h: state shared by the files of libtidemark-preload.so.
 *
 * Two kinds of state: tide_tls, one per thread (initial-exec TLS, so reading
 * it never calls into the dynamic linker or malloc), and tide_state, one per
 * process.  The fast path of every hook reads tide_tls.guard, then
 * tide_tls.countdown, and nothing that takes a lock.
 */
#pragma once

#include "tide-preload-addrset.h"
#include "tide-preload-encode.h"
#include "tide-preload-heap.h"
#include "tide-preload-sampler.h"
#include "tide-wire.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#define TIDE_EXPORT     __attribute__ ((visibility ("default")))
#define TIDE_LIKELY(x)   __builtin_expect (!!(x), 1)
#define TIDE_UNLIKELY(x) __builtin_expect (!!(x), 0)

#define TIDE_SCOPE_MAX_DEPTH  64
/* One blocking send waits at most TIDE_SEND_TIMEOUT_MS; a message is retried
 * for up to the patience below before it is dropped (and counted).  --all
 * promises exact counts, so it waits longer for a busy recorder.  After a
 * drop, sends stop waiting until one gets through: a stopped recorder
 * costs the target one patience, not one per message. */
#define TIDE_SEND_TIMEOUT_MS      250
#define TIDE_SEND_PATIENCE_MS     2000
#define TIDE_SEND_PATIENCE_ALL_MS 30000
/* Longest wait at exit for the recorder to catch up (tide_preload_fini). */
#define TIDE_EXIT_BARRIER_MS      10000
/* Longest wait of a fork's child for the recorder to note its pages. */
#define TIDE_FORK_WAIT_MS         2000
#define TIDE_FLUSH_AGE_NS     (50ull * 1000 * 1000)
#define TIDE_FLUSH_TICK_NS    (20ull * 1000 * 1000)

typedef struct _TideBuffer TideBuffer;

typedef struct
{
  int         guard;        /* > 0: inside the profiler; hooks pass through */
  int         real_calls;   /* > 0: inside a real call made for the program */
  int         resolving;    /* > 0: this thread is inside dlsym() */
  int64_t     countdown;    /* bytes to the next sample point */
  TideRng     rng;
  bool        seeded;
  bool        exiting;      /* the thread-exit destructor has run */
  uint32_t    tid;          /* 0: not known yet */
  TideBuffer *buf;          /* this thread's record buffer, or NULL */
  uint32_t    scope_depth;  /* may exceed TIDE_SCOPE_MAX_DEPTH: overflow */
  uint32_t    scopes[TIDE_SCOPE_MAX_DEPTH];
} TideThread;

extern __thread TideThread tide_tls __attribute__ ((tls_model ("initial-exec")));

/* What free() does with a pointer; read once per free. */
enum
{
  TIDE_FREE_IGNORE = 0,  /* dormant */
  TIDE_FREE_FILTER = 1,  /* sampled mode: record frees of sampled blocks */
  TIDE_FREE_ALL    = 2,  /* --all: record every free */
};

typedef struct
{
  _Atomic int      active;       /* connected and recording */
  _Atomic int      free_mode;    /* TIDE_FREE_* */
  _Atomic size_t   threshold;    /* sizes below go through the countdown */
  _Atomic int      fd;           /* connection to the recorder, or -1 */
  _Atomic int      final;        /* process exit flush done: send directly */
  _Atomic uint32_t seeded_threads; /* threads that seeded their sampler */
  _Atomic uint64_t dropped;      /* records not yet reported in DROPPED */
  _Atomic int      step_wait_ms;  /* the next step marker waits so long at most
                                   * (TIDE_WIRE_STEP_WAIT_REQUEST); 0: it does not */
  pid_t            pid;          /* getpid() of the connected process */
  bool             all;
  bool             sync_steps;   /* TIDEMARK_SYNC_STEPS: a step waits for the recorder */
  bool             have_seed;
  uint64_t         seed;
  uint64_t         sample_bytes;
  char             socket_path[108];
  char             exe[TIDE_WIRE_MAX_STRING];
  TideAddrSet      addrset;
} TideState;

extern TideState tide_state;

typedef struct
{
  void *(*malloc)         (size_t);
  void  (*free)           (void *);
  void *(*calloc)         (size_t, size_t);
  void *(*realloc)        (void *, size_t);
  void *(*reallocarray)   (void *, size_t, size_t);
  int   (*posix_memalign) (void **, size_t, size_t);
  void *(*aligned_alloc)  (size_t, size_t);
  void *(*memalign)       (size_t, size_t);
  void *(*valloc)         (size_t);
  void *(*pvalloc)        (size_t);
  size_t (*malloc_usable_size) (void *);
  void *(*mmap)           (void *, size_t, int, int, int, off_t);
  int   (*munmap)         (void *, size_t);
  void *(*mremap)         (void *, size_t, size_t, int, ...);
  int   (*brk)            (void *);
  void *(*sbrk)           (intptr_t);
  void *(*dlopen)         (const char *, int);
  int   (*dlclose)        (void *);
  void  (*_exit)          (int);
  pid_t (*waitpid)        (pid_t, int *, int);
  pid_t (*wait4)          (pid_t, int *, int, struct rusage *);
  int   (*waitid)         (idtype_t, id_t, siginfo_t *, int);
} TideReal;

extern TideReal tide_real;
extern void *tide_dlopen_next;  /* tide_real.dlopen, for the x86-64 trampoline */

/* tide-preload-real.c: dlsym(RTLD_NEXT). */
void    tide_real_resolve        (void);

/* tide-preload.c: process state and the connection. */
uint64_t tide_now_ns             (void);
uint32_t tide_thread_tid         (void);
bool     tide_conn_take_request  (uint64_t   *at_ns);
bool     tide_conn_wait_tick     (uint64_t    tick_ns,
                                  uint64_t   *at_ns);
bool     tide_conn_send          (const void *msg,
                                  uint32_t    len);
void     tide_send_direct        (const void *rec,
                                  uint32_t    len);
void     tide_go_dormant         (void);
void     tide_send_dropped       (void);

static inline bool
tide_active (void)
{
  return atomic_load_explicit (&tide_state.active, memory_order_relaxed) != 0;
}

static inline TideStamp
tide_stamp (void)
{
  return (TideStamp) { .tid = tide_thread_tid (), .time_ns = tide_now_ns () };
}

/* tide-preload-record.c: the slow path shared by every hook. */
double   tide_sample_decide      (size_t size);
void     tide_record_alloc       (const void *addr,
                                  size_t      size,
                                  double      weight,
                                  uint16_t    kind);
bool     tide_record_alloc_placed (const void *addr,
                                   const void *place,
                                   size_t      size,
                                   double      weight,
                                   uint16_t    kind);
void     tide_record_free        (const void *addr,
                                  uint16_t    kind);
bool     tide_record_free_if_sampled (const void *addr,
                                      uint16_t    kind,
                                      TideAddrEntry *out);

/* True while the profiler itself is at work on this thread, and not inside
 * a real call it makes for the program: what it allocates then comes from
 * its own heap, never from the program's. */
static inline bool
tide_in_profiler (void)
{
  return tide_tls.guard > tide_tls.real_calls;
}

/* True when an allocation of size bytes must take the slow path.  This is
 * the whole fast path: a guard check, a compare and a countdown. */
static inline bool
tide_should_sample (size_t size)
{
  if (tide_tls.guard)
    return false;
  if (TIDE_LIKELY (size < atomic_load_explicit (&tide_state.threshold, memory_order_relaxed))
      && (tide_tls.countdown -= (int64_t) size) > 0)
    return false;
  return true;
}

/* A call of the real allocator made for the program: the guard keeps an
 * allocator that calls malloc or mmap through the PLT from being counted
 * twice, and the real_calls mark sends those calls on to the real
 * allocator rather than the profiler's own heap.  The barrier keeps the
 * compiler from reading both counters back in one 8-byte load, which the
 * two 4-byte stores before the call cannot forward to: that stall was
 * most of what wrapping CPython's allocator cost a free. */
#define TIDE_REAL_CALL(call)                                       \
  do                                                               \
    {                                                              \
      tide_tls.guard++;                                            \
      tide_tls.real_calls++;                                       \
      call;                                                        \
      tide_tls.real_calls--;                                       \
      __asm__ volatile ("" ::: "memory");                          \
      tide_tls.guard--;                                            \
    }                                                              \
  while (0)

/* Whether the free of @ptr may have to be recorded: in sampled mode one
 * relaxed load of the free mode and one of the address filter, and no call,
 * so that a hook can chain to the real free as a tail call otherwise. */
static inline bool
tide_free_may_record (void *ptr)
{
  int mode = atomic_load_explicit (&tide_state.free_mode, memory_order_relaxed);

  if (TIDE_LIKELY (mode == TIDE_FREE_IGNORE))
    return false;
  return mode == TIDE_FREE_ALL
         || TIDE_UNLIKELY (tide_addrset_maybe (&tide_state.addrset, (uintptr_t) ptr));
}

/* The free of a block of @kind, before the real free.  The guard (a free
 * made by the profiler itself) is read only once the filter says maybe: a
 * free is the most frequent call there is. */
static inline void
tide_maybe_record_free (void     *ptr,
                        uint16_t  kind)
{
  if (TIDE_LIKELY (!tide_free_may_record (ptr)) || tide_tls.guard)
    return;
  if (atomic_load_explicit (&tide_state.free_mode, memory_order_relaxed) == TIDE_FREE_ALL)
    tide_record_free (ptr, kind);
  else
    tide_record_free_if_sampled (ptr, kind, NULL);
}

/* tide-preload-malloc.c: realloc of a block of @kind through @call (the
 * real realloc, or a chained allocator's, with @ctx): a recorded block
 * that moves is a FREE of the old address and an ALLOC of the new one. */
typedef void *(*TideReallocCall) (void   *ctx,
                                  void   *ptr,
                                  size_t  nmemb,
                                  size_t  size);
void    *tide_realloc_tracked    (void            *ptr,
                                  size_t           size,
                                  uint16_t         kind,
                                  TideReallocCall  call,
                                  void            *ctx,
                                  size_t           nmemb);

/* tide-preload-pyalloc.c: CPython's arena allocator, wrapped at start-up. */
void     tide_pyalloc_hook_arenas (void);

/* tide-preload-pymalloc.c: the place held for a placed Python object
 * (TIDE_ADDR_PLACED), and letting it go. */
void    *tide_pymalloc_place_of      (const void *block);
void     tide_pymalloc_release_place (void       *place);

/* tide-preload-scope.c */
uint32_t tide_scope_current      (void);
void     tide_scope_resend_all   (void);
void     tide_preload_allocator_free_init (void);
void     tide_preload_send_allocator_free (void);
void     tide_preload_send_allocator_free_at_step (void);
void     tide_preload_poll_allocator_free (uint64_t now_ns);
void     tide_preload_note_own_at_fork (void);
void     tide_preload_allocator_free_fork_child (void);
void     tide_preload_send_allocator_free_at_fork (void);
void     tide_preload_note_inherited_free (uint64_t size);
void     tide_preload_send_resident (void);
void     tide_wait_for_recorder  (TideBarrierReason reason);
void     tide_wait_for_step_reading (int patience_ms);
void     tidemark_preload_counter (uint32_t counter,
                                   int      device,
                                   int64_t  value);
void     tide_counter_append_at  (uint32_t counter,
                                  int      device,
                                  int64_t  value,
                                  uint64_t time_ns);
void     tide_preload_send_allocator_free_as_of (uint64_t at_ns);
void     tide_scope_fork_prepare (void);
void     tide_scope_fork_parent  (void);
void     tide_scope_fork_child   (void);
