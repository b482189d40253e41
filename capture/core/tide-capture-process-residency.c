/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Heap bytes are not RSS.  At every step end the recording asks
 * /proc/PID/pagemap which pages of each recorded live host block are
 * present, outside the target's hot path, and stores the resident bytes per
 * (stack, scope): all live blocks, and those born in the step.  A sampled
 * block stands for `weight` blocks, so its resident bytes are scaled alike.
 * A group's row is written only where it changed since the last step end
 * measured (tide-schema.c), beside the step's total.  A block that lay
 * whole on present pages at the last step end is not read again while
 * none of the process's pages is in swap (docs/DESIGN.md).
 */
#include "config.h"

#include "tide-capture-process-private.h"
#include "tide-hash.h"
#include "tide-pymalloc-free.h"
#include "tide-recording-private.h"
#include "tide-schema.h"
#include "tide-wire.h"

typedef struct
{
  GArray *blocks;   /* TideLiveAlloc copies */
  gint64  end_ns;
} Collect;

/* A (stack, scope) group: its resident bytes at the step end being
 * measured, as last written, and the last step end that found any of its
 * blocks live.  The groups live as long as their blocks, from step end to
 * step end: most of them are the same ones each time. */
typedef struct
{
  gint64 stack_id;
  gint64 scope_id;
  double resident;
  double resident_born;
  gint64 written;
  gint64 step_id;
} ResidencyGroup;

/* A block that lay whole on present pages at a step end, and its group,
 * which lives while the block does. */
typedef struct
{
  guint64         addr;
  guint64         size;
  gint64          alloc_ns;
  ResidencyGroup *group;
} WholeBlock;

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
  const ResidencyGroup *g = p;
  return (guint) tide_hash_ids ((guint64) g->stack_id, (guint64) g->scope_id, 0);
}

static gboolean
residency_equal (gconstpointer a,
                 gconstpointer b)
{
  const ResidencyGroup *x = a, *y = b;
  return x->stack_id == y->stack_id && x->scope_id == y->scope_id;
}

/* Adds a block's resident bytes to its group's at step @step_id; *@group
 * is the block's group where known (a block whole at the last step end),
 * else NULL, and is set. */
static void
add_to_group (TideCaptureProcess  *self,
              gint64               step_id,
              gint64               step_start_ns,
              const TideLiveAlloc *block,
              guint64              resident,
              ResidencyGroup     **group)
{
  ResidencyGroup probe = { .stack_id = block->stack_id, .scope_id = block->scope_id };
  ResidencyGroup *g = *group;

  if (g == NULL && (g = g_hash_table_lookup (self->residency_groups, &probe)) == NULL)
    {
      g = g_memdup2 (&probe, sizeof probe);
      g_hash_table_add (self->residency_groups, g);
    }
  *group = g;
  if (g->step_id != step_id)
    {
      g->step_id = step_id;
      g->resident = g->resident_born = 0;
    }
  g->resident += resident * block->weight;
  if (block->alloc_ns > step_start_ns)
    g->resident_born += resident * block->weight;
}

/* The group's row, unless its resident bytes are those last written and
 * none of its blocks born in the step is resident; a group whose last
 * block went holds nothing from this step on.  FALSE where the group is
 * gone. */
static gboolean
write_group_change (TideCaptureProcess *self,
                    gint64              step_id,
                    ResidencyGroup     *g,
                    gint64             *total,
                    gint64             *total_born)
{
  TideResidencyRow row = {
    .step_id = step_id,
    .stack_id = g->stack_id,
    .scope_id = g->scope_id,
    .device = -1,
  };

  if (g->step_id != step_id)
    {
      if (g->written != 0)
        tide_trace_writer_add_residency (self->recording->writer, &row);
      return FALSE;
    }
  row.resident_bytes = (gint64) (g->resident + 0.5);
  row.resident_born_bytes = (gint64) (g->resident_born + 0.5);
  *total += row.resident_bytes;
  *total_born += row.resident_born_bytes;
  if (g->written != row.resident_bytes || row.resident_born_bytes != 0)
    tide_trace_writer_add_residency (self->recording->writer, &row);
  g->written = row.resident_bytes;
  return TRUE;
}

static void
write_residency (TideCaptureProcess *self,
                 gint64              step_id)
{
  GHashTableIter iter;
  ResidencyGroup *g;
  gint64 total = 0, total_born = 0;

  g_hash_table_iter_init (&iter, self->residency_groups);
  while (g_hash_table_iter_next (&iter, (gpointer *) &g, NULL))
    if (!write_group_change (self, step_id, g, &total, &total_born))
      g_hash_table_iter_remove (&iter);
  tide_trace_writer_add_residency_total (self->recording->writer, step_id, total, total_born);
}

/* Whether a block of @kind keeps its pages while it lives, unless they go
 * to swap: an allocator's blocks.  A program may discard pages of its own
 * mappings (madvise), and the kernel drops clean pages of a file's. */
static gboolean
kind_keeps_pages (guint8 kind)
{
  return tide_kind_is_heap (kind);
}

/* @place's block as it lay whole on present pages at the last step end
 * measured, or NULL: the same block (address, size and birth), met by a
 * cursor that walks @whole in address order as the places come. */
static const WholeBlock *
find_whole (const GArray        *whole,
            guint               *cursor,
            const TideLiveAlloc *block)
{
  const WholeBlock *w = (const WholeBlock *) whole->data;

  while (*cursor < whole->len && w[*cursor].addr < block->addr)
    (*cursor)++;
  for (guint j = *cursor; j < whole->len && w[j].addr == block->addr; j++)
    if (w[j].size == block->size && w[j].alloc_ns == block->alloc_ns)
      return &w[j];
  return NULL;
}

/* Whether the blocks whole at the last step end still are: an anonymous
 * page that is present leaves RAM only for swap, so where a read of the
 * process's status after this step end found none of its pages there,
 * they are, and only the others are read from pagemap.  On a machine
 * without swap that is every step end; a few thousand blocks a step end,
 * nearly all of them whole, cost the recorder more than the rest of the
 * step end together. */
static gboolean
whole_blocks_hold (TideCaptureProcess *self,
                   gint64              step_end_ns)
{
  return self->whole_blocks != NULL && self->unswapped_ns >= step_end_ns;
}

/* The resident bytes of each block (in @blocks' order) from pagemap, but
 * for those known whole, whose groups are set in @groups; FALSE where
 * pagemap could not be read. */
static gboolean
read_resident (TideCaptureProcess   *self,
               const TideLiveAlloc  *blocks,
               const TideBlockPlace *places,
               guint                 n,
               gboolean              use_whole,
               guint64              *resident,
               ResidencyGroup      **groups)
{
  g_autoptr(GArray) ranges = g_array_sized_new (FALSE, FALSE, sizeof (TideRange), n);
  g_autofree guint64 *read = NULL;
  g_autofree gboolean *known = g_new0 (gboolean, MAX (n, 1));
  guint cursor = 0, k = 0;

  for (guint i = 0; i < n; i++)
    {
      const TideLiveAlloc *a = &blocks[places[i].index];
      const WholeBlock *w = use_whole ? find_whole (self->whole_blocks, &cursor, a) : NULL;
      TideRange r = { places[i].addr, places[i].size };

      known[i] = w != NULL;
      if (w != NULL)
        groups[places[i].index] = w->group;
      else
        g_array_append_val (ranges, r);
    }
  read = g_new0 (guint64, MAX (ranges->len, 1));
  /* A process that exited right after its last step has no pages left to
   * read: say nothing rather than "nothing was resident". */
  if (!tide_pagemap_resident (self->pagemap, (const TideRange *) ranges->data, ranges->len,
                              read))
    return FALSE;
  for (guint i = 0; i < n; i++)
    resident[places[i].index] = known[i] ? places[i].size : read[k++];
  return TRUE;
}

/* The blocks that lie whole on present pages now, in address order, with
 * their groups. */
static void
keep_whole_blocks (TideCaptureProcess    *self,
                   const TideLiveAlloc   *blocks,
                   const TideBlockPlace  *places,
                   guint                  n,
                   const guint64         *resident,
                   ResidencyGroup *const *groups)
{
  if (self->whole_blocks == NULL)
    self->whole_blocks = g_array_new (FALSE, FALSE, sizeof (WholeBlock));
  g_array_set_size (self->whole_blocks, 0);
  for (guint i = 0; i < n; i++)
    {
      const TideLiveAlloc *a = &blocks[places[i].index];
      WholeBlock w = { a->addr, a->size, a->alloc_ns, groups[places[i].index] };

      if (kind_keeps_pages (a->kind) && resident[places[i].index] == a->size)
        g_array_append_val (self->whole_blocks, w);
    }
}

void
tide_capture_process_measure_residency (TideCaptureProcess *self,
                                        gint64              step_id,
                                        gint64              step_start_ns,
                                        gint64              step_end_ns)
{
  g_autoptr(GArray) collected = NULL;
  g_autofree TideBlockPlace *places = NULL;
  g_autofree guint64 *resident = NULL;
  g_autofree ResidencyGroup **groups = NULL;
  const TideLiveAlloc *blocks;
  Collect c = { .end_ns = step_end_ns };

  if (self->pagemap == NULL)
    return;

  collected = c.blocks = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
  tide_live_table_foreach (self->live, collect_host_block, &c);
  if (self->more_blocks != NULL)
    self->more_blocks (collect_host_block, &c, self->more_blocks_data);
  blocks = (const TideLiveAlloc *) c.blocks->data;
  places = tide_live_allocs_places_by_addr (blocks, c.blocks->len);
  resident = g_new0 (guint64, MAX (c.blocks->len, 1));
  groups = g_new0 (ResidencyGroup *, MAX (c.blocks->len, 1));
  if (!read_resident (self, blocks, places, c.blocks->len,
                      whole_blocks_hold (self, step_end_ns), resident, groups))
    {
      g_clear_pointer (&self->whole_blocks, g_array_unref);
      return;
    }

  if (self->residency_groups == NULL)
    self->residency_groups = g_hash_table_new_full (residency_hash, residency_equal, g_free, NULL);
  for (guint i = 0; i < c.blocks->len; i++)
    add_to_group (self, step_id, step_start_ns, &blocks[i], resident[i], &groups[i]);
  /* Each group holds a block seen now, and stays to the next step end. */
  keep_whole_blocks (self, blocks, places, c.blocks->len, resident, groups);
  write_residency (self, step_id);
}

static void
collect_py_arena (const TideLiveAlloc *alloc,
                  gint64               free_ns,
                  gpointer             user_data)
{
  GArray *arenas = user_data;

  /* pymalloc's arenas as tide-pymalloc-free.c counts them: not the
   * interpreter's frame stack chunks. */
  if (alloc->kind == TIDE_KIND_PYARENA && alloc->device < 0 && free_ns == 0 &&
      alloc->size >= TIDE_PYMALLOC_ARENA_MIN)
    g_array_append_val (arenas, *alloc);
}

/**
 * tide_capture_process_measure_py_arena_absent:
 * @absent: (out): bytes of the live arenas on pages not present
 *
 * An arena is mapped whole but its pages come as pymalloc first touches
 * them, so what it holds free is not all resident: the part on pages
 * never touched (or out in swap) is in no RSS.
 *
 * Returns: FALSE where pagemap could not be read
 */
gboolean
tide_capture_process_measure_py_arena_absent (TideCaptureProcess *self,
                                              gint64             *absent)
{
  g_autoptr(GArray) arenas = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
  g_autoptr(GArray) ranges = NULL;
  g_autofree TideBlockPlace *places = NULL;
  g_autofree guint64 *resident = NULL;
  const TideLiveAlloc *a;
  double sum = 0;

  if (self->pagemap == NULL)
    return FALSE;
  tide_live_table_foreach (self->live, collect_py_arena, arenas);
  a = (const TideLiveAlloc *) arenas->data;
  places = tide_live_allocs_places_by_addr (a, arenas->len);
  ranges = g_array_sized_new (FALSE, FALSE, sizeof (TideRange), arenas->len);
  for (guint i = 0; i < arenas->len; i++)
    {
      TideRange r = { places[i].addr, places[i].size };
      g_array_append_val (ranges, r);
    }
  resident = g_new0 (guint64, MAX (arenas->len, 1));
  if (!tide_pagemap_resident (self->pagemap, (const TideRange *) ranges->data, ranges->len,
                              resident))
    return FALSE;
  /* An arena with no page present is gone: pymalloc touches an arena as
   * it takes its first pool, and a process that is exiting unmaps its
   * arenas before the recorder hears of their frees. */
  for (guint i = 0; i < arenas->len; i++)
    if (resident[i] > 0)
      sum += (double) (places[i].size - MIN (resident[i], places[i].size)) *
             a[places[i].index].weight;
  *absent = (gint64) (sum + 0.5);
  return TRUE;
}
