/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-preload-buffer.h"

#include "tide-preload-encode.h"
#include "tide-preload-objects.h"
#include "tide-preload-private.h"
#include "tide-preload-raw.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

struct _TideBuffer
{
  TideBuffer *_Atomic next;
  _Atomic int         in_use;
  pthread_mutex_t     lock;       /* len, first_ns, data */
  pthread_mutex_t     send_lock;  /* taken before lock; orders this buffer's sends */
  uint32_t            len;
  uint32_t            serial;     /* names what data holds: new at every emptying */
  uint64_t            first_ns;   /* time_ns of the oldest record in data */
  _Alignas (8) unsigned char data[TIDE_WIRE_MAX_MESSAGE];
};

static TideBuffer *_Atomic tide_buffers;
static _Atomic uint32_t tide_buffer_serials;
static pthread_key_t tide_buffer_key;
static bool tide_buffer_key_ok;
static unsigned char *tide_flusher_scratch;

/* Empties b under a serial that no buffer of this process had before, so
 * that an addrset entry which names a record of the old bytes (see
 * tide_buffer_append_tracked) matches no buffer any more. */
static void
empty_locked (TideBuffer *b)
{
  uint32_t serial;

  do
    serial = atomic_fetch_add_explicit (&tide_buffer_serials, 1, memory_order_relaxed) + 1;
  while (serial == 0);
  b->len = 0;
  b->serial = serial;
}

/* Sends and empties b; the caller holds both locks. */
static void
send_locked (TideBuffer *b)
{
  if (b->len > 0)
    {
      tide_conn_send (b->data, b->len);
      empty_locked (b);
    }
}

static void
flush_buffer (TideBuffer *b)
{
  pthread_mutex_lock (&b->send_lock);
  pthread_mutex_lock (&b->lock);
  send_locked (b);
  pthread_mutex_unlock (&b->lock);
  pthread_mutex_unlock (&b->send_lock);
}

static void
thread_exit_cb (void *value)
{
  int saved = errno;

  tide_tls.guard++;
  if (tide_tls.buf != NULL)
    {
      flush_buffer (tide_tls.buf);
      atomic_store (&tide_tls.buf->in_use, 0);
      tide_tls.buf = NULL;
    }
  tide_tls.exiting = true;
  tide_tls.guard--;
  errno = saved;
}

void
tide_buffer_init (void)
{
  if (!tide_buffer_key_ok)
    tide_buffer_key_ok = pthread_key_create (&tide_buffer_key, thread_exit_cb) == 0;
}

static TideBuffer *
take_buffer (void)
{
  TideBuffer *b, *head;

  for (b = atomic_load (&tide_buffers); b != NULL; b = atomic_load (&b->next))
    {
      int free_ = 0;

      if (atomic_compare_exchange_strong (&b->in_use, &free_, 1))
        return b;
    }
  b = tide_raw_mmap (sizeof *b);
  if (b == NULL)
    return NULL;
  pthread_mutex_init (&b->lock, NULL);
  pthread_mutex_init (&b->send_lock, NULL);
  atomic_store (&b->in_use, 1);
  head = atomic_load (&tide_buffers);
  do
    atomic_store (&b->next, head);
  while (!atomic_compare_exchange_weak (&tide_buffers, &head, b));
  return b;
}

/* This thread's buffer, made on first use, starting with a THREAD record.
 * NULL once the thread is exiting: its records are then sent one by one. */
static TideBuffer *
get_buffer (void)
{
  char name[17] = "";
  TideBuffer *b;

  if (TIDE_LIKELY (tide_tls.buf != NULL))
    return tide_tls.buf;
  if (tide_tls.exiting || !tide_buffer_key_ok)
    return NULL;
  b = take_buffer ();
  if (b == NULL)
    return NULL;
  pthread_mutex_lock (&b->lock);
  empty_locked (b);
  prctl (PR_GET_NAME, name, 0, 0, 0);
  b->len = tide_encode_text (b->data, sizeof b->data, tide_stamp (), TIDE_WIRE_THREAD, name);
  b->first_ns = tide_now_ns ();
  pthread_mutex_unlock (&b->lock);
  tide_tls.buf = b;
  pthread_setspecific (tide_buffer_key, b);
  return b;
}

/* This thread's buffer, or NULL when records go out one by one. */
static TideBuffer *
buffer_for_append (void)
{
  if (TIDE_UNLIKELY (atomic_load_explicit (&tide_state.final, memory_order_relaxed)))
    return NULL;
  return get_buffer ();
}

/* Takes b->lock with room for @len more bytes, sending what is there first
 * if need be. */
static void
lock_with_room (TideBuffer *b,
                uint32_t    len)
{
  pthread_mutex_lock (&b->lock);
  if (b->len + len > sizeof b->data)
    {
      pthread_mutex_unlock (&b->lock);
      flush_buffer (b);
      pthread_mutex_lock (&b->lock);
    }
}

/* Copies @rec in; the caller holds b->lock and made room. */
static void
put_locked (TideBuffer *b,
            const void *rec,
            uint32_t    len)
{
  if (b->len == 0)
    b->first_ns = ((const TideWireHeader *) rec)->time_ns;
  memcpy (b->data + b->len, rec, len);
  b->len += len;
}

void
tide_buffer_append (const void *rec,
                    uint32_t    len)
{
  TideBuffer *b;

  if (len == 0)
    return;
  b = buffer_for_append ();
  if (b == NULL)
    {
      tide_conn_send (rec, len);
      return;
    }
  lock_with_room (b, len);
  put_locked (b, rec, len);
  pthread_mutex_unlock (&b->lock);
}

/* The entry goes into the set under the buffer's lock, with the record's
 * place, so that no flush can come between the place and the record: the
 * entry names the bytes it will be in or, once they are sent, nothing. */
bool
tide_buffer_append_tracked (const void    *rec,
                            uint32_t       len,
                            TideAddrSet   *set,
                            TideAddrEntry *entry)
{
  TideBuffer *b = len > 0 ? buffer_for_append () : NULL;
  bool ok;

  if (b == NULL)
    {
      entry->record_serial = 0;
      if (!tide_addrset_insert_entry (set, entry))
        return false;
      if (len > 0)
        tide_conn_send (rec, len);
      return true;
    }
  lock_with_room (b, len);
  entry->record_serial = b->serial;
  entry->record_offset = b->len;
  ok = tide_addrset_insert_entry (set, entry);
  if (ok)
    put_locked (b, rec, len);
  pthread_mutex_unlock (&b->lock);
  return ok;
}

bool
tide_buffer_fold_free (const TideAddrEntry *entry,
                       uint64_t             addr,
                       uint16_t             kind,
                       uint64_t             free_ns)
{
  TideBuffer *b = tide_tls.buf;
  bool folded = false;

  if (entry->record_serial == 0 || b == NULL)
    return false;
  pthread_mutex_lock (&b->lock);
  if (b->serial == entry->record_serial && entry->record_offset < b->len &&
      b->len - entry->record_offset >= sizeof (TideWireAlloc))
    folded = tide_encode_fold_free (b->data + entry->record_offset, addr, kind, free_ns);
  pthread_mutex_unlock (&b->lock);
  return folded;
}

void
tide_buffer_flush_self (void)
{
  if (tide_tls.buf != NULL)
    flush_buffer (tide_tls.buf);
}

/* Before a STEP and at exit: everything buffered, on every thread. */
void
tide_buffer_flush_all (void)
{
  for (TideBuffer *b = atomic_load (&tide_buffers); b != NULL; b = atomic_load (&b->next))
    flush_buffer (b);
}

/* Copy out under `lock`, send without it: the owner keeps appending. */
static void
flush_if_old (TideBuffer *b,
              uint64_t    now)
{
  uint32_t n = 0;

  if (pthread_mutex_trylock (&b->send_lock) != 0)
    return;  /* its owner is sending it right now */
  pthread_mutex_lock (&b->lock);
  if (b->len > 0 && now - b->first_ns >= TIDE_FLUSH_AGE_NS)
    {
      n = b->len;
      memcpy (tide_flusher_scratch, b->data, n);
      empty_locked (b);
    }
  pthread_mutex_unlock (&b->lock);
  if (n > 0)
    tide_conn_send (tide_flusher_scratch, n);
  pthread_mutex_unlock (&b->send_lock);
}

static void *
flusher_main (void *data)
{
  tide_tls.guard = 1;  /* nothing this thread does is the program's */
  prctl (PR_SET_NAME, "tidemark-flush", 0, 0, 0);
  while (tide_active ())
    {
      uint64_t now, asked_ns;

      if (tide_conn_wait_tick (TIDE_FLUSH_TICK_NS, &asked_ns))
        tide_preload_send_allocator_free_as_of (asked_ns);
      tide_objects_poll ();
      now = tide_now_ns ();
      tide_preload_poll_allocator_free (now);
      for (TideBuffer *b = atomic_load (&tide_buffers); b != NULL; b = atomic_load (&b->next))
        flush_if_old (b, now);
      tide_send_dropped ();
    }
  return NULL;
}

void
tide_flusher_start (void)
{
  pthread_attr_t attr;
  pthread_t thread;

  if (tide_flusher_scratch == NULL)
    tide_flusher_scratch = tide_raw_mmap (TIDE_WIRE_MAX_MESSAGE);
  if (tide_flusher_scratch == NULL)
    return;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 256 * 1024);
  pthread_create (&thread, &attr, flusher_main, NULL);
  pthread_attr_destroy (&attr);
}

/* In the child of a fork: only the forking thread is left, and no lock is
 * held by anyone.  Every buffer's bytes belong to the parent. */
void
tide_buffer_fork_child (void)
{
  for (TideBuffer *b = atomic_load (&tide_buffers); b != NULL; b = atomic_load (&b->next))
    {
      pthread_mutex_init (&b->lock, NULL);
      pthread_mutex_init (&b->send_lock, NULL);
      empty_locked (b);
      atomic_store (&b->in_use, 0);
    }
  tide_tls.buf = NULL;  /* a new tid: the next record starts with THREAD */
}
