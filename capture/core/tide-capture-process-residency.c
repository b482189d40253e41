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

/* A (stack, scope) group: its resident bytes at the step end being
 * measured, as last written, and the last step end that found any of its
 * blocks live.  The groups live as long as their blocks, from step end to
 * step end: most of them are the same ones each time.  @mark is what the
 * live table's blocks that lay whole on present pages hold of it. */
typedef struct
{
  gint64  stack_id;
  gint64  scope_id;
  double  resident;
  double  resident_born;
  gint64  written;
  gint64  step_id;
  guint32 mark;
} ResidencyGroup;

/* The blocks of one step end: those whole at the last one add their size
 * to their groups as they are met; the others are kept to be read. */
typedef struct
{
  TideCaptureProcess *self;
  gint64              step_id;
  gint64              start_ns;
  gint64              end_ns;
  gboolean            use_whole;
  GArray             *blocks;   /* TideLiveAlloc copies, to read */
  GPtrArray          *entries;  /* the live table's block of each, or NULL (the driver's) */
} Collect;

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

/* Whether a block of @kind keeps its pages while it lives, unless they go
 * to swap: an allocator's blocks.  A program may discard pages of its own
 * mappings (madvise), and the kernel drops clean pages of a file's. */
static gboolean
kind_keeps_pages (guint8 kind)
{
  return tide_kind_is_heap (kind);
}

/* Only blocks that were live at the step end, in host memory, and none of
 * CPython's arenas, whose objects count their own pages. */
static gboolean
measured_at (const TideLiveAlloc *alloc,
             gint64               free_ns,
             gint64               end_ns)
{
  return alloc->device < 0 && alloc->kind != TIDE_KIND_PYARENA && alloc->alloc_ns <= end_ns &&
         (free_ns == 0 || free_ns > end_ns);
}

static ResidencyGroup *
find_or_add_group (TideCaptureProcess  *self,
                   const TideLiveAlloc *block)
{
  ResidencyGroup probe = { .stack_id = block->stack_id, .scope_id = block->scope_id };
  ResidencyGroup *g = g_hash_table_lookup (self->residency_groups, &probe);

  if (g != NULL)
    return g;
  g = g_memdup2 (&probe, sizeof probe);
  if (self->residency_free_marks->len > 0)
    {
      g->mark = g_array_index (self->residency_free_marks, guint32,
                               self->residency_free_marks->len - 1);
      g_array_set_size (self->residency_free_marks, self->residency_free_marks->len - 1);
      g_ptr_array_index (self->residency_marks, g->mark - 1) = g;
    }
  else
    {
      g_ptr_array_add (self->residency_marks, g);
      g->mark = self->residency_marks->len;
    }
  g_hash_table_add (self->residency_groups, g);
  return g;
}

/* A group none of whose blocks is live: its mark may go to another.  A
 * block that still holds it is one that a newer block at its address
 * ended, which no later step end measures. */
static void
remove_group (TideCaptureProcess *self,
              ResidencyGroup     *g)
{
  g_ptr_array_index (self->residency_marks, g->mark - 1) = NULL;
  g_array_append_val (self->residency_free_marks, g->mark);
}

/* Adds a block's resident bytes to its group @g at step @step_id. */
static void
add_to_group (ResidencyGroup      *g,
              gint64               step_id,
              gint64               step_start_ns,
              const TideLiveAlloc *block,
              guint64              resident)
{
  if (g->step_id != step_id)
    {
      g->step_id = step_id;
      g->resident = g->resident_born = 0;
    }
  g->resident += resident * block->weight;
  if (block->alloc_ns > step_start_ns)
    g->resident_born += resident * block->weight;
}

/* A block of the live table: one that lay whole on present pages at the
 * last step end measured (it holds its group's mark) still does, where
 * none of the process's pages went to swap since; an anonymous page that
 * is present leaves RAM only for swap.  On a machine without swap that is
 * every step end: a few thousand blocks a step end, nearly all of them
 * whole, cost the recorder more than the rest of the step end together,
 * and a job with a million live blocks is not read again each step. */
static void
collect_table_block (TideLiveAlloc *alloc,
                     gint64         free_ns,
                     gpointer       user_data)
{
  Collect *c = user_data;

  if (!measured_at (alloc, free_ns, c->end_ns))
    return;
  if (alloc->residency_group != 0 && c->use_whole)
    {
      ResidencyGroup *g = g_ptr_array_index (c->self->residency_marks, alloc->residency_group - 1);

      add_to_group (g, c->step_id, c->start_ns, alloc, alloc->size);
      return;
    }
  alloc->residency_group = 0;
  g_array_append_val (c->blocks, *alloc);
  g_ptr_array_add (c->entries, alloc);
}

/* A block of the driver's own (attach's sampled pages): read each time. */
static void
collect_driver_block (const TideLiveAlloc *alloc,
                      gint64               free_ns,
                      gpointer             user_data)
{
  Collect *c = user_data;

  if (!measured_at (alloc, free_ns, c->end_ns))
    return;
  g_array_append_val (c->blocks, *alloc);
  g_ptr_array_add (c->entries, NULL);
}

static void
unmark_block (TideLiveAlloc *alloc,
              gint64         free_ns,
              gpointer       user_data)
{
  alloc->residency_group = 0;
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
      {
        remove_group (self, g);
        g_hash_table_iter_remove (&iter);
      }
  tide_trace_writer_add_residency_total (self->recording->writer, step_id, total, total_born);
}

/* The resident bytes of each block (in @blocks' order) from pagemap;
 * FALSE where pagemap could not be read. */
static gboolean
read_resident (TideCaptureProcess   *self,
               const TideBlockPlace *places,
               guint                 n,
               guint64              *resident)
{
  g_autoptr(GArray) ranges = g_array_sized_new (FALSE, FALSE, sizeof (TideRange), n);
  g_autofree guint64 *read = g_new0 (guint64, MAX (n, 1));

  for (guint i = 0; i < n; i++)
    {
      TideRange r = { places[i].addr, places[i].size };
      g_array_append_val (ranges, r);
    }
  /* A process that exited right after its last step has no pages left to
   * read: say nothing rather than "nothing was resident". */
  if (!tide_pagemap_resident (self->pagemap, (const TideRange *) ranges->data, n, read))
    return FALSE;
  for (guint i = 0; i < n; i++)
    resident[places[i].index] = read[i];
  return TRUE;
}

/* The blocks read adds to their groups; those that lie whole on present
 * pages now take their group's mark. */
static void
add_read_blocks (Collect       *c,
                 const guint64 *resident)
{
  const TideLiveAlloc *blocks = (const TideLiveAlloc *) c->blocks->data;

  for (guint i = 0; i < c->blocks->len; i++)
    {
      TideLiveAlloc *entry = g_ptr_array_index (c->entries, i);
      ResidencyGroup *g = find_or_add_group (c->self, &blocks[i]);

      add_to_group (g, c->step_id, c->start_ns, &blocks[i], resident[i]);
      if (entry != NULL && kind_keeps_pages (entry->kind) && resident[i] == entry->size)
        entry->residency_group = g->mark;
    }
}

static void
ensure_groups (TideCaptureProcess *self)
{
  if (self->residency_groups != NULL)
    return;
  self->residency_groups = g_hash_table_new_full (residency_hash, residency_equal, g_free, NULL);
  self->residency_marks = g_ptr_array_new ();
  self->residency_free_marks = g_array_new (FALSE, FALSE, sizeof (guint32));
}

void
tide_capture_process_measure_residency (TideCaptureProcess *self,
                                        gint64              step_id,
                                        gint64              step_start_ns,
                                        gint64              step_end_ns)
{
  g_autoptr(GArray) blocks = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree TideBlockPlace *places = NULL;
  g_autofree guint64 *resident = NULL;
  Collect c = {
    .self = self, .step_id = step_id, .start_ns = step_start_ns, .end_ns = step_end_ns,
    .use_whole = self->unswapped_ns >= step_end_ns,
  };

  if (self->pagemap == NULL)
    return;

  ensure_groups (self);
  blocks = c.blocks = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
  entries = c.entries = g_ptr_array_new ();
  tide_live_table_foreach_to_mark (self->live, collect_table_block, &c);
  if (self->more_blocks != NULL)
    self->more_blocks (collect_driver_block, &c, self->more_blocks_data);
  places = tide_live_allocs_places_by_addr ((const TideLiveAlloc *) blocks->data, blocks->len);
  resident = g_new0 (guint64, MAX (blocks->len, 1));
  if (!read_resident (self, places, blocks->len, resident))
    {
      /* The groups' sums of this step end are not written: the next
       * measured step end starts them again, and reads every block. */
      tide_live_table_foreach_to_mark (self->live, unmark_block, NULL);
      return;
    }
  /* Each group holds a block seen now, and stays to the next step end. */
  add_read_blocks (&c, resident);
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
