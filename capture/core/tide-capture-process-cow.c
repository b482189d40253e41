/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Copy-on-write in a fork's child.  The child notes its inherited pages
 * while it waits in its first HELLO (TIDE_HELLO_FORKED); every snapshot of
 * the job's classes then counts those that it alone maps now
 * (TIDE_COUNTER_COW_BYTES) and, when that grew by an eighth (and at least
 * COW_ATTRIBUTE_BYTES) since it was last done, credits the copied pages to
 * the parent's recorded blocks that cover them (cow_sources): that walks
 * all of the parent's live blocks, so it is done a number of times that
 * grows with the logarithm of the copied bytes, not with the snapshots.
 * A page goes to the smallest block that covers any of it, so an
 * allocator's mapping gets only the pages that none of the blocks carved
 * from it covers; CPython's arenas pass theirs on to the objects sampled
 * in them (credit_arena()).
 */
#include "config.h"

#include <unistd.h>

#include "tide-cow.h"
#include "tide-capture-process-private.h"
#include "tide-recording-private.h"
#include "tide-schema.h"
#include "tide-wire.h"

#define COW_ATTRIBUTE_BYTES  (G_GUINT64_CONSTANT (1) << 20)
/* The report names the largest that is the program's, not the
 * profiler's start-up (whose code objects a worker's calls into its hooks
 * write): a few more than it names. */
#define COW_SOURCES_KEPT     16

typedef struct
{
  gint64  stack_id;
  guint64 bytes;
} Source;

void
tide_capture_process_start_cow (TideCaptureProcess *self,
                                TideCaptureProcess *parent)
{
  g_autoptr(GError) error = NULL;

  self->cow = tide_cow_open (self->pid, parent->pid, &error);
  if (self->cow == NULL)
    {
      self->classes_missed++;
      return;
    }
  self->fork_parent = parent;
  self->last_cow = -1;
  self->last_cow_left = -1;
}

static void
collect_host_block (const TideLiveAlloc *alloc,
                    gint64               free_ns,
                    gpointer             user_data)
{
  if (alloc->device < 0 && free_ns == 0)
    g_array_append_val ((GArray *) user_data, *alloc);
}

static gint
compare_by_size (gconstpointer a,
                 gconstpointer b)
{
  const TideLiveAlloc *x = a, *y = b;

  return (x->size > y->size) - (x->size < y->size);
}

/* The first copied range that ends after @addr. */
static guint
first_range_after (const GArray *copied,
                   guint64       addr)
{
  guint lo = 0, hi = copied->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const TideRange *r = &g_array_index (copied, TideRange, mid);

      if (r->addr + r->size <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static void
credit_stack (GHashTable *by_stack,
              gint64      stack_id,
              guint64     bytes)
{
  gpointer key = GSIZE_TO_POINTER ((gsize) stack_id);
  guint64 *sum = g_hash_table_lookup (by_stack, key);

  if (sum == NULL)
    g_hash_table_insert (by_stack, key, sum = g_new0 (guint64, 1));
  *sum += bytes;
}

/* Claims the copied pages that @block touches and no smaller block
 * claimed, and returns their bytes; @first_page[i] is the index of range
 * i's first page in @claimed. */
static guint64
claim_pages (const TideLiveAlloc *block,
             const GArray        *copied,
             const guint64       *first_page,
             guint8              *claimed,
             guint64              page_size)
{
  guint64 start = block->addr & ~(page_size - 1);
  guint64 end = block->addr + block->size;
  guint64 credited = 0;

  for (guint i = first_range_after (copied, start); i < copied->len; i++)
    {
      const TideRange *r = &g_array_index (copied, TideRange, i);
      guint64 from = MAX (r->addr, start), to = MIN (r->addr + r->size, end);

      if (r->addr >= end)
        break;
      for (guint64 a = from & ~(page_size - 1); a < to; a += page_size)
        {
          guint64 bit = first_page[i] + (a - r->addr) / page_size;

          if (claimed[bit / 8] & (1u << (bit % 8)))
            continue;
          claimed[bit / 8] |= 1u << (bit % 8);
          credited += page_size;
        }
    }
  return credited;
}

/* An arena of CPython's allocator has no stack: its objects do, and only
 * the sampled ones are recorded, so most of its pages hold objects that
 * no recorded block covers.  Those pages go to the stacks of the objects
 * recorded in the arena, in proportion to the bytes each stands for (its
 * size times its sampling weight).  Where none was, they stay with the
 * copied bytes that no block covers. */
static void
credit_arena (const TideLiveAlloc *arena,
              guint64              bytes,
              const GArray        *objects,
              GHashTable          *by_stack)
{
  guint lo = 0, hi = objects->len;
  double total = 0;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;

      if (g_array_index (objects, TideLiveAlloc, mid).addr < arena->addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (guint i = lo; i < objects->len; i++)
    {
      const TideLiveAlloc *o = &g_array_index (objects, TideLiveAlloc, i);

      if (o->addr >= arena->addr + arena->size)
        break;
      total += o->size * o->weight;
    }
  if (total <= 0)
    return;
  for (guint i = lo; i < objects->len; i++)
    {
      const TideLiveAlloc *o = &g_array_index (objects, TideLiveAlloc, i);

      if (o->addr >= arena->addr + arena->size)
        break;
      credit_stack (by_stack, o->stack_id, (guint64) (bytes * (o->size * o->weight / total)));
    }
}

static gint
compare_sources (gconstpointer a,
                 gconstpointer b)
{
  const Source *x = a, *y = b;

  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static void
write_sources (TideCaptureProcess *self,
               gint64          ts_ns,
               GHashTable     *by_stack,
               guint64         copied_bytes)
{
  g_autoptr(GArray) sources = g_array_new (FALSE, FALSE, sizeof (Source));
  GHashTableIter iter;
  gpointer key, value;
  guint64 covered = 0;

  g_hash_table_iter_init (&iter, by_stack);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      Source s = { (gint64) GPOINTER_TO_SIZE (key), *(guint64 *) value };

      covered += s.bytes;
      g_array_append_val (sources, s);
    }
  g_array_sort (sources, compare_sources);
  for (guint i = 0; i < MIN (sources->len, COW_SOURCES_KEPT); i++)
    {
      const Source *s = &g_array_index (sources, Source, i);

      tide_trace_writer_add_cow_source (self->recording->writer, self->id, ts_ns,
                                        self->fork_parent->id, s->stack_id, (gint64) s->bytes);
    }
  if (copied_bytes > covered)
    tide_trace_writer_add_cow_source (self->recording->writer, self->id, ts_ns,
                                      self->fork_parent->id, 0,
                                      (gint64) (copied_bytes - covered));
}

static void
attribute (TideCaptureProcess *self,
           gint64          ts_ns,
           const GArray   *copied,
           guint64         copied_bytes)
{
  TideCaptureProcess *parent = self->fork_parent;
  guint64 page_size = sysconf (_SC_PAGESIZE);
  g_autoptr(GArray) blocks = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
  g_autoptr(GArray) objects = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
  g_autoptr(GHashTable) by_stack = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                          NULL, g_free);
  g_autofree guint64 *first_page = g_new (guint64, MAX (copied->len, 1));
  g_autofree guint8 *claimed = g_new0 (guint8, copied_bytes / page_size / 8 + 1);
  guint64 pages = 0;

  for (guint i = 0; i < copied->len; i++)
    {
      first_page[i] = pages;
      pages += g_array_index (copied, TideRange, i).size / page_size;
    }
  if (parent->live != NULL)
    tide_live_table_foreach (parent->live, collect_host_block, blocks);
  for (guint i = 0; i < blocks->len; i++)
    if (g_array_index (blocks, TideLiveAlloc, i).kind == TIDE_KIND_PYOBJECT)
      g_array_append_val (objects, g_array_index (blocks, TideLiveAlloc, i));
  tide_live_allocs_sort_by_addr (objects);
  g_array_sort (blocks, compare_by_size);
  for (guint i = 0; i < blocks->len; i++)
    {
      const TideLiveAlloc *block = &g_array_index (blocks, TideLiveAlloc, i);
      guint64 credited = claim_pages (block, copied, first_page, claimed, page_size);

      if (credited == 0)
        continue;
      if (block->kind == TIDE_KIND_PYARENA)
        credit_arena (block, credited, objects, by_stack);
      else
        credit_stack (by_stack, block->stack_id, credited);
    }
  write_sources (self, ts_ns, by_stack, copied_bytes);
}

/**
 * tide_capture_process_measure_cow:
 *
 * Writes the bytes this fork's child copied on write, if they changed,
 * and where they came from, if they grew enough since that was last said
 * (see the file comment).
 */
void
tide_capture_process_measure_cow (TideCaptureProcess *self,
                              gint64          ts_ns)
{
  g_autoptr(GArray) copied = NULL;
  guint64 bytes, own;
  gint64 left;

  if (self->cow == NULL || self->end_ns != 0 || self->read_at_exit)
    return;
  copied = g_array_new (FALSE, FALSE, sizeof (TideRange));
  if (!tide_cow_measure (self->cow, &bytes, &left, copied))
    {
      self->classes_missed++;
      return;
    }
  if ((gint64) bytes != self->last_cow)
    {
      self->last_cow = (gint64) bytes;
      tide_trace_writer_add_counter (self->recording->writer, self->id, TIDE_COUNTER_COW_BYTES,
                                     -1, ts_ns, (gint64) bytes);
    }
  if (left >= 0 && left != self->last_cow_left)
    {
      self->last_cow_left = left;
      tide_trace_writer_add_counter (self->recording->writer, self->id,
                                     TIDE_COUNTER_COW_LEFT_BYTES, -1, ts_ns, left);
    }
  /* The sources are those of the pages the child copied itself. */
  own = bytes - (guint64) MAX (left, 0);
  if (own >= self->cow_attributed + MAX (COW_ATTRIBUTE_BYTES, self->cow_attributed / 8))
    {
      attribute (self, ts_ns, copied, own);
      self->cow_attributed = own;
    }
}
