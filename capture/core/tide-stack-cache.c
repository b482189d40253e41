/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-stack-cache.c: open addressing with linear probing; the pcs of all
 * cached stacks live one after another in one array, so an entry is a hash,
 * an offset, a length and the id.  Entries are never removed one by one,
 * only all at once, so there are no tombstones.
 */
#include "config.h"

#include "tide-stack-cache.h"

#include <string.h>

#define MIN_SLOTS   1024u
#define MAX_STACKS  (1u << 17)
#define MAX_FRAMES  (1u << 22)  /* 32 MiB of pcs */

typedef struct
{
  guint64 hash;
  gint64  stack_id;  /* 0: empty slot */
  guint32 offset;    /* into frames */
  guint32 n_frames;
} Slot;

struct _TideStackCache
{
  Slot    *slots;
  guint    mask;
  guint    count;
  GArray  *frames;   /* guint64 */
  guint64  generation;
};

TideStackCache *
tide_stack_cache_new (void)
{
  TideStackCache *self = g_new0 (TideStackCache, 1);

  self->slots = g_new0 (Slot, MIN_SLOTS);
  self->mask = MIN_SLOTS - 1;
  self->frames = g_array_new (FALSE, FALSE, sizeof (guint64));
  return self;
}

void
tide_stack_cache_free (TideStackCache *self)
{
  if (self == NULL)
    return;
  g_free (self->slots);
  g_array_unref (self->frames);
  g_free (self);
}

/* A stack's frames folded one multiply each, not tide_hash_mix()'s two
 * rounds per field: every sample's stack is hashed here.  The xor-shift
 * after each keeps the order of the frames in the hash. */
static guint64
hash_frames (const guint64 *frames,
             guint          n_frames)
{
  guint64 h = 0x9E3779B97F4A7C15ull * (n_frames + 1);

  for (guint i = 0; i < n_frames; i++)
    {
      h ^= frames[i];
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 29;
    }
  return h ^ (h >> 32);
}

static void
forget_all (TideStackCache *self)
{
  memset (self->slots, 0, ((gsize) self->mask + 1) * sizeof (Slot));
  self->count = 0;
  g_array_set_size (self->frames, 0);
}

/* A new generation makes every cached id stale. */
static void
enter_generation (TideStackCache *self,
                  guint64         generation)
{
  if (generation == self->generation)
    return;
  if (self->count > 0)
    forget_all (self);
  self->generation = generation;
}

static gboolean
slot_matches (TideStackCache *self,
              const Slot     *slot,
              guint64         hash,
              const guint64  *frames,
              guint           n_frames)
{
  return slot->hash == hash && slot->n_frames == n_frames &&
         memcmp (&g_array_index (self->frames, guint64, slot->offset), frames,
                 n_frames * sizeof (guint64)) == 0;
}

gint64
tide_stack_cache_lookup (TideStackCache *self,
                         guint64         generation,
                         const guint64  *frames,
                         guint           n_frames)
{
  guint64 hash = hash_frames (frames, n_frames);

  enter_generation (self, generation);
  for (guint i = hash & self->mask; self->slots[i].stack_id != 0; i = (i + 1) & self->mask)
    if (slot_matches (self, &self->slots[i], hash, frames, n_frames))
      return self->slots[i].stack_id;
  return 0;
}

static void
put (Slot       *slots,
     guint       mask,
     const Slot *slot)
{
  guint i = slot->hash & mask;

  while (slots[i].stack_id != 0)
    i = (i + 1) & mask;
  slots[i] = *slot;
}

static void
grow (TideStackCache *self)
{
  guint n = (self->mask + 1) * 2;
  Slot *slots = g_new0 (Slot, n);

  for (guint i = 0; i <= self->mask; i++)
    if (self->slots[i].stack_id != 0)
      put (slots, n - 1, &self->slots[i]);
  g_free (self->slots);
  self->slots = slots;
  self->mask = n - 1;
}

void
tide_stack_cache_insert (TideStackCache *self,
                         guint64         generation,
                         const guint64  *frames,
                         guint           n_frames,
                         gint64          stack_id)
{
  Slot slot;

  if (stack_id == 0 || n_frames > MAX_FRAMES)
    return;
  enter_generation (self, generation);
  if (self->count + 1 > MAX_STACKS || self->frames->len + n_frames > MAX_FRAMES)
    forget_all (self);
  if ((self->count + 1) * 2 > self->mask + 1)
    grow (self);

  slot = (Slot) {
    .hash = hash_frames (frames, n_frames),
    .stack_id = stack_id,
    .offset = self->frames->len,
    .n_frames = n_frames,
  };
  g_array_append_vals (self->frames, frames, n_frames);
  put (self->slots, self->mask, &slot);
  self->count++;
}

guint
tide_stack_cache_get_size (TideStackCache *self)
{
  return self->count;
}
