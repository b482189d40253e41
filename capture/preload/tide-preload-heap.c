/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-preload-heap.h"

#include "tide-preload-raw.h"

#include <pthread.h>
#include <string.h>

#define HEADER_SIZE  16u
#define MIN_SHIFT    5u    /* class 0: 32-byte blocks */
#define N_CLASSES    22u   /* up to 64 MiB blocks */

/* Just before every pointer handed out. */
typedef struct
{
  uint32_t klass;
  uint32_t offset;  /* from the start of the block to the pointer */
  uint64_t size;    /* what was asked for */
} Header;

_Static_assert (sizeof (Header) == HEADER_SIZE, "one header, 16 bytes");

typedef struct _FreeBlock FreeBlock;
struct _FreeBlock
{
  FreeBlock *next;
};

_Atomic uintptr_t tide_heap_base;
_Atomic uintptr_t tide_heap_span;

/* Recursive: fork_prepare() holds it across fork(), and an atfork handler
 * of another library that runs after ours may allocate on the same thread
 * while the guard is still up. */
static pthread_mutex_t heap_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uintptr_t heap_bump;          /* next unused byte */
static bool heap_reserve_failed;
static FreeBlock *free_lists[N_CLASSES];

static size_t
class_size (uint32_t klass)
{
  return (size_t) 1 << (klass + MIN_SHIFT);
}

/* The smallest class whose blocks hold `need` bytes, or N_CLASSES. */
static uint32_t
class_for (size_t need)
{
  uint32_t klass = 0;

  while (klass < N_CLASSES && class_size (klass) < need)
    klass++;
  return klass;
}

/* TIDE_HEAP_RESERVE of address space, or less under a tight RLIMIT_AS:
 * dlsym must find some memory here at start-up, before the real malloc is
 * known. */
static bool
reserve_locked (void)
{
  size_t want = TIDE_HEAP_RESERVE;
  void *region = NULL;

  if (atomic_load_explicit (&tide_heap_span, memory_order_relaxed) != 0)
    return true;
  if (heap_reserve_failed)
    return false;
  while (region == NULL && want >= ((size_t) 1 << 20))
    {
      region = tide_raw_mmap (want);
      if (region == NULL)
        want /= 16;
    }
  if (region == NULL)
    {
      heap_reserve_failed = true;
      return false;
    }
  heap_bump = (uintptr_t) region;
  atomic_store_explicit (&tide_heap_base, (uintptr_t) region, memory_order_relaxed);
  atomic_store_explicit (&tide_heap_span, want, memory_order_release);
  return true;
}

/* A block of the class, from its free list or the bump pointer; NULL when
 * the reservation is spent.  Bump memory has never been touched: zero. */
static void *
take_block_locked (uint32_t  klass,
                   bool     *recycled)
{
  uintptr_t end = atomic_load_explicit (&tide_heap_base, memory_order_relaxed)
                  + atomic_load_explicit (&tide_heap_span, memory_order_relaxed);
  FreeBlock *b = free_lists[klass];

  if (b != NULL)
    {
      free_lists[klass] = b->next;
      *recycled = true;
      return b;
    }
  if (end - heap_bump < class_size (klass))
    return NULL;
  b = (FreeBlock *) heap_bump;
  heap_bump += class_size (klass);
  *recycled = false;
  return b;
}

void *
tide_heap_alloc (size_t size,
                 size_t align,
                 bool   zero)
{
  size_t slack = align > HEADER_SIZE ? align - HEADER_SIZE : 0;
  uint32_t klass;
  bool recycled = false;
  unsigned char *block = NULL;
  uintptr_t user;
  Header *h;

  if (align < HEADER_SIZE)
    align = HEADER_SIZE;
  if ((align & (align - 1)) != 0 || size > class_size (N_CLASSES - 1)
      || align > class_size (N_CLASSES - 1))
    return NULL;
  klass = class_for (size + HEADER_SIZE + slack);
  if (klass == N_CLASSES)
    return NULL;

  pthread_mutex_lock (&heap_lock);
  if (reserve_locked ())
    block = take_block_locked (klass, &recycled);
  pthread_mutex_unlock (&heap_lock);
  if (block == NULL)
    return NULL;

  user = ((uintptr_t) block + HEADER_SIZE + align - 1) & ~(uintptr_t) (align - 1);
  h = (Header *) (user - HEADER_SIZE);
  *h = (Header) { .klass = klass, .offset = (uint32_t) (user - (uintptr_t) block),
                  .size = size };
  if (zero && recycled)
    memset ((void *) user, 0, size);
  return (void *) user;
}

static Header *
header_of (const void *p)
{
  return (Header *) ((uintptr_t) p - HEADER_SIZE);
}

size_t
tide_heap_usable_size (const void *p)
{
  const Header *h = header_of (p);

  return class_size (h->klass) - h->offset;
}

void
tide_heap_free (void *p)
{
  Header *h = header_of (p);
  FreeBlock *block = (FreeBlock *) ((uintptr_t) p - h->offset);
  uint32_t klass = h->klass;

  pthread_mutex_lock (&heap_lock);
  block->next = free_lists[klass];
  free_lists[klass] = block;
  pthread_mutex_unlock (&heap_lock);
}

/* NULL, with p untouched, when a larger block cannot be had here. */
void *
tide_heap_realloc (void   *p,
                   size_t  size)
{
  Header *h = header_of (p);
  void *q;

  if (size <= tide_heap_usable_size (p))
    {
      h->size = size;
      return p;
    }
  q = tide_heap_alloc (size, HEADER_SIZE, false);
  if (q == NULL)
    return NULL;
  memcpy (q, p, h->size);
  tide_heap_free (p);
  return q;
}

void
tide_heap_lock (void)
{
  pthread_mutex_lock (&heap_lock);
}

void
tide_heap_unlock (void)
{
  pthread_mutex_unlock (&heap_lock);
}

/* In the child of a fork, where the forking thread is the only one left. */
void
tide_heap_reset_lock (void)
{
  pthread_mutexattr_t attr;

  pthread_mutexattr_init (&attr);
  pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init (&heap_lock, &attr);
  pthread_mutexattr_destroy (&attr);
}
