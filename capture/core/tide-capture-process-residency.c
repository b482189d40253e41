/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Heap bytes are not RSS.  At every step end the recording asks
 * /proc/PID/pagemap which pages of each recorded live host block are
 * present, outside the target's hot path, and stores the resident bytes per
 * (stack, scope): all live blocks, and those born in the step.  A sampled
 * block stands for `weight` blocks, so its resident bytes are scaled alike.
 * A group's row is written only where it changed since the last step end
 * measured (tide-schema.c), beside the step's total.
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

/* A group's resident bytes as last written, and the step that last
 * measured it. */
typedef struct
{
  gint64 stack_id;
  gint64 scope_id;
  gint64 resident;
  gint64 step_id;
} WrittenResidency;

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

/* Both keys start alike, so one hash and one equality serve both tables. */
G_STATIC_ASSERT (G_STRUCT_OFFSET (Residency, scope_id) ==
                 G_STRUCT_OFFSET (WrittenResidency, scope_id));

/* The group's row, unless its resident bytes are those last written and
 * none of its blocks born in the step is resident. */
static void
write_group_change (TideCaptureProcess *self,
                    gint64              step_id,
                    const Residency    *r,
                    gint64             *total,
                    gint64             *total_born)
{
  TideResidencyRow row = {
    .step_id = step_id,
    .stack_id = r->stack_id,
    .scope_id = r->scope_id,
    .device = -1,
    .resident_bytes = (gint64) (r->resident + 0.5),
    .resident_born_bytes = (gint64) (r->resident_born + 0.5),
  };
  WrittenResidency *last = g_hash_table_lookup (self->residency_written, r);

  *total += row.resident_bytes;
  *total_born += row.resident_born_bytes;
  if (last == NULL)
    {
      last = g_new0 (WrittenResidency, 1);
      *last = (WrittenResidency) { r->stack_id, r->scope_id, 0, 0 };
      g_hash_table_add (self->residency_written, last);
    }
  last->step_id = step_id;
  if (last->resident == row.resident_bytes && row.resident_born_bytes == 0)
    return;
  last->resident = row.resident_bytes;
  tide_trace_writer_add_residency (self->recording->writer, &row);
}

static void
write_residency (TideCaptureProcess *self,
                 gint64              step_id,
                 GHashTable         *by_group)
{
  GHashTableIter iter;
  Residency *r;
  WrittenResidency *gone;
  gint64 total = 0, total_born = 0;

  if (self->residency_written == NULL)
    self->residency_written = g_hash_table_new_full (residency_hash, residency_equal, g_free,
                                                     NULL);
  g_hash_table_iter_init (&iter, by_group);
  while (g_hash_table_iter_next (&iter, (gpointer *) &r, NULL))
    write_group_change (self, step_id, r, &total, &total_born);
  /* A group whose last block went holds nothing from this step on. */
  g_hash_table_iter_init (&iter, self->residency_written);
  while (g_hash_table_iter_next (&iter, (gpointer *) &gone, NULL))
    if (gone->step_id != step_id)
      {
        TideResidencyRow row = { .step_id = step_id, .stack_id = gone->stack_id,
                                 .scope_id = gone->scope_id, .device = -1 };

        if (gone->resident != 0)
          tide_trace_writer_add_residency (self->recording->writer, &row);
        g_hash_table_iter_remove (&iter);
      }
  tide_trace_writer_add_residency_total (self->recording->writer, step_id, total, total_born);
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
  write_residency (self, step_id, by_group);
  g_array_unref (c.blocks);
}
