/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-addrset.c: the sampled-address set of libtidemark-preload.so.
 */
#include "config.h"

#include "tide-preload-addrset.h"
#include "tide-wire.h"

#include <glib.h>

#define N_THREADS     8
#define PER_THREAD    50000

static TideAddrSet *
set_new (void)
{
  TideAddrSet *set = g_new0 (TideAddrSet, 1);

  g_assert_true (tide_addrset_init (set));
  return set;
}

static void
test_basic (void)
{
  g_autofree TideAddrSet *set = set_new ();
  TideAddrEntry e;

  g_assert_false (tide_addrset_maybe (set, 0x1000));
  g_assert_true (tide_addrset_insert (set, 0x1000, 64, TIDE_KIND_MALLOC));
  g_assert_true (tide_addrset_maybe (set, 0x1000));
  g_assert_true (tide_addrset_lookup (set, 0x1000, &e));
  g_assert_cmpuint (e.size, ==, 64);
  g_assert_false (tide_addrset_lookup (set, 0x1010, NULL));
  /* Remove checks the kind. */
  g_assert_false (tide_addrset_remove (set, 0x1000, TIDE_ADDRSET_KIND (TIDE_KIND_MMAP), NULL));
  g_assert_true (tide_addrset_remove (set, 0x1000, TIDE_ADDRSET_KIND (TIDE_KIND_MALLOC), &e));
  g_assert_cmpuint (e.addr, ==, 0x1000);
  g_assert_false (tide_addrset_remove (set, 0x1000, 0, NULL));
  g_assert_false (tide_addrset_maybe (set, 0x1000));
  /* ... or one of a set of kinds. */
  g_assert_true (tide_addrset_insert (set, 0x1000, 64, TIDE_KIND_PYOBJECT));
  g_assert_false (tide_addrset_remove (set, 0x1000, TIDE_ADDRSET_KIND (TIDE_KIND_MALLOC)
                                       | TIDE_ADDRSET_KIND (TIDE_KIND_MMAP), NULL));
  g_assert_true (tide_addrset_remove (set, 0x1000, TIDE_ADDRSET_KIND (TIDE_KIND_MALLOC)
                                      | TIDE_ADDRSET_KIND (TIDE_KIND_PYOBJECT), &e));
  g_assert_cmpuint (e.kind, ==, TIDE_KIND_PYOBJECT);
  /* Marking adds flags to every entry, and keeps them all. */
  g_assert_true (tide_addrset_insert (set, 0x3000, 8, TIDE_KIND_MALLOC));
  g_assert_true (tide_addrset_insert (set, 0x4000, 8, TIDE_KIND_MMAP));
  tide_addrset_mark_all (set, TIDE_ADDR_INHERITED);
  g_assert_true (tide_addrset_lookup (set, 0x3000, &e));
  g_assert_cmpuint (e.flags, ==, TIDE_ADDR_INHERITED);
  g_assert_true (tide_addrset_remove (set, 0x4000, 0, &e));
  g_assert_cmpuint (e.flags, ==, TIDE_ADDR_INHERITED);
  g_assert_true (tide_addrset_remove (set, 0x3000, 0, NULL));
  /* Insert of a present address replaces it, counted once. */
  g_assert_true (tide_addrset_insert (set, 0x2000, 1, TIDE_KIND_MMAP));
  g_assert_true (tide_addrset_insert (set, 0x2000, 2, TIDE_KIND_MMAP));
  g_assert_cmpuint (tide_addrset_count (set), ==, 1);
  g_assert_true (tide_addrset_remove (set, 0x2000, 0, &e));
  g_assert_cmpuint (e.size, ==, 2);
  g_assert_false (tide_addrset_maybe (set, 0x2000));
  g_assert_false (tide_addrset_insert (set, 0, 1, TIDE_KIND_MALLOC));
}

/* Many addresses: growth, backward-shift deletion, and a filter that is
 * exact again once everything is gone. */
static void
test_many (void)
{
  g_autofree TideAddrSet *set = set_new ();
  const guint n = 200000;

  for (guint i = 1; i <= n; i++)
    g_assert_true (tide_addrset_insert (set, (guint64) i * 16, i, TIDE_KIND_MALLOC));
  g_assert_cmpuint (tide_addrset_count (set), ==, n);
  for (guint i = 1; i <= n; i += 2)
    g_assert_true (tide_addrset_remove (set, (guint64) i * 16, 0, NULL));
  for (guint i = 1; i <= n; i++)
    {
      TideAddrEntry e;
      gboolean there = tide_addrset_lookup (set, (guint64) i * 16, &e);

      g_assert_cmpint (there, ==, i % 2 == 0);
      if (there)
        {
          g_assert_cmpuint (e.size, ==, i);
          g_assert_true (tide_addrset_maybe (set, (guint64) i * 16));
        }
    }
  for (guint i = 2; i <= n; i += 2)
    g_assert_true (tide_addrset_remove (set, (guint64) i * 16, 0, NULL));
  g_assert_cmpuint (tide_addrset_count (set), ==, 0);
  for (guint i = 1; i <= n; i++)
    g_assert_false (tide_addrset_maybe (set, (guint64) i * 16));
  tide_addrset_insert (set, 0x5000, 1, TIDE_KIND_MALLOC);
  tide_addrset_clear (set);
  g_assert_false (tide_addrset_maybe (set, 0x5000));
  g_assert_false (tide_addrset_lookup (set, 0x5000, NULL));
}

typedef struct
{
  TideAddrSet *set;
  guint        index;
} Worker;

/* The i-th address of a worker.  The even workers have a region of their
 * own, as threads with glibc arenas do; the odd ones interleave their
 * blocks in one region, so they share its shard, its filter lines and the
 * words of those lines. */
static guint64
worker_addr (const Worker *w,
             guint         i)
{
  if (w->index % 2 == 0)
    return (((guint64) w->index + 1) << 32) + (guint64) i * 32;
  return ((guint64) 0x7f << 32) + ((guint64) i * N_THREADS + w->index) * 16;
}

/* Each thread inserts its own addresses, frees them in another order,
 * and checks what it sees while the others do the same. */
static gpointer
worker_main (gpointer data)
{
  Worker *w = data;

  for (guint round = 0; round < 3; round++)
    {
      for (guint i = 0; i < PER_THREAD; i++)
        g_assert_true (tide_addrset_insert (w->set, worker_addr (w, i), i, TIDE_KIND_MALLOC));
      for (guint i = 0; i < PER_THREAD; i++)
        {
          guint k = (i * 7919u) % PER_THREAD;

          g_assert_true (tide_addrset_maybe (w->set, worker_addr (w, k)));
          g_assert_true (tide_addrset_remove (w->set, worker_addr (w, k), TIDE_ADDRSET_KIND (TIDE_KIND_MALLOC), NULL));
        }
      for (guint i = 0; i < PER_THREAD; i += 97)
        g_assert_false (tide_addrset_lookup (w->set, worker_addr (w, i), NULL));
    }
  return NULL;
}

static void
test_threads (void)
{
  g_autofree TideAddrSet *set = set_new ();
  GThread *threads[N_THREADS];
  Worker workers[N_THREADS];

  for (guint t = 0; t < N_THREADS; t++)
    {
      workers[t] = (Worker) { set, t };
      threads[t] = g_thread_new ("addrset", worker_main, &workers[t]);
    }
  for (guint t = 0; t < N_THREADS; t++)
    g_thread_join (threads[t]);
  g_assert_cmpuint (tide_addrset_count (set), ==, 0);
  /* A lost update of a filter word between threads would leave a bit set
   * (or clear one too early, which the workers' own checks catch). */
  for (guint t = 0; t < N_THREADS; t++)
    for (guint i = 0; i < PER_THREAD; i++)
      g_assert_false (tide_addrset_maybe (set, worker_addr (&workers[t], i)));
}

/* The shard's lock is what orders the updates of a filter bit and of the
 * filter word around it: so every bit of an address, and every word of
 * its line, must belong to the address's own shard; and a 64 MiB region,
 * glibc's heap of an arena, must have one shard. */
static void
test_layout (void)
{
  const guint bits_per_shard = 1u << (TIDE_ADDRSET_FILTER_BITS - TIDE_ADDRSET_SHARD_BITS);
  guint32 rng = 12345;
  guint shards_seen = 0;
  guint64 seen = 0;

  for (guint n = 0; n < 100000; n++)
    {
      guint64 addr, region;
      guint32 shard, bit;

      rng = rng * 1664525u + 1013904223u;
      addr = ((guint64) rng << 20 ^ (guint64) n * 4099) & G_GUINT64_CONSTANT (0x7ffffffffff0);
      region = addr >> 26 << 26;
      shard = tide_addrset_shard_index (addr);
      bit = tide_addrset_filter_index (addr);
      g_assert_cmpuint (shard, <, TIDE_ADDRSET_SHARDS);
      g_assert_cmpuint (bit / bits_per_shard, ==, shard);
      g_assert_cmpuint (tide_addrset_shard_index (region), ==, shard);
      g_assert_cmpuint (tide_addrset_shard_index (region + (1 << 26) - 16), ==, shard);
      seen |= G_GUINT64_CONSTANT (1) << shard;
    }
  for (guint s = 0; s < TIDE_ADDRSET_SHARDS; s++)
    shards_seen += (seen >> s) & 1;
  g_assert_cmpuint (shards_seen, ==, TIDE_ADDRSET_SHARDS);
}

/* A Python process keeps its objects in pymalloc's arenas, a few MiB of
 * one 64 MiB region and so of one shard, and frees tens of millions of
 * them: each free the filter cannot rule out costs the shard's lock and a
 * lookup.  With 300 sampled objects live among 16 MiB of arenas (what the
 * default sampling keeps of a loop that holds a few MiB), at most one free
 * in 250 of the others may have to look. */
static void
test_one_region_false_positives (void)
{
  g_autofree TideAddrSet *set = set_new ();
  const guint64 base = G_GUINT64_CONSTANT (0x7f0000000000);
  const guint64 span = 16 << 20;
  const guint probes = 1000000;
  guint32 rng = 777;
  guint looked = 0, probed = 0;

  for (guint i = 0; i < 300; i++)
    {
      rng = rng * 1664525u + 1013904223u;
      g_assert_true (tide_addrset_insert (set, base + ((guint64) rng % span & ~(guint64) 15), 32,
                                          TIDE_KIND_PYOBJECT));
    }
  for (guint i = 0; i < probes; i++)
    {
      guint64 addr;

      rng = rng * 1664525u + 1013904223u;
      addr = base + ((guint64) rng % span & ~(guint64) 15);
      if (tide_addrset_lookup (set, addr, NULL))
        continue;
      probed++;
      looked += tide_addrset_maybe (set, addr);
    }
  g_assert_cmpuint (probed, >, probes - 1000);
  g_assert_cmpuint (looked, <, probed / 250);
}

/* Two addresses behind one filter bit: the bit stays while either lives. */
static void
test_shared_bit (void)
{
  g_autofree TideAddrSet *set = set_new ();
  guint64 a = 0x10000, b = a + 16;
  guint32 wanted = tide_addrset_filter_index (a);

  while (tide_addrset_filter_index (b) != wanted)
    b += 16;
  g_assert_true (tide_addrset_insert (set, a, 1, TIDE_KIND_MALLOC));
  g_assert_true (tide_addrset_insert (set, b, 2, TIDE_KIND_MALLOC));
  g_assert_true (tide_addrset_remove (set, a, 0, NULL));
  g_assert_true (tide_addrset_maybe (set, b));
  g_assert_true (tide_addrset_maybe (set, a));  /* a false positive, by design */
  g_assert_false (tide_addrset_lookup (set, a, NULL));
  g_assert_true (tide_addrset_remove (set, b, 0, NULL));
  g_assert_false (tide_addrset_maybe (set, a));
  g_assert_false (tide_addrset_maybe (set, b));
}

/* Removes clear their bits, but for those that a live entry shares: after
 * a burst of sampled blocks is freed, the only false positives left are
 * the addresses behind the bits of the blocks that live on, and the table
 * that grew for the burst has given its memory back. */
static void
test_exact_bits (void)
{
  g_autofree TideAddrSet *set = set_new ();
  const guint64 region = G_GUINT64_CONSTANT (0x7f1200000000);
  const guint n_keep = 10, n_churn = 20000;
  TideAddrShard *shard = &set->shards[tide_addrset_shard_index (region)];
  g_autoptr(GHashTable) kept_bits = g_hash_table_new (NULL, NULL);
  guint false_positives = 0, shared = 0;

  for (guint i = 0; i < n_keep; i++)
    {
      g_assert_true (tide_addrset_insert (set, region + i * 4096 + 8, i, TIDE_KIND_MALLOC));
      g_hash_table_add (kept_bits, GUINT_TO_POINTER (tide_addrset_filter_index (region + i * 4096 + 8)));
    }
  /* All at once, then freed: the table grows to 65536 slots. */
  for (guint i = 0; i < n_churn; i++)
    g_assert_true (tide_addrset_insert (set, region + (1 << 20) + i * 48, i, TIDE_KIND_MALLOC));
  g_assert_cmpuint (shard->mask + 1, ==, 65536);
  for (guint i = 0; i < n_churn; i++)
    g_assert_true (tide_addrset_remove (set, region + (1 << 20) + i * 48, 0, NULL));
  for (guint i = 0; i < n_churn; i++)
    {
      guint64 addr = region + (1 << 20) + i * 48;

      false_positives += tide_addrset_maybe (set, addr);
      shared += g_hash_table_contains (kept_bits, GUINT_TO_POINTER (tide_addrset_filter_index (addr)));
    }
  g_assert_cmpuint (false_positives, ==, shared);
  g_assert_cmpuint (shard->count, ==, n_keep);
  g_assert_cmpuint (shard->mask + 1, ==, 64);
  for (guint i = 0; i < n_keep; i++)
    {
      TideAddrEntry e;

      g_assert_true (tide_addrset_maybe (set, region + i * 4096 + 8));
      g_assert_true (tide_addrset_lookup (set, region + i * 4096 + 8, &e));
      g_assert_cmpuint (e.size, ==, i);
    }
}

/* An address that a sampled block once had and that the program hands out
 * again at once (CPython's pools and glibc's tcache reuse the last freed
 * block first): once its sampled block is freed, frees of the blocks that
 * take the address next must not reach the lock. */
static void
test_reused_address (void)
{
  g_autofree TideAddrSet *set = set_new ();
  const guint64 region = G_GUINT64_CONSTANT (0x7f3400000000);
  const guint64 hot = region + (1 << 20) + 48;

  for (guint i = 0; i < 10; i++)
    g_assert_true (tide_addrset_insert (set, region + i * 4096 + 8, i, TIDE_KIND_MALLOC));
  for (guint round = 0; round < 100; round++)
    {
      g_assert_false (tide_addrset_maybe (set, hot));
      g_assert_true (tide_addrset_insert (set, hot, 64, TIDE_KIND_PYOBJECT));
      g_assert_true (tide_addrset_maybe (set, hot));
      g_assert_true (tide_addrset_remove (set, hot, TIDE_ADDRSET_KIND (TIDE_KIND_PYOBJECT), NULL));
    }
  g_assert_false (tide_addrset_maybe (set, hot));
  for (guint i = 0; i < 10; i++)
    g_assert_true (tide_addrset_maybe (set, region + i * 4096 + 8));
}

/* Random inserts and removes among addresses that share bits eight to
 * one: after every step, a bit is set exactly when a live entry has it. */
static void
test_bits_follow_entries (void)
{
  g_autofree TideAddrSet *set = set_new ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (20261204);
  const guint64 base = G_GUINT64_CONSTANT (0x7f5600000000);
  const guint n_addrs = 4096;  /* one 64 KiB granule of 16-byte blocks */
  g_autofree gboolean *live = g_new0 (gboolean, n_addrs);
  g_autofree guint *per_bit = g_new0 (guint, 1u << TIDE_ADDRSET_FILTER_BITS);

  for (guint step = 0; step < 40000; step++)
    {
      guint k = g_rand_int_range (rand, 0, n_addrs);
      guint64 addr = base + (guint64) k * 16;
      guint32 bit = tide_addrset_filter_index (addr);

      if (live[k])
        {
          g_assert_true (tide_addrset_remove (set, addr, 0, NULL));
          per_bit[bit]--;
        }
      else
        {
          g_assert_true (tide_addrset_insert (set, addr, k, TIDE_KIND_MALLOC));
          per_bit[bit]++;
        }
      live[k] = !live[k];
      /* The bit of this address, and of a few others, against the truth. */
      for (guint j = 0; j < 4; j++)
        {
          guint other = j == 0 ? k : (guint) g_rand_int_range (rand, 0, n_addrs);
          guint64 a = base + (guint64) other * 16;

          g_assert_cmpint (tide_addrset_maybe (set, a), ==, per_bit[tide_addrset_filter_index (a)] > 0);
          g_assert_cmpint (tide_addrset_lookup (set, a, NULL), ==, live[other]);
        }
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/preload/addrset/basic", test_basic);
  g_test_add_func ("/capture/preload/addrset/many", test_many);
  g_test_add_func ("/capture/preload/addrset/threads", test_threads);
  g_test_add_func ("/capture/preload/addrset/shared-bit", test_shared_bit);
  g_test_add_func ("/capture/preload/addrset/layout", test_layout);
  g_test_add_func ("/capture/preload/addrset/one-region-false-positives",
                   test_one_region_false_positives);
  g_test_add_func ("/capture/preload/addrset/exact-bits", test_exact_bits);
  g_test_add_func ("/capture/preload/addrset/reused-address", test_reused_address);
  g_test_add_func ("/capture/preload/addrset/bits-follow-entries", test_bits_follow_entries);
  return g_test_run ();
}
