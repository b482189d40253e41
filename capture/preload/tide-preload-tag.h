/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-tag.h: the tag in front of a sampled malloc block.
 *
 * In sampled mode free() must tell the few recorded blocks from the many
 * others.  The address set (tide-preload-addrset.h) did it with a shared
 * filter, but each sampled block set a bit when it was made and cleared it
 * when it died, so the other core's next free() missed the cache on that
 * word; with the locked inserts and removes behind it, that was 0.4 s of
 * the 0.43 s the target lost to the profiler in alloc-bench.  So on glibc's
 * allocator a sampled block carries its own mark: the hook asks for
 * `offset` more bytes and writes 16 bytes in front of what it returns.
 *
 *     base                         p = base + offset
 *     | ...padding... | owner | info | the program's bytes ...
 *
 *  - info = size << 16 | log2 (offset) << 8 | TIDE_TAG_MARK.  glibc keeps
 *    a chunk's size in the 8 bytes in front of every block it hands out,
 *    and chunk sizes are multiples of 16, so bit 3 of that word is never
 *    set: an untagged block can never read as tagged.  free() reads that
 *    word, which glibc's free reads next anyway.
 *  - owner = p ^ the process's epoch.  A block tagged before a fork is
 *    stripped in the child like any other, but its free is the parent's
 *    to record, not the child's.
 *
 * Only valid where the real allocator is glibc's (tide_real_is_glibc()):
 * another allocator may hand out a block at the start of a mapping, whose
 * previous word cannot be read.
 *
 * Pure code (no hooks, no globals), unit-tested directly.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIDE_TAG_MARK      UINT64_C (8)
#define TIDE_TAG_MIN       16u
/* Sizes are kept in 48 bits; no x86-64 or arm64 block is that large. */
#define TIDE_TAG_MAX_SIZE  ((UINT64_C (1) << 48) - 1)

/* The offset for an alignment: at least 16, and a multiple of the
 * alignment so that p keeps it.  0 when the alignment is not a power of
 * two (memalign rounds those up; the caller does not tag them). */
static inline size_t
tide_tag_offset_for (size_t align)
{
  if (align == 0 || (align & (align - 1)) != 0 || align > ((size_t) 1 << 30))
    return 0;
  return align < TIDE_TAG_MIN ? TIDE_TAG_MIN : align;
}

static inline bool
tide_tag_marked (const void *p)
{
  return (((const uint64_t *) p)[-1] & TIDE_TAG_MARK) != 0;
}

static inline size_t
tide_tag_size (const void *p)
{
  return (size_t) (((const uint64_t *) p)[-1] >> 16);
}

static inline size_t
tide_tag_offset (const void *p)
{
  return (size_t) 1 << ((((const uint64_t *) p)[-1] >> 8) & 0x3f);
}

static inline void *
tide_tag_base (void *p)
{
  return (char *) p - tide_tag_offset (p);
}

/* True when this process (epoch) recorded the block. */
static inline bool
tide_tag_owned (const void *p,
                uint64_t    epoch)
{
  return ((const uint64_t *) p)[-2] == ((uint64_t) (uintptr_t) p ^ epoch);
}

/* Tags the block at base (offset + size bytes) and returns the program's
 * pointer.  recorded: whether this process records its free. */
static inline void *
tide_tag_put (void     *base,
              size_t    offset,
              size_t    size,
              uint64_t  epoch,
              bool      recorded)
{
  uint64_t *p = (uint64_t *) (void *) ((char *) base + offset);

  p[-2] = (uint64_t) (uintptr_t) p ^ (recorded ? epoch : ~epoch);
  p[-1] = (uint64_t) size << 16 | (uint64_t) __builtin_ctzll (offset) << 8 | TIDE_TAG_MARK;
  return p;
}
