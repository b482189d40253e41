/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-step-accumulator.h"

#include "tide-hash.h"
#include "tide-kinds.h"
#include "tide-saturate.h"

typedef struct
{
  TideSeriesKey key;
  double    live_bytes;
  double    live_count;
  gint64    written_bytes;
  gint64    written_count;
  gboolean  dirty;
} Series;

struct _TideStepAccumulator
{
  GHashTable *series;      /* TideSeriesKey* -> Series* */
  Series     *last;        /* of the last apply: runs of one stack are common */
  GPtrArray  *dirty;       /* Series* changed since the last step end */
  double      heap_live;
  double      mapped_live;
  double      device_live;
  double      py_arena_live;
  double      born_bytes;  /* born in the current step, still live */
  double      born_count;
};

guint
tide_series_key_hash (gconstpointer key)
{
  const TideSeriesKey *k = key;

  return (guint) tide_hash_ids ((guint64) k->stack_id, (guint64) k->scope_id, (guint) k->device);
}

gboolean
tide_series_key_equal (gconstpointer a,
                       gconstpointer b)
{
  const TideSeriesKey *x = a, *y = b;

  return x->stack_id == y->stack_id && x->scope_id == y->scope_id && x->device == y->device;
}

TideStepAccumulator *
tide_step_accumulator_new (void)
{
  TideStepAccumulator *self = g_new0 (TideStepAccumulator, 1);

  self->series = g_hash_table_new_full (tide_series_key_hash, tide_series_key_equal, NULL, g_free);
  self->dirty = g_ptr_array_new ();
  return self;
}

void
tide_step_accumulator_free (TideStepAccumulator *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->series);
  g_ptr_array_unref (self->dirty);
  g_free (self);
}

/* @bytes and @count are negative for a free; @born_in_step says whether the
 * block was allocated after the current step began. */
void
tide_step_accumulator_apply (TideStepAccumulator *self,
                             const TideSeriesKey *key,
                             gint                 kind,
                             double               bytes,
                             double               count,
                             gboolean             born_in_step)
{
  Series *s = self->last;

  /* An arena of CPython's allocator is plumbing: the objects in it are
   * counted by their own stacks, and it is counted as a class of its own,
   * never as a stack's bytes nor as what a step kept. */
  if (kind == TIDE_KIND_PYARENA)
    {
      self->py_arena_live += bytes;
      return;
    }
  if (s == NULL || !tide_series_key_equal (&s->key, key))
    s = g_hash_table_lookup (self->series, key);
  if (s == NULL)
    {
      s = g_new0 (Series, 1);
      s->key = *key;
      g_hash_table_insert (self->series, &s->key, s);
    }
  self->last = s;
  s->live_bytes += bytes;
  s->live_count += count;
  if (!s->dirty)
    {
      s->dirty = TRUE;
      g_ptr_array_add (self->dirty, s);
    }

  /* Pinned host memory is neither heap nor a mapping of the program's. */
  if (kind == TIDE_KIND_DEVICE)
    self->device_live += bytes;
  else if (tide_kind_is_mapped (kind))
    self->mapped_live += bytes;
  else if (tide_kind_is_heap (kind))
    self->heap_live += bytes;

  if (born_in_step)
    {
      self->born_bytes += bytes;
      self->born_count += count;
    }
}

static gint64
to_int (double value)
{
  return tide_sat_from_double (value);
}

/* Emits the series that changed since the last step end, and the totals. */
void
tide_step_accumulator_close_step (TideStepAccumulator *self,
                                  gint64               step_id,
                                  TideSeriesFunc       func,
                                  gpointer             user_data,
                                  TideStepTotals      *totals)
{
  for (guint i = 0; i < self->dirty->len; i++)
    {
      Series *s = g_ptr_array_index (self->dirty, i);
      TideSeriesRow row = { step_id, s->key.stack_id, s->key.scope_id, s->key.device,
                            to_int (s->live_bytes), to_int (s->live_count) };

      s->dirty = FALSE;
      if (row.live_bytes == s->written_bytes && row.live_count == s->written_count)
        continue;
      s->written_bytes = row.live_bytes;
      s->written_count = row.live_count;
      func (&row, user_data);
    }
  g_ptr_array_set_size (self->dirty, 0);

  *totals = (TideStepTotals) {
    .step_id = step_id,
    .heap_live = to_int (self->heap_live),
    .mapped_live = to_int (self->mapped_live),
    .device_live = to_int (self->device_live),
    .retained_bytes = to_int (self->born_bytes),
    .retained_count = to_int (self->born_count),
  };
  self->born_bytes = 0;
  self->born_count = 0;
}

double
tide_step_accumulator_get_heap_live (TideStepAccumulator *self)
{
  return self->heap_live;
}

double
tide_step_accumulator_get_mapped_live (TideStepAccumulator *self)
{
  return self->mapped_live;
}

double
tide_step_accumulator_get_py_arena_live (TideStepAccumulator *self)
{
  return self->py_arena_live;
}
