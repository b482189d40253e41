/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-scope.c: tidemark_preload_step and the scope stacks.
 *
 * Each thread keeps a stack of scope ids.  A scope is a node (parent id,
 * name) of a per-process tree, interned once under a mutex (a rare path:
 * a push is a lookup) and announced with SCOPE_DEF before any record uses
 * it.  The SCOPE_DEF is sent after the mutex is released, so a second thread
 * that pushes the same scope at the same moment may buffer an ALLOC naming it
 * before the first thread's SCOPE_DEF reaches the socket; its time_ns is still
 * earlier, and the recorder orders by time_ns.
 */
#include "config.h"

#include "tide-preload-private.h"

#include "tide-preload-buffer.h"
#include "tide-preload-encode.h"
#include "tide-preload-raw.h"

#include "tidemark.h"  /* built with -DTIDEMARK_PRELOAD_IMPLEMENTATION */

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define TIDE_SCOPE_BUCKETS 4096u
#define TIDE_SCOPE_SLAB    (1u << 20)

typedef struct _TideScope TideScope;

struct _TideScope
{
  TideScope *next;       /* in its bucket */
  TideScope *next_made;  /* in order of creation */
  uint32_t   id;
  uint32_t   parent_id;
  uint32_t   hash;
  char       name[];
};

static pthread_mutex_t tide_scope_lock = PTHREAD_MUTEX_INITIALIZER;
static TideScope *tide_scope_buckets[TIDE_SCOPE_BUCKETS];
static TideScope *tide_scope_first;
static TideScope **tide_scope_tail = &tide_scope_first;
static uint32_t tide_scope_next_id = 1;
static unsigned char *tide_scope_slab;
static size_t tide_scope_slab_left;
static _Atomic uint64_t tide_scope_overflows;

static uint32_t
scope_hash (uint32_t    parent_id,
            const char *name)
{
  uint32_t h = 2166136261u ^ parent_id;

  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h;
}

static TideScope *
scope_new (size_t name_len)
{
  size_t need = (sizeof (TideScope) + name_len + 1 + 7) & ~(size_t) 7;
  TideScope *s;

  if (need > tide_scope_slab_left)
    {
      tide_scope_slab = tide_raw_mmap (TIDE_SCOPE_SLAB);
      tide_scope_slab_left = tide_scope_slab != NULL ? TIDE_SCOPE_SLAB : 0;
      if (need > tide_scope_slab_left)
        return NULL;
    }
  s = (TideScope *) tide_scope_slab;
  tide_scope_slab += need;
  tide_scope_slab_left -= need;
  return s;
}

static uint32_t
scope_def (const TideScope *s,
           void            *rec,
           uint32_t         cap)
{
  return tide_encode_scope_def (rec, cap, tide_stamp (), s->id, s->parent_id, s->name);
}

/* The id of (parent_id, name), made and announced on first sight. */
static uint32_t
scope_intern (uint32_t    parent_id,
              const char *name)
{
  _Alignas (8) unsigned char rec[TIDE_ENCODE_STRING_MAX];
  size_t len = strnlen (name, TIDE_WIRE_MAX_STRING - 1);
  uint32_t h = scope_hash (parent_id, name);
  uint32_t rec_len = 0, id = 0;
  TideScope *s;

  pthread_mutex_lock (&tide_scope_lock);
  for (s = tide_scope_buckets[h % TIDE_SCOPE_BUCKETS]; s != NULL; s = s->next)
    if (s->hash == h && s->parent_id == parent_id
        && strncmp (s->name, name, len) == 0 && s->name[len] == '\0')
      break;
  if (s == NULL && (s = scope_new (len)) != NULL)
    {
      s->id = tide_scope_next_id++;
      s->parent_id = parent_id;
      s->hash = h;
      memcpy (s->name, name, len);
      s->name[len] = '\0';
      s->next = tide_scope_buckets[h % TIDE_SCOPE_BUCKETS];
      s->next_made = NULL;
      tide_scope_buckets[h % TIDE_SCOPE_BUCKETS] = s;
      *tide_scope_tail = s;
      tide_scope_tail = &s->next_made;
      rec_len = scope_def (s, rec, sizeof rec);
    }
  if (s != NULL)
    id = s->id;
  pthread_mutex_unlock (&tide_scope_lock);
  if (rec_len > 0)
    tide_send_direct (rec, rec_len);
  return id;
}

uint32_t
tide_scope_current (void)
{
  uint32_t depth = tide_tls.scope_depth;

  if (depth == 0)
    return 0;
  if (depth > TIDE_SCOPE_MAX_DEPTH)
    depth = TIDE_SCOPE_MAX_DEPTH;
  return tide_tls.scopes[depth - 1];
}

TIDE_EXPORT void
tidemark_preload_scope_push (const char *name)
{
  uint32_t depth = tide_tls.scope_depth;
  int saved;

  if (!tide_active ())
    return;
  if (depth >= TIDE_SCOPE_MAX_DEPTH)
    {
      /* Counted so that the matching pop still balances. */
      tide_tls.scope_depth++;
      atomic_fetch_add (&tide_scope_overflows, 1);
      return;
    }
  saved = errno;
  tide_tls.guard++;
  tide_tls.scopes[depth] = scope_intern (tide_scope_current (), name != NULL ? name : "");
  tide_tls.scope_depth = depth + 1;
  tide_tls.guard--;
  errno = saved;
}

TIDE_EXPORT void
tidemark_preload_scope_pop (void)
{
  if (tide_tls.scope_depth > 0)
    tide_tls.scope_depth--;
}

/* The recorder sees every allocation made before the step, on any thread,
 * before the STEP itself. */
TIDE_EXPORT void
tidemark_preload_step (const char *label)
{
  _Alignas (8) unsigned char rec[TIDE_ENCODE_STRING_MAX];
  uint32_t len;
  int saved;
  int patience_ms;

  if (!tide_active ())
    return;
  tide_preload_send_allocator_free_at_step ();
  saved = errno;
  tide_tls.guard++;
  /* Last before the mark: the step fence compares the recorder's reading
   * with it. */
  tide_preload_send_resident ();
  tide_buffer_flush_all ();
  /* Taken before the mark goes, which says how long it waits: a request
   * that answers this mark asks for the next one. */
  patience_ms = atomic_exchange (&tide_state.step_wait_ms, 0);
  if (tide_state.sync_steps)
    patience_ms = TIDE_EXIT_BARRIER_MS;
  len = tide_encode_step (rec, sizeof rec, tide_stamp (), (uint32_t) patience_ms,
                          label != NULL ? label : "");
  if (tide_conn_send (rec, len))
    {
      if (tide_state.sync_steps)
        tide_wait_for_recorder (TIDE_BARRIER_STEP);
      else if (patience_ms > 0)
        tide_wait_for_step_reading (patience_ms);
    }
  tide_tls.guard--;
  errno = saved;
}

/* The documented names (README, "Steps and scopes from other languages"),
 * for callers that look the library up by name rather than through
 * tidemark.h: dlsym, Python's ctypes, other languages' FFIs.  Aliases, so
 * each is the same code as its tidemark_preload_* name, with no call in
 * between; tidemark.h keeps looking up the tidemark_preload_* names, which
 * every version of the library has. */
TIDE_EXPORT void tidemark_step (const char *label)
  __attribute__ ((alias ("tidemark_preload_step")));
TIDE_EXPORT void tidemark_scope_push (const char *name)
  __attribute__ ((alias ("tidemark_preload_scope_push")));
TIDE_EXPORT void tidemark_scope_pop (void)
  __attribute__ ((alias ("tidemark_preload_scope_pop")));

/* On a new connection: every scope again, parents before children. */
void
tide_scope_resend_all (void)
{
  _Alignas (8) unsigned char rec[TIDE_ENCODE_STRING_MAX];

  pthread_mutex_lock (&tide_scope_lock);
  for (TideScope *s = tide_scope_first; s != NULL; s = s->next_made)
    tide_send_direct (rec, scope_def (s, rec, sizeof rec));
  pthread_mutex_unlock (&tide_scope_lock);
}

void
tide_scope_fork_prepare (void)
{
  pthread_mutex_lock (&tide_scope_lock);
}

void
tide_scope_fork_parent (void)
{
  pthread_mutex_unlock (&tide_scope_lock);
}

void
tide_scope_fork_child (void)
{
  pthread_mutex_init (&tide_scope_lock, NULL);
}
