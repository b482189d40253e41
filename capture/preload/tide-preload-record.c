/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-record.c: the slow path shared by the hooks: the sampling
 * decision, and building ALLOC and FREE records.  Everything here runs with
 * tide_tls.guard raised, so what the profiler allocates for itself (the
 * unwinder's caches, a thread's key slot) is never recorded, and errno is
 * given back as the real call left it.
 */
#include "config.h"

#include "tide-preload-private.h"

#include "tide-preload-buffer.h"
#include "tide-preload-encode.h"
#include "tide-preload-objects.h"
#include "tide-preload-python.h"
#include "tide-preload-unwind.h"

#include <errno.h>

/* Called when tide_should_sample() said "maybe".  Returns the weight of the
 * record to make, or 0 for none. */
double
tide_sample_decide (size_t size)
{
  uint64_t mean = tide_state.sample_bytes;

  if (!tide_active ())
    {
      /* Dormant or not started yet: look again in a MiB. */
      tide_tls.countdown = 1 << 20;
      return 0.0;
    }
  if (tide_state.all)
    return 1.0;
  if (TIDE_UNLIKELY (!tide_tls.seeded))
    {
      uint64_t base = tide_state.seed;
      uint32_t stream;

      /* With a fixed seed, threads are told apart by the order in which
       * they first sample, not by their tids, which change from run to
       * run: a deterministic program then samples the same blocks every
       * time, which is what a fixed seed is for. */
      if (tide_state.have_seed)
        stream = atomic_fetch_add (&tide_state.seeded_threads, 1);
      else
        {
          base ^= tide_now_ns ();
          stream = tide_thread_tid ();
        }
      tide_rng_seed (&tide_tls.rng, tide_sampler_seed (base, stream));
      tide_tls.seeded = true;
      tide_tls.countdown = tide_sampler_draw (&tide_tls.rng, mean);
      if (size >= mean)
        return 1.0;
      if ((tide_tls.countdown -= (int64_t) size) > 0)
        return 0.0;
    }
  else if (size >= mean)
    return 1.0;  /* always recorded, outside the countdown */
  tide_tls.countdown = tide_sampler_draw (&tide_tls.rng, mean);
  return tide_sampler_weight (size, mean);
}

/* Records the block at @addr under the address @place (the same, unless the
 * block was placed: TIDE_ADDR_PLACED).  Returns whether its free will be
 * found: false when nothing was recorded, or the set could not take it. */
bool
tide_record_alloc_placed (const void *addr,
                          const void *place,
                          size_t      size,
                          double      weight,
                          uint16_t    kind)
{
  _Alignas (8) unsigned char rec[TIDE_ENCODE_ALLOC_MAX];
  uint64_t frames[TIDE_WIRE_MAX_FRAMES];
  int saved = errno;
  bool track = kind == TIDE_KIND_MMAP || kind == TIDE_KIND_PYARENA
               || ((kind == TIDE_KIND_MALLOC || kind == TIDE_KIND_PYOBJECT) && !tide_state.all);
  bool tracked = false;
  uint32_t n_frames = 0, len;

  tide_tls.guard++;
  if (!tide_active ())
    goto out;
  if (TIDE_UNLIKELY (atomic_load_explicit (&tide_objects_dirty, memory_order_relaxed) != 0))
    tide_objects_announce ();
  /* An arena is plumbing: the objects in it carry the stacks. */
  if (kind != TIDE_KIND_PYARENA)
    n_frames = tide_unwind (frames, TIDE_WIRE_MAX_FRAMES);
  if (kind != TIDE_KIND_PYARENA && tide_python_depth () > 0)
    n_frames = tide_python_splice (frames, n_frames, TIDE_WIRE_MAX_FRAMES);
  len = tide_encode_alloc (rec, sizeof rec, tide_stamp (), (uintptr_t) place, size, weight,
                           tide_scope_current (), kind, frames, n_frames);
  if (track)
    {
      /* Sampled blocks (and every mapping) go into the set with their
       * record, before the pointer is returned: their frees must find them
       * from then on.  A block the set cannot take is not recorded. */
      TideAddrEntry entry = { .addr = (uintptr_t) addr, .size = size, .kind = kind,
                              .flags = place != addr ? TIDE_ADDR_PLACED : 0 };

      tracked = tide_buffer_append_tracked (rec, len, &tide_state.addrset, &entry);
    }
  else
    tide_buffer_append (rec, len);
out:
  tide_tls.guard--;
  errno = saved;
  return tracked;
}

void
tide_record_alloc (const void *addr,
                   size_t      size,
                   double      weight,
                   uint16_t    kind)
{
  (void) tide_record_alloc_placed (addr, addr, size, weight, kind);
}

/* The free of the block at @addr, now: folded into its ALLOC record when
 * @entry says that is still in this thread's buffer, else a FREE record. */
static void
record_free (const void          *addr,
             uint16_t             kind,
             const TideAddrEntry *entry)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireFree)];
  int saved = errno;

  tide_tls.guard++;
  if (tide_active ())
    {
      TideStamp stamp = tide_stamp ();

      if (entry == NULL || !tide_buffer_fold_free (entry, (uintptr_t) addr, kind, stamp.time_ns))
        tide_buffer_append (rec, tide_encode_free (rec, sizeof rec, stamp, (uintptr_t) addr, kind));
    }
  tide_tls.guard--;
  errno = saved;
}

void
tide_record_free (const void *addr,
                  uint16_t    kind)
{
  record_free (addr, kind, NULL);
}

/* The kinds of block that a free of @kind ends.  free() and realloc() also
 * end the sampled Python objects that pymalloc handed on to the raw
 * allocator (tide-preload-pymalloc.c), whose frees no wrapper of
 * CPython's sees. */
static uint32_t
kinds_ended_by (uint16_t kind)
{
  if (kind == TIDE_KIND_MALLOC)
    return TIDE_ADDRSET_KIND (TIDE_KIND_MALLOC) | TIDE_ADDRSET_KIND (TIDE_KIND_PYOBJECT);
  return TIDE_ADDRSET_KIND (kind);
}

/* Records the free when addr was recorded with a kind that a free of @kind
 * ends, as that kind, and at its place; a place held for the block is let
 * go once the free is recorded.  A block inherited from the parent of a
 * fork leaves the set unrecorded, as if it had never been in it, and only
 * counts among the inherited bytes freed.  Called
 * before the real free: the address may be handed out again at once. */
bool
tide_record_free_if_sampled (const void    *addr,
                             uint16_t       kind,
                             TideAddrEntry *out)
{
  TideAddrEntry e;
  void *place = NULL;
  bool recorded;

  if (!tide_addrset_maybe (&tide_state.addrset, (uintptr_t) addr)
      || !tide_addrset_remove (&tide_state.addrset, (uintptr_t) addr, kinds_ended_by (kind), &e))
    return false;
  recorded = !(e.flags & TIDE_ADDR_INHERITED);
  if (!recorded)
    tide_preload_note_inherited_free (e.size);
  if (e.flags & TIDE_ADDR_PLACED)
    place = tide_pymalloc_place_of (addr);
  if (recorded)
    record_free (place != NULL ? place : addr, (uint16_t) e.kind, &e);
  if (place != NULL)
    tide_pymalloc_release_place (place);
  if (recorded && out != NULL)
    *out = e;
  return recorded;
}
