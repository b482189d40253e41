/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-heap.c: the profiler's own heap in libtidemark-preload.so.
 */
#include "config.h"

#include "tide-preload-heap.h"

#include <glib.h>
#include <string.h>

#define N_THREADS  4
#define PER_THREAD 20000

static void
test_alloc_free (void)
{
  unsigned char *a = tide_heap_alloc (100, 16, false);
  unsigned char *b;

  g_assert_nonnull (a);
  g_assert_true (tide_heap_owns (a));
  g_assert_false (tide_heap_owns (&a));
  g_assert_false (tide_heap_owns (NULL));
  g_assert_cmpuint ((guintptr) a % 16, ==, 0);
  /* 100 bytes and a 16-byte header: a 128-byte block. */
  g_assert_cmpuint (tide_heap_usable_size (a), ==, 112);
  memset (a, 0xab, 100);
  tide_heap_free (a);
  /* The freed block is the next one of its class, given back zeroed when
   * asked (calloc). */
  b = tide_heap_alloc (90, 16, true);
  g_assert_true (b == a);
  for (guint i = 0; i < 90; i++)
    g_assert_cmpuint (b[i], ==, 0);
  tide_heap_free (b);
}

static void
test_alignment (void)
{
  for (gsize align = 32; align <= 65536; align *= 2)
    {
      void *p = tide_heap_alloc (24, align, false);

      g_assert_nonnull (p);
      g_assert_cmpuint ((guintptr) p % align, ==, 0);
      g_assert_cmpuint (tide_heap_usable_size (p), >=, 24);
      tide_heap_free (p);
    }
  g_assert_null (tide_heap_alloc (8, 48, false));  /* not a power of two */
}

static void
test_realloc (void)
{
  char *p = tide_heap_alloc (10, 16, false);
  char *q;

  memcpy (p, "tidemark!", 10);
  /* Within the block: the same pointer. */
  g_assert_true (tide_heap_realloc (p, 16) == p);
  q = tide_heap_realloc (p, 5000);
  g_assert_nonnull (q);
  g_assert_true (q != p);
  g_assert_cmpstr (q, ==, "tidemark!");
  g_assert_cmpuint (tide_heap_usable_size (q), >=, 5000);
  tide_heap_free (q);
}

static void
test_limits (void)
{
  /* Larger than the largest class: the caller falls back to the real
   * allocator. */
  g_assert_null (tide_heap_alloc ((gsize) 64 << 20, 16, false));
  g_assert_null (tide_heap_alloc (G_MAXSIZE - 8, 16, false));
  /* An alignment larger than any block. */
  g_assert_null (tide_heap_alloc (64, (gsize) 1 << 63, false));
}

static gpointer
worker_main (gpointer data)
{
  guint seed = GPOINTER_TO_UINT (data);
  guint8 *live[64] = { 0 };
  gsize sizes[64] = { 0 };

  for (guint i = 0; i < PER_THREAD; i++)
    {
      guint slot = i % G_N_ELEMENTS (live);

      if (live[slot] != NULL)
        {
          /* No other thread's block overlapped this one. */
          g_assert_cmpuint (live[slot][0], ==, (guint8) slot);
          g_assert_cmpuint (live[slot][sizes[slot] - 1], ==, (guint8) slot);
          tide_heap_free (live[slot]);
        }
      seed = seed * 1103515245u + 12345u;
      sizes[slot] = 1 + (seed >> 8) % 3000;
      live[slot] = tide_heap_alloc (sizes[slot], 16, false);
      g_assert_nonnull (live[slot]);
      memset (live[slot], (int) slot, sizes[slot]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (live); i++)
    tide_heap_free (live[i]);
  return NULL;
}

static void
test_threads (void)
{
  GThread *threads[N_THREADS];

  for (guint t = 0; t < N_THREADS; t++)
    threads[t] = g_thread_new ("heap", worker_main, GUINT_TO_POINTER (t + 1));
  for (guint t = 0; t < N_THREADS; t++)
    g_thread_join (threads[t]);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/preload/heap/alloc-free", test_alloc_free);
  g_test_add_func ("/capture/preload/heap/alignment", test_alignment);
  g_test_add_func ("/capture/preload/heap/realloc", test_realloc);
  g_test_add_func ("/capture/preload/heap/limits", test_limits);
  g_test_add_func ("/capture/preload/heap/threads", test_threads);
  return g_test_run ();
}
