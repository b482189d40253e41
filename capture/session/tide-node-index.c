/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-node-index.c: the stack tree's nodes by (parent, frame).  A
 * recording of every allocation interns millions of nodes, and a stack
 * that is new from some depth down looks up each of its frames there.  The
 * entries hold their keys in place, in one array probed linearly, so that
 * a lookup reads one cache line, where a GHashTable reads its hashes, its
 * keys, the key each points to and its values; the array is
 * tide-table-memory.c's.  Nodes are never removed.
 */
#include "config.h"

#include "tide-node-index.h"

#include "tide-hash.h"
#include "tide-table-memory.h"

#define MIN_ENTRIES 1024

typedef struct
{
  gint64 parent_id;
  gint64 frame_id;
  gint64 id;        /* 0: an empty entry */
} Entry;

struct _TideNodeIndex
{
  Entry *entries;
  gsize  mask;      /* number of entries - 1 */
  gsize  used;
};

static Entry *
probe (const TideNodeIndex *self,
       gint64               parent_id,
       gint64               frame_id)
{
  gsize i = (gsize) tide_hash_mix (tide_hash_u64 ((guint64) parent_id), (guint64) frame_id)
            & self->mask;

  for (;; i = (i + 1) & self->mask)
    {
      Entry *e = &self->entries[i];

      if (e->id == 0 || (e->parent_id == parent_id && e->frame_id == frame_id))
        return e;
    }
}

static void
grow (TideNodeIndex *self,
      gsize          n_entries)
{
  Entry *old = self->entries;
  gsize old_n = old != NULL ? self->mask + 1 : 0;

  self->entries = tide_table_memory_new (n_entries * sizeof (Entry));
  self->mask = n_entries - 1;
  for (gsize i = 0; i < old_n; i++)
    if (old[i].id != 0)
      *probe (self, old[i].parent_id, old[i].frame_id) = old[i];
  tide_table_memory_free (old, old_n * sizeof (Entry));
}

TideNodeIndex *
tide_node_index_new (void)
{
  return g_new0 (TideNodeIndex, 1);
}

void
tide_node_index_free (TideNodeIndex *self)
{
  if (self == NULL)
    return;
  tide_table_memory_free (self->entries,
                          self->entries != NULL ? (self->mask + 1) * sizeof (Entry) : 0);
  g_free (self);
}

/* The id of the node of @frame_id under @parent_id, or 0 for none. */
gint64
tide_node_index_lookup (TideNodeIndex *self,
                        gint64         parent_id,
                        gint64         frame_id)
{
  return self->entries != NULL ? probe (self, parent_id, frame_id)->id : 0;
}

/* Adds the node @id (not 0) of @frame_id under @parent_id, which has none. */
void
tide_node_index_insert (TideNodeIndex *self,
                        gint64         parent_id,
                        gint64         frame_id,
                        gint64         id)
{
  Entry *e;

  g_return_if_fail (id != 0);

  if (self->entries == NULL)
    grow (self, MIN_ENTRIES);
  /* At most three quarters full: the hash spreads the keys well enough
   * for linear probing there, and the array is the recorder's largest. */
  else if ((self->used + 1) * 4 > (self->mask + 1) * 3)
    grow (self, (self->mask + 1) * 2);
  e = probe (self, parent_id, frame_id);
  g_return_if_fail (e->id == 0);
  *e = (Entry) { parent_id, frame_id, id };
  self->used++;
}

gsize
tide_node_index_size (TideNodeIndex *self)
{
  return self->used;
}
