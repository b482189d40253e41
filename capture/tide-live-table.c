/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-live-table.h"

typedef struct _Entry Entry;
struct _Entry
{
  TideLiveAlloc alloc;
  Entry        *older;    /* same address, allocated earlier, free not seen yet */
};

typedef struct _Orphan Orphan;
struct _Orphan
{
  guint64  addr;
  gint64   free_ns;
  Orphan  *next;          /* same address */
  gboolean matched;
};

struct _TideLiveTable
{
  GHashTable *entries;    /* &addr -> newest Entry of that address */
  GHashTable *orphans;    /* &addr -> Orphan list */
  GQueue      arrivals;   /* Orphan*, oldest arrival first, for expiry */
  guint       size;
  guint       n_orphans;
};

static void
entry_chain_free (gpointer data)
{
  Entry *e = data;

  while (e != NULL)
    {
      Entry *older = e->older;
      g_free (e);
      e = older;
    }
}

TideLiveTable *
tide_live_table_new (void)
{
  TideLiveTable *self = g_new0 (TideLiveTable, 1);

  self->entries = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, entry_chain_free);
  self->orphans = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_queue_init (&self->arrivals);
  return self;
}

void
tide_live_table_free (TideLiveTable *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->entries);
  g_hash_table_unref (self->orphans);
  g_queue_clear_full (&self->arrivals, g_free);
  g_free (self);
}

/* Removes the earliest orphan free of @addr at or after @alloc_ns. */
static gboolean
take_orphan (TideLiveTable *self,
             guint64        addr,
             gint64         alloc_ns,
             gint64        *free_ns)
{
  Orphan *head = g_hash_table_lookup (self->orphans, &addr);
  Orphan *best = NULL, *best_prev = NULL, *prev = NULL;

  for (Orphan *o = head; o != NULL; prev = o, o = o->next)
    if (o->free_ns >= alloc_ns && (best == NULL || o->free_ns < best->free_ns))
      {
        best = o;
        best_prev = prev;
      }
  if (best == NULL)
    return FALSE;

  if (best_prev != NULL)
    best_prev->next = best->next;
  else if (best->next != NULL)
    g_hash_table_replace (self->orphans, &best->next->addr, best->next);
  else
    g_hash_table_remove (self->orphans, &addr);
  best->matched = TRUE;
  best->next = NULL;
  self->n_orphans--;
  *free_ns = best->free_ns;
  return TRUE;
}

gboolean
tide_live_table_alloc (TideLiveTable       *self,
                       const TideLiveAlloc *alloc,
                       gint64              *matched_free_ns)
{
  Entry *e, *head;

  if (take_orphan (self, alloc->addr, alloc->alloc_ns, matched_free_ns))
    return TRUE;

  e = g_new (Entry, 1);
  e->alloc = *alloc;
  e->older = NULL;
  head = g_hash_table_lookup (self->entries, &alloc->addr);

  if (head == NULL || head->alloc.alloc_ns <= alloc->alloc_ns)
    {
      e->older = head;
      if (head != NULL)
        g_hash_table_steal (self->entries, &alloc->addr);
      g_hash_table_insert (self->entries, &e->alloc.addr, e);
    }
  else
    {
      /* Arrived late: keep the chain newest first. */
      Entry *at = head;

      while (at->older != NULL && at->older->alloc.alloc_ns > alloc->alloc_ns)
        at = at->older;
      e->older = at->older;
      at->older = e;
    }
  self->size++;
  return FALSE;
}

gboolean
tide_live_table_release (TideLiveTable *self,
                         guint64        addr,
                         gint64         free_ns,
                         TideLiveAlloc *out)
{
  Entry *head = g_hash_table_lookup (self->entries, &addr);
  Entry *prev = NULL;
  Orphan *orphan;

  for (Entry *e = head; e != NULL; prev = e, e = e->older)
    {
      if (e->alloc.alloc_ns > free_ns)
        continue;
      *out = e->alloc;
      if (prev != NULL)
        {
          prev->older = e->older;
          g_free (e);
        }
      else
        {
          g_hash_table_steal (self->entries, &addr);
          if (e->older != NULL)
            g_hash_table_insert (self->entries, &e->older->alloc.addr, e->older);
          g_free (e);
        }
      self->size--;
      return TRUE;
    }

  orphan = g_new0 (Orphan, 1);
  orphan->addr = addr;
  orphan->free_ns = free_ns;
  orphan->next = g_hash_table_lookup (self->orphans, &addr);
  if (orphan->next != NULL)
    g_hash_table_steal (self->orphans, &addr);
  g_hash_table_insert (self->orphans, &orphan->addr, orphan);
  g_queue_push_tail (&self->arrivals, orphan);
  self->n_orphans++;
  return FALSE;
}

/* Forgets orphan frees older than @before_ns: their allocation was never
 * recorded (made before the profiler connected, or not sampled). */
void
tide_live_table_expire_orphans (TideLiveTable *self,
                                gint64         before_ns)
{
  Orphan *o;

  while ((o = g_queue_peek_head (&self->arrivals)) != NULL &&
         (o->matched || o->free_ns < before_ns))
    {
      g_queue_pop_head (&self->arrivals);
      if (!o->matched)
        {
          Orphan *head = g_hash_table_lookup (self->orphans, &o->addr);
          Orphan *prev = NULL;

          for (Orphan *it = head; it != NULL && it != o; it = it->next)
            prev = it;
          if (prev != NULL)
            prev->next = o->next;
          else if (o->next != NULL)
            g_hash_table_replace (self->orphans, &o->next->addr, o->next);
          else
            g_hash_table_remove (self->orphans, &o->addr);
          self->n_orphans--;
        }
      g_free (o);
    }
}

void
tide_live_table_foreach (TideLiveTable *self,
                         TideLiveFunc   func,
                         gpointer       user_data)
{
  GHashTableIter iter;
  Entry *head;

  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &head))
    {
      gint64 newer_alloc_ns = 0;

      for (Entry *e = head; e != NULL; e = e->older)
        {
          func (&e->alloc, newer_alloc_ns, user_data);
          newer_alloc_ns = e->alloc.alloc_ns;
        }
    }
}

guint
tide_live_table_get_size (TideLiveTable *self)
{
  return self->size;
}

guint
tide_live_table_get_n_orphans (TideLiveTable *self)
{
  return self->n_orphans;
}
