/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-pymalloc.c: Python objects while pymalloc is the allocator.
 *
 * A Python program frees objects by the million, nearly all of them
 * unsampled.  CPython's own build calls pymalloc's free from PyObject_Free
 * through a check of the table it expects, with pymalloc's free folded in;
 * any wrapper of the free, however short, costs an indirect call and the
 * fold on every one of them.  So the free of both domains is pymalloc's
 * own, and a sampled object is made where that free hands it on to free(),
 * whose hook records it (tide_record_free_if_sampled takes a Python object
 * for a malloc block there):
 *
 *  - A sampled request of 1 to 512 bytes is asked of pymalloc as a block
 *    larger than its pools serve (PLACED_BLOCK), which pymalloc takes from
 *    the raw allocator.  When the object is freed, pymalloc finds the block
 *    outside its arenas and passes it to PyMem_RawFree, as it does its
 *    large objects, and counts it out of sys.getallocatedblocks() as it
 *    counted it in.
 *  - The object is recorded at its place: a block of its size that
 *    pymalloc serves from a pool, where the object would have been, held
 *    for as long as the object lives.  The recorder then sees the object in
 *    the arena it would have filled (which is how copy-on-write pages of an
 *    arena go to the stacks of the objects in it), and two live objects
 *    never share an address.  The place's address is kept in the block,
 *    after the bytes of the object (PLACE_OFFSET), and the block's entry in
 *    the address set says it has one (TIDE_ADDR_PLACED).
 *
 *    A sampled object of 16 bytes then holds 16 + 521 bytes and malloc's
 *    header: at the default mean of 64 KiB between samples, under 1% more
 *    memory.  A place is let go when its object's free is looked up, in a
 *    fork's child too (whose entries are marked TIDE_ADDR_INHERITED), but
 *    no free is looked up once the recorder is gone (tide_go_dormant): an
 *    object's place then stays taken, one block of its size for each
 *    object that was sampled and live then.
 *  - A larger request pymalloc passes on to the raw allocator anyway, and
 *    it is recorded where it is.
 *  - A realloc that the sampler takes places its new block as a sampled
 *    request would be: the block that pymalloc gave becomes its place, or,
 *    when the old block was a recorded one (and so the raw allocator's),
 *    stays its block and takes a new place.
 *
 * The record is made at the wrapper, with the guard raised around the call
 * of pymalloc, so the malloc hook never counts the same object a second
 * time; an unsampled request of 1 to 512 bytes, which pymalloc serves from
 * a pool without calling malloc, goes to pymalloc as a tail call.
 *
 * pymalloc's table has no context, so its functions use none: ours pass
 * none either, and reach pymalloc through the table kept here.  This is
 * for sampled mode only; under --all every object is recorded, and the
 * chained wrappers of tide-preload-pyalloc.c are used.
 */
#include "config.h"

#include "tide-preload-private.h"
#include "tide-preload-pyalloc.h"

#include <string.h>

/* A placed object's block: larger than pymalloc's pools serve, with room
 * for the address of its place after the object's bytes. */
#define PLACE_OFFSET (PYMALLOC_SMALL_MAX + 1)
#define PLACED_BLOCK (PLACE_OFFSET + sizeof (void *))

static TidePyMemAllocator pymalloc;

static inline bool
served_from_a_pool (size_t size)
{
  return size - 1 < PYMALLOC_SMALL_MAX;
}

void *
tide_pymalloc_place_of (const void *block)
{
  void *place;

  memcpy (&place, (const char *) block + PLACE_OFFSET, sizeof place);
  return place;
}

void
tide_pymalloc_release_place (void *place)
{
  TIDE_REAL_CALL (pymalloc.free (NULL, place));
}

/* Records @block, a PLACED_BLOCK that holds the object of @size bytes, at
 * @place; a place that the record does not keep goes back at once. */
static void *
record_placed (void   *block,
               void   *place,
               size_t  size,
               double  weight)
{
  memcpy ((char *) block + PLACE_OFFSET, &place, sizeof place);
  if (!tide_record_alloc_placed (block, place, size, weight, TIDE_KIND_PYOBJECT))
    tide_pymalloc_release_place (place);
  return block;
}

/* A sampled object of 1 to 512 bytes, placed; where there is no memory for
 * its block, it stays at its place, unrecorded. */
static void *
malloc_placed (size_t size,
               double weight,
               bool   zero)
{
  void *place, *block;

  TIDE_REAL_CALL (place = pymalloc.malloc (NULL, size));
  if (place == NULL)
    return NULL;
  TIDE_REAL_CALL (block = zero ? pymalloc.calloc (NULL, 1, PLACED_BLOCK)
                               : pymalloc.malloc (NULL, PLACED_BLOCK));
  if (block == NULL)
    return zero ? memset (place, 0, size) : place;
  return record_placed (block, place, size, weight);
}

/* A request that is sampled, or that pymalloc hands on to malloc (the
 * guard then keeps the malloc hook from counting it a second time): out of
 * line, so that the common request keeps no frame. */
static __attribute__ ((noinline)) void *
pymalloc_malloc_guarded (size_t size,
                         bool   sample)
{
  double weight = sample ? tide_sample_decide (size) : 0.0;
  void *p;

  if (weight > 0.0 && served_from_a_pool (size))
    return malloc_placed (size, weight, false);
  TIDE_REAL_CALL (p = pymalloc.malloc (NULL, size));
  if (weight > 0.0 && p != NULL)
    tide_record_alloc (p, size, weight, TIDE_KIND_PYOBJECT);
  return p;
}

static void *
pymalloc_malloc (void   *ctx,
                 size_t  size)
{
  bool sample = tide_should_sample (size);

  if (TIDE_LIKELY (!sample && served_from_a_pool (size)))
    return pymalloc.malloc (NULL, size);
  return pymalloc_malloc_guarded (size, sample);
}

static __attribute__ ((noinline)) void *
pymalloc_calloc_guarded (size_t nelem,
                         size_t elsize,
                         size_t total,
                         bool   sample)
{
  double weight = sample ? tide_sample_decide (total) : 0.0;
  void *p;

  if (weight > 0.0 && served_from_a_pool (total))
    return malloc_placed (total, weight, true);
  TIDE_REAL_CALL (p = pymalloc.calloc (NULL, nelem, elsize));
  if (weight > 0.0 && p != NULL)
    tide_record_alloc (p, total, weight, TIDE_KIND_PYOBJECT);
  return p;
}

static void *
pymalloc_calloc (void   *ctx,
                 size_t  nelem,
                 size_t  elsize)
{
  size_t total;
  bool overflow = __builtin_mul_overflow (nelem, elsize, &total);
  bool sample = !overflow && tide_should_sample (total);

  if (TIDE_LIKELY (!overflow && !sample && served_from_a_pool (total)))
    return pymalloc.calloc (NULL, nelem, elsize);
  return pymalloc_calloc_guarded (nelem, elsize, total, sample);
}

/* A realloc that is sampled, or of a block that may be recorded: as
 * tide_realloc_tracked() has it, the old block's record ends, and the new
 * block is recorded when the sampler takes it.  A new object of 1 to 512
 * bytes is placed: a recorded block, which is a placed block or larger
 * than the pools, keeps a placed block's size through pymalloc's realloc
 * (PyMem_RawRealloc), and takes a new place; any other moves into a placed
 * block, and stays as its place. */
static __attribute__ ((noinline)) void *
pymalloc_realloc_recorded (void   *ptr,
                           size_t  size,
                           bool    sample)
{
  double weight = sample ? tide_sample_decide (size) : 0.0;
  TideAddrEntry old;
  bool had = !tide_tls.guard && tide_record_free_if_sampled (ptr, TIDE_KIND_PYOBJECT, &old);
  bool placed = weight > 0.0 && served_from_a_pool (size);
  void *p, *block, *place;

  TIDE_REAL_CALL (p = pymalloc.realloc (NULL, ptr, had && placed ? PLACED_BLOCK : size));
  if (p == NULL)
    {
      if (had && size > 0 && old.size > 0)  /* failed: the old block lives on */
        tide_record_alloc (ptr, old.size, tide_sampler_weight (old.size, tide_state.sample_bytes),
                           TIDE_KIND_PYOBJECT);
      return NULL;
    }
  if (weight == 0.0)
    return p;
  if (!placed)
    {
      tide_record_alloc (p, size, weight, TIDE_KIND_PYOBJECT);
      return p;
    }
  if (had)
    {
      block = p;
      TIDE_REAL_CALL (place = pymalloc.malloc (NULL, size));
    }
  else
    {
      place = p;
      TIDE_REAL_CALL (block = pymalloc.malloc (NULL, PLACED_BLOCK));
      if (block != NULL)
        memcpy (block, place, size);
    }
  if (place == NULL || block == NULL)  /* no memory: unrecorded */
    return had ? block : place;
  return record_placed (block, place, size, weight);
}

/* The guard stays up around pymalloc's realloc: a block it did not serve
 * (or one that grows out of the pools) goes to the raw allocator. */
static void *
pymalloc_realloc (void   *ctx,
                  void   *ptr,
                  size_t  size)
{
  bool sample;
  void *p;

  if (ptr == NULL)
    return pymalloc_malloc (NULL, size);
  sample = tide_should_sample (size);
  if (TIDE_UNLIKELY (sample || tide_free_may_record (ptr)))
    return pymalloc_realloc_recorded (ptr, size, sample);
  TIDE_REAL_CALL (p = pymalloc.realloc (NULL, ptr, size));
  return p;
}

void
tide_pymalloc_wrappers (const TidePyMemAllocator *table,
                        TidePyMemAllocator       *ours)
{
  pymalloc = *table;
  *ours = (TidePyMemAllocator) {
    .ctx = NULL, .malloc = pymalloc_malloc, .calloc = pymalloc_calloc,
    .realloc = pymalloc_realloc, .free = pymalloc.free,
  };
}
