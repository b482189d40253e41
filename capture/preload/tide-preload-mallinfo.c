/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-mallinfo.c: what glibc's allocator holds free, sent at each
 * step end and in the exit path, before the recorder's last reading; a
 * process that marks no steps (a DataLoader worker) sends it from the
 * flusher every TIDE_ALLOC_FREE_PERIOD_NS, from its start or fork on, so
 * that the recorder's readings of it between have it beside them and not
 * only its last one.  Freed blocks stay in the arenas (and the top
 * chunk), so RSS can climb while the heap of live blocks does not: this
 * counter (TIDE_COUNTER_ALLOC_FREE of storage/common/tide-kinds.h) is how
 * a report tells that apart from a leak.
 * Only the program can ask its allocator, so the preload does, on the
 * thread that marks the step, which is about to wait for the recorder's
 * flush anyway.
 *
 * mallinfo2 came with glibc 2.33; it is looked up, so an older glibc
 * leaves glibc's part out.  A program on jemalloc (preloaded or linked:
 * its mallctl is found) still has glibc's arenas for its start-up, and
 * jemalloc's free memory is added: the pages it keeps resident that no
 * live block uses (stats.resident - stats.allocated, its metadata
 * included), sent on their own too (TIDE_COUNTER_JEMALLOC_FREE) so that a
 * report can say which allocator keeps them.  tcmalloc (gperftools, its
 * MallocExtension_GetNumericProperty found) is read the same way: the
 * free bytes of its page heap that it has not returned to the system, of
 * its central, transfer and thread caches, and its metadata
 * (TIDE_COUNTER_TCMALLOC_FREE).
 *
 * A fork's child also frees blocks its parent allocated, which it never
 * recorded: their bytes join its allocator's free memory, or leave the
 * process (a mapped block), and no heap term balances them.  The sampled
 * ones are in the address set, marked TIDE_ADDR_INHERITED, so their
 * weighted bytes estimate all of them (TIDE_COUNTER_INHERITED_FREED),
 * sent with the free memory by a fork's child only.
 */
#include "config.h"

#include "tide-preload-private.h"
#include "tide-preload-buffer.h"
#include "tide-preload-own.h"
#include "tide-preload-sampler.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Often enough that each of the recorder's readings (every half second
 * at most) has a value from just before it; mallinfo2 walks every free
 * chunk under its arena's lock, a fraction of a millisecond on a large
 * Python heap. */
#define TIDE_ALLOC_FREE_PERIOD_NS (100ull * 1000 * 1000)

/* Whether this process marks steps, whose ends send the allocator's free
 * memory; and when the flusher last sent it (the flusher's alone). */
static atomic_int marks_steps;
static uint64_t   polled_ns;

/* Whether this process is a fork's child, and the weighted bytes of the
 * inherited blocks it has freed since its fork. */
static atomic_int      forked;
static _Atomic int64_t inherited_freed;

typedef struct mallinfo2 (*Mallinfo2Func) (void);
typedef int (*MallctlFunc) (const char *name, void *old, size_t *old_len, void *new_value,
                            size_t new_len);
typedef int (*NumericPropertyFunc) (const char *name, size_t *value);

static Mallinfo2Func
lookup_mallinfo2 (void)
{
  static _Atomic (Mallinfo2Func) cached;
  static atomic_int looked_up;
  Mallinfo2Func fn = atomic_load (&cached);

  if (fn == NULL && !atomic_exchange (&looked_up, 1))
    {
      *(void **) &fn = dlsym (RTLD_DEFAULT, "mallinfo2");
      atomic_store (&cached, fn);
    }
  return fn;
}

/* An allocator's own function, or NULL where that allocator is not
 * there, looked up once into @cached. */
static void *
lookup_allocator_function (_Atomic (void *) *cached,
                           atomic_int       *looked_up,
                           const char       *name)
{
  void *fn = atomic_load (cached);

  if (fn == NULL && !atomic_exchange (looked_up, 1))
    {
      /* Without that allocator the lookup fails, and glibc allocates the
       * error's text: that block is ours, not the program's, and the error
       * is cleared so that the program's next dlerror() does not see it. */
      tide_tls.guard++;
      fn = dlsym (RTLD_DEFAULT, name);
      if (fn == NULL)
        dlerror ();
      tide_tls.guard--;
      atomic_store (cached, fn);
    }
  return fn;
}

static MallctlFunc
lookup_mallctl (void)
{
  static _Atomic (void *) cached;
  static atomic_int looked_up;
  MallctlFunc fn;

  *(void **) &fn = lookup_allocator_function (&cached, &looked_up, "mallctl");
  return fn;
}

static NumericPropertyFunc
lookup_tcmalloc_property (void)
{
  static _Atomic (void *) cached;
  static atomic_int looked_up;
  NumericPropertyFunc fn;

  *(void **) &fn = lookup_allocator_function (&cached, &looked_up,
                                              "MallocExtension_GetNumericProperty");
  return fn;
}

/* jemalloc's statistics are a snapshot that "epoch" refreshes. */
static bool
read_jemalloc_free (MallctlFunc mallctl_fn,
                    int64_t    *free_out)
{
  uint64_t epoch = 1;
  size_t epoch_len = sizeof epoch, len = sizeof (size_t);
  size_t resident = 0, allocated = 0;

  if (mallctl_fn ("epoch", &epoch, &epoch_len, &epoch, sizeof epoch) != 0 ||
      mallctl_fn ("stats.resident", &resident, &len, NULL, 0) != 0 ||
      mallctl_fn ("stats.allocated", &allocated, &len, NULL, 0) != 0)
    return false;
  *free_out = resident > allocated ? (int64_t) (resident - allocated) : 0;
  return true;
}

/* What tcmalloc holds that no live block uses: its physical bytes (the
 * page heap's mapped pages and its metadata) less the application's.
 * That is the page heap's free pages (its unmapped ones are back with the
 * system), the free objects of its caches, and its metadata, as jemalloc's
 * stats.resident counts jemalloc's: the page map's leaves are zeroed when
 * made, each covering 2 GiB of address space, so a heap that grows across
 * such a boundary touches one more. */
static bool
read_tcmalloc_free (NumericPropertyFunc property_fn,
                    int64_t            *free_out)
{
  size_t physical = 0, allocated = 0;

  if (!property_fn ("generic.total_physical_bytes", &physical) ||
      !property_fn ("generic.current_allocated_bytes", &allocated))
    return false;
  *free_out = physical > allocated ? (int64_t) (physical - allocated) : 0;
  return true;
}

/* fordblks: the bytes of free chunks in every glibc arena, the top chunks
 * included; and jemalloc's or tcmalloc's, when one of them is there;
 * stamped @at_ns, with the preload's own resident bytes (@own, -1: as
 * they are now). */
static void
send_allocator_free (uint64_t at_ns,
                     int64_t  own)
{
  Mallinfo2Func mallinfo2_fn = lookup_mallinfo2 ();
  MallctlFunc mallctl_fn = lookup_mallctl ();
  NumericPropertyFunc tcmalloc_fn = lookup_tcmalloc_property ();
  int64_t total = 0, jemalloc_free = 0, tcmalloc_free = 0;
  bool any = false;

  if (mallinfo2_fn != NULL)
    {
      total += (int64_t) mallinfo2_fn ().fordblks;
      any = true;
    }
  tide_tls.guard++;
  if (mallctl_fn != NULL && !read_jemalloc_free (mallctl_fn, &jemalloc_free))
    mallctl_fn = NULL;
  if (tcmalloc_fn != NULL && !read_tcmalloc_free (tcmalloc_fn, &tcmalloc_free))
    tcmalloc_fn = NULL;
  tide_tls.guard--;
  if (mallctl_fn != NULL)
    {
      total += jemalloc_free;
      any = true;
      tide_counter_append_at (TIDE_WIRE_COUNTER_JEMALLOC_FREE, -1, jemalloc_free, at_ns);
    }
  if (tcmalloc_fn != NULL)
    {
      total += tcmalloc_free;
      any = true;
      tide_counter_append_at (TIDE_WIRE_COUNTER_TCMALLOC_FREE, -1, tcmalloc_free, at_ns);
    }
  if (any)
    tide_counter_append_at (TIDE_WIRE_COUNTER_ALLOC_FREE, -1, total, at_ns);
  /* Beside it, as the other anonymous memory that only the process can
   * tell: the preload's own. */
  tide_counter_append_at (TIDE_WIRE_COUNTER_PRELOAD_OWN, -1,
                          own >= 0 ? own : (int64_t) tide_own_resident_bytes (), at_ns);
  if (atomic_load_explicit (&forked, memory_order_relaxed))
    tide_counter_append_at (TIDE_WIRE_COUNTER_INHERITED_FREED, -1,
                            atomic_load_explicit (&inherited_freed, memory_order_relaxed), at_ns);
}

void
tide_preload_send_allocator_free (void)
{
  send_allocator_free (tide_now_ns (), -1);
}

/* The recorder reads this process's private memory at @at_ns, another
 * process's step end, and asked for the figures beside it
 * (TIDE_WIRE_FIGURES_REQUEST): sent at once, on the flusher, with what
 * every thread made before them, and then the mark that they were sent,
 * which the recorder waits for before it reads. */
void
tide_preload_send_allocator_free_as_of (uint64_t at_ns)
{
  _Alignas (8) TideWireHeader sent = {
    .type = TIDE_WIRE_FIGURES_SENT, .len = sizeof sent, .tid = tide_thread_tid (), .time_ns = at_ns,
  };

  send_allocator_free (at_ns, -1);
  tide_buffer_flush_all ();
  tide_tls.guard++;
  tide_buffer_append (&sent, sizeof sent);
  tide_tls.guard--;
  tide_buffer_flush_self ();
}

/* A block of @size bytes that the parent of this process's fork sampled
 * is freed.  Rare: only a fork's child frees one, each at most once. */
void
tide_preload_note_inherited_free (uint64_t size)
{
  double bytes = (double) size * tide_sampler_weight (size, tide_state.sample_bytes);
  int64_t whole = bytes < 4.0e18 ? (int64_t) bytes : INT64_C (4000000000000000000);

  atomic_fetch_add_explicit (&inherited_freed, whole, memory_order_relaxed);
}

/* glibc sets its allocator up at the first call into it, with no lock
 * (ptmalloc_init), so a second thread that calls in meanwhile reads an
 * arena that is not set up: the flusher's first mallinfo2, in a program
 * whose first malloc came at that moment, read an arena with no top
 * chunk.  So the thread that loads the preload, before it starts the
 * flusher and while it is the only one, looks the allocators' functions
 * up and asks glibc's once. */
void
tide_preload_allocator_free_init (void)
{
  Mallinfo2Func mallinfo2_fn = lookup_mallinfo2 ();

  (void) lookup_mallctl ();
  (void) lookup_tcmalloc_property ();
  if (mallinfo2_fn != NULL)
    (void) mallinfo2_fn ();
}

/* At a step's mark: from now on the marks send it. */
void
tide_preload_send_allocator_free_at_step (void)
{
  atomic_store (&marks_steps, 1);
  tide_preload_send_allocator_free ();
}

/* From the flusher, on every tick, at @now_ns. */
void
tide_preload_poll_allocator_free (uint64_t now_ns)
{
  if (atomic_load (&marks_steps) || now_ns - polled_ns < TIDE_ALLOC_FREE_PERIOD_NS)
    return;
  polled_ns = now_ns;
  tide_preload_send_allocator_free ();
}

/* The preload's own resident bytes in a fork's child as it starts, all
 * of them its parent's, on shared pages: the child's term counts from
 * this first value.  Its buffers and tables have room that its parent
 * never touched, and the child's first records, its HELLO among them,
 * touch some of it: new pages, private, that a first value read after
 * them would leave out of every term. */
static int64_t own_at_fork = -1;

void
tide_preload_note_own_at_fork (void)
{
  own_at_fork = (int64_t) tide_own_resident_bytes ();
}

/* The child of a fork has marked no steps of its own: before its
 * flusher starts. */
void
tide_preload_allocator_free_fork_child (void)
{
  atomic_store (&marks_steps, 0);
  polled_ns = 0;
  atomic_store (&forked, 1);
  atomic_store (&inherited_freed, 0);
}

/* What a fork's child's allocator holds free at the fork is its parent's,
 * on shared pages: the child's own term counts from this first value.
 * glibc's allocator is usable again when the fork's child handlers run,
 * jemalloc's and tcmalloc's maybe not before their own handlers: with one
 * of those, the flusher's first tick sends it, and the inherited bytes
 * freed, nothing yet, go alone. */
void
tide_preload_send_allocator_free_at_fork (void)
{
  if (lookup_mallctl () == NULL && lookup_tcmalloc_property () == NULL)
    send_allocator_free (tide_now_ns (), own_at_fork);
  else
    {
      tidemark_preload_counter (TIDE_WIRE_COUNTER_INHERITED_FREED, -1, 0);
      if (own_at_fork >= 0)
        tidemark_preload_counter (TIDE_WIRE_COUNTER_PRELOAD_OWN, -1, own_at_fork);
    }
}
