/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Heap bytes are not RSS.  At every step end the recording asks
 * /proc/PID/pagemap which pages of each recorded live host block are
 * present, outside the target's hot path, and stores the resident bytes per
 * (stack, scope): all live blocks, and those born in the step.  A sampled
 * block stands for `weight` blocks, so its resident bytes are scaled alike.
 */
#include "config.h"

#include "tide-capture-process.h"
#include "tide-hash.h"
#include "tide-recording-private.h"
#include "tide-schema.h"
#include "tide-wire.h"

typedef struct
{
  GArray *blocks;   /* TideLiveAlloc copies */
  gint64  end_ns;
} Collect;

typedef struct
{
  gint64 stack_id;
  gint64 scope_id;
  double resident;
  double resident_born;
} Residency;

static void
collect_host_block (const TideLiveAlloc *alloc,
                    gint64               free_ns,
                    gpointer             user_data)
{
  Collect *c = user_data;

  /* Only blocks that were live at the step end, in host memory, and
   * none of CPython's arenas, whose objects count their own pages. */
  if (alloc->device >= 0 || alloc->kind == TIDE_KIND_PYARENA || alloc->alloc_ns > c->end_ns || (free_ns != 0 && free_ns <= c->end_ns))
    return;
  g_array_append_val (c->blocks, *alloc);
}

static guint
residency_hash (gconstpointer p)
{
  const Residency *r = p;
  return (guint) tide_hash_ids ((guint64) r->stack_id, (guint64) r->scope_id, 0);
}

static gboolean
residency_equal (gconstpointer a,
                 gconstpointer b)
{
  const Residency *x = a, *y = b;
  return x->stack_id == y->stack_id && x->scope_id == y->scope_id;
}

static void
write_residency (TideTraceWriter *writer,
                 gint64           step_id,
                 GHashTable      *by_group)
{
  GHashTableIter iter;
  Residency *r;

  g_hash_table_iter_init (&iter, by_group);
  while (g_hash_table_iter_next (&iter, (gpointer *) &r, NULL))
    {
      TideResidencyRow row = {
        .step_id = step_id,
        .stack_id = r->stack_id,
        .scope_id = r->scope_id,
        .device = -1,
        .resident_bytes = (gint64) (r->resident + 0.5),
        .resident_born_bytes = (gint64) (r->resident_born + 0.5),
      };
      tide_trace_writer_add_residency (writer, &row);
    }
}

void
tide_capture_process_measure_residency (TideCaptureProcess *self,
                                        gint64              step_id,
                                        gint64              step_start_ns,
                                        gint64              step_end_ns)
{
  g_autoptr(GArray) ranges = NULL;
  g_autoptr(GHashTable) by_group = NULL;
  g_autofree TideBlockPlace *places = NULL;
  g_autofree guint64 *resident_in_order = NULL;
  g_autofree guint64 *resident = NULL;
  const TideLiveAlloc *blocks;
  Collect c = { .end_ns = step_end_ns };

  if (self->pagemap == NULL)
    return;

  c.blocks = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
  tide_live_table_foreach (self->live, collect_host_block, &c);
  if (self->more_blocks != NULL)
    self->more_blocks (collect_host_block, &c, self->more_blocks_data);
  blocks = (const TideLiveAlloc *) c.blocks->data;
  places = tide_live_allocs_places_by_addr (blocks, c.blocks->len);

  ranges = g_array_sized_new (FALSE, FALSE, sizeof (TideRange), c.blocks->len);
  for (guint i = 0; i < c.blocks->len; i++)
    {
      TideRange r = { places[i].addr, places[i].size };
      g_array_append_val (ranges, r);
    }
  resident_in_order = g_new0 (guint64, MAX (c.blocks->len, 1));
  /* A process that exited right after its last step has no pages left to
   * read: say nothing rather than "nothing was resident". */
  if (!tide_pagemap_resident (self->pagemap, (const TideRange *) ranges->data, ranges->len,
                              resident_in_order))
    {
      g_array_unref (c.blocks);
      return;
    }
  resident = g_new0 (guint64, MAX (c.blocks->len, 1));
  for (guint i = 0; i < c.blocks->len; i++)
    resident[places[i].index] = resident_in_order[i];

  by_group = g_hash_table_new_full (residency_hash, residency_equal, g_free, NULL);
  for (guint i = 0; i < c.blocks->len; i++)
    {
      const TideLiveAlloc *a = &blocks[i];
      Residency probe = { a->stack_id, a->scope_id, 0, 0 };
      Residency *r = g_hash_table_lookup (by_group, &probe);

      if (r == NULL)
        {
          r = g_memdup2 (&probe, sizeof probe);
          g_hash_table_add (by_group, r);
        }
      r->resident += resident[i] * a->weight;
      if (a->alloc_ns > step_start_ns)
        r->resident_born += resident[i] * a->weight;
    }
  /* An empty row says "measured, nothing resident", unlike no row at all. */
  if (g_hash_table_size (by_group) == 0)
    g_hash_table_add (by_group, g_new0 (Residency, 1));
  write_residency (self->recording->writer, step_id, by_group);
  g_array_unref (c.blocks);
}
