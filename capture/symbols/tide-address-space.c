/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-address-space.c: a GArray of non-overlapping entries sorted by start;
 * resolve is a binary search, add and remove are O(n) memmoves, which is
 * fine because mappings change far less often than pcs are resolved.
 */
#include "config.h"

#include "tide-address-space.h"

typedef struct
{
  guint64     start;
  guint64     end;
  guint64     load_bias;
  const char *path;  /* g_intern_string */
} TideMapping;

struct _TideAddressSpace
{
  GArray                *entries;  /* TideMapping, sorted by start, disjoint */
  guint64                generation;  /* bumped whenever entries change */
  TideAddressMissFunc    miss_func;
  gpointer               miss_data;
};

TideAddressSpace *
tide_address_space_new (void)
{
  TideAddressSpace *self = g_new0 (TideAddressSpace, 1);

  self->entries = g_array_new (FALSE, FALSE, sizeof (TideMapping));
  return self;
}

void
tide_address_space_free (TideAddressSpace *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->entries);
  g_free (self);
}

guint
tide_address_space_get_n_entries (TideAddressSpace *self)
{
  return self->entries->len;
}

void
tide_address_space_foreach (TideAddressSpace *self,
                            TideAddressFunc   func,
                            gpointer          user_data)
{
  for (guint i = 0; i < self->entries->len; i++)
    {
      const TideMapping *m = &g_array_index (self->entries, TideMapping, i);

      func (m->start, m->end, m->load_bias, m->path, user_data);
    }
}

/* Index of the first entry whose end is above @addr (entries.len if none). */
static guint
tide_address_space_first_ending_after (TideAddressSpace *self,
                                       guint64           addr)
{
  guint lo = 0;
  guint hi = self->entries->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;

      if (g_array_index (self->entries, TideMapping, mid).end <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

void
tide_address_space_remove (TideAddressSpace *self,
                           guint64           start,
                           guint64           end)
{
  guint i;

  g_return_if_fail (self != NULL);
  if (start >= end)
    return;

  i = tide_address_space_first_ending_after (self, start);
  while (i < self->entries->len)
    {
      TideMapping *m = &g_array_index (self->entries, TideMapping, i);
      TideMapping tail;

      if (m->start >= end)
        break;

      if (m->start < start && m->end > end)
        {
          /* The hole is strictly inside: split into head and tail. */
          tail = *m;
          tail.start = end;
          m->end = start;
          g_array_insert_val (self->entries, i + 1, tail);
          self->generation++;
          break;
        }
      if (m->start >= start && m->end <= end)
        {
          g_array_remove_index (self->entries, i);
          self->generation++;
          continue;
        }
      /* Overlaps one edge only: trim that edge. */
      if (m->start < start)
        m->end = start;
      else
        m->start = end;
      self->generation++;
      i++;
    }
}

void
tide_address_space_add (TideAddressSpace *self,
                        guint64           start,
                        guint64           end,
                        guint64           load_bias,
                        const char       *path)
{
  TideMapping m;

  g_return_if_fail (self != NULL);
  g_return_if_fail (path != NULL);
  if (start >= end)
    return;

  tide_address_space_remove (self, start, end);

  m.start = start;
  m.end = end;
  m.load_bias = load_bias;
  /* Interned process-wide: the same file has the same pointer in every
   * address space, so frames can be keyed by it. */
  m.path = g_intern_string (path);
  g_array_insert_val (self->entries,
                      tide_address_space_first_ending_after (self, start), m);
  self->generation++;
}

guint64
tide_address_space_get_generation (TideAddressSpace *self)
{
  return self->generation;
}

void
tide_address_space_set_miss_func (TideAddressSpace    *self,
                                  TideAddressMissFunc  func,
                                  gpointer             user_data)
{
  self->miss_func = func;
  self->miss_data = user_data;
}

static const TideMapping *
tide_address_space_lookup (TideAddressSpace *self,
                           guint64           pc)
{
  guint i = tide_address_space_first_ending_after (self, pc);
  const TideMapping *m;

  if (i == self->entries->len)
    return NULL;
  m = &g_array_index (self->entries, TideMapping, i);
  return pc < m->start ? NULL : m;
}

gboolean
tide_address_space_resolve (TideAddressSpace *self,
                            guint64           pc,
                            const char      **path,
                            guint64          *load_bias)
{
  const TideMapping *m;

  g_return_val_if_fail (self != NULL, FALSE);

  m = tide_address_space_lookup (self, pc);
  if (m == NULL && self->miss_func != NULL && self->miss_func (self, pc, self->miss_data))
    m = tide_address_space_lookup (self, pc);
  if (m == NULL)
    return FALSE;

  if (path != NULL)
    *path = m->path;
  if (load_bias != NULL)
    *load_bias = m->load_bias;
  return TRUE;
}
