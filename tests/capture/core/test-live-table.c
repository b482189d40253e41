/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideLiveTable: allocations and frees matched whatever order their records
 * arrive in, as they do when threads flush their buffers independently.
 */
#include "config.h"

#include "tide-live-table.h"

static TideLiveAlloc
block (guint64 addr,
       gint64  alloc_ns,
       gint64  stack_id)
{
  return (TideLiveAlloc) { .addr = addr, .size = 64, .weight = 1, .alloc_ns = alloc_ns,
                           .stack_id = stack_id, .device = -1, .kind = 1 };
}

static void
test_in_order (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc a = block (0x1000, 10, 1), out;
  gint64 free_ns;

  g_assert_false (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 1);
  g_assert_true (tide_live_table_release (table, 0x1000, 20, &out));
  g_assert_cmpint (out.alloc_ns, ==, 10);
  g_assert_cmpint (out.stack_id, ==, 1);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* Thread B frees a block before the recorder hears thread A allocate it. */
static void
test_free_arrives_first (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc a = block (0x2000, 10, 7), out;
  gint64 free_ns = 0;

  g_assert_false (tide_live_table_release (table, 0x2000, 30, &out));
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 1);
  g_assert_true (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpint (free_ns, ==, 30);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
}

/* A allocates X, B frees X, A allocates X again; the records arrive as
 * alloc(10), alloc(40), free(20): the free ends the first block. */
static void
test_address_reused_before_free_arrives (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc first = block (0x3000, 10, 1), second = block (0x3000, 40, 2), out;
  gint64 free_ns;

  g_assert_false (tide_live_table_alloc (table, &first, &free_ns));
  g_assert_false (tide_live_table_alloc (table, &second, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 2);
  g_assert_true (tide_live_table_release (table, 0x3000, 20, &out));
  g_assert_cmpint (out.stack_id, ==, 1);
  g_assert_true (tide_live_table_release (table, 0x3000, 50, &out));
  g_assert_cmpint (out.stack_id, ==, 2);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* A free that never finds its allocation (unrecorded block) expires. */
static void
test_orphans_expire (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc late = block (0x4000, 5, 1), out;
  gint64 free_ns;

  tide_live_table_release (table, 0x4000, 100, &out);
  tide_live_table_release (table, 0x5000, 300, &out);
  tide_live_table_expire_orphans (table, 200);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 1);
  /* The expired free no longer ends a block of that address. */
  g_assert_false (tide_live_table_alloc (table, &late, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 1);
}

static void
count_live (const TideLiveAlloc *alloc,
            gint64               free_ns,
            gpointer             user_data)
{
  gint64 *bounds = user_data;

  bounds[0]++;
  bounds[1] += free_ns;
}

/* At the end, an older block whose free never came is bounded by the newer
 * block that took its address. */
static void
test_foreach_bounds (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc first = block (0x6000, 10, 1), second = block (0x6000, 40, 2);
  gint64 free_ns, seen[2] = { 0, 0 };

  tide_live_table_alloc (table, &first, &free_ns);
  tide_live_table_alloc (table, &second, &free_ns);
  tide_live_table_foreach (table, count_live, seen);
  g_assert_cmpint (seen[0], ==, 2);
  g_assert_cmpint (seen[1], ==, 40);
}

typedef struct
{
  gint64 stack_id[4];
  gint64 free_ns[4];
  guint  n;
} Visits;

static void
record_visit (const TideLiveAlloc *alloc,
              gint64               free_ns,
              gpointer             user_data)
{
  Visits *v = user_data;

  g_assert_cmpuint (v->n, <, G_N_ELEMENTS (v->stack_id));
  v->stack_id[v->n] = alloc->stack_id;
  v->free_ns[v->n] = free_ns;
  v->n++;
}

/* Late arrivals keep an address's blocks newest first: each free ends the
 * newest block made at or before it, and the bounds given at the end are
 * those of the next newer block. */
static void
test_chain_out_of_order (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc b40 = block (0x7000, 40, 40), b10 = block (0x7000, 10, 10),
                b25 = block (0x7000, 25, 25), out;
  gint64 free_ns;
  Visits v = { 0 };

  g_assert_false (tide_live_table_alloc (table, &b40, &free_ns));
  g_assert_false (tide_live_table_alloc (table, &b10, &free_ns));
  g_assert_false (tide_live_table_alloc (table, &b25, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 3);

  tide_live_table_foreach (table, record_visit, &v);
  g_assert_cmpuint (v.n, ==, 3);
  g_assert_cmpint (v.stack_id[0], ==, 40);
  g_assert_cmpint (v.free_ns[0], ==, 0);
  g_assert_cmpint (v.stack_id[1], ==, 25);
  g_assert_cmpint (v.free_ns[1], ==, 40);
  g_assert_cmpint (v.stack_id[2], ==, 10);
  g_assert_cmpint (v.free_ns[2], ==, 25);

  /* Nothing was allocated there by 5: that free waits as an orphan. */
  g_assert_false (tide_live_table_release (table, 0x7000, 5, &out));
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 1);
  g_assert_true (tide_live_table_release (table, 0x7000, 30, &out));
  g_assert_cmpint (out.stack_id, ==, 25);
  g_assert_true (tide_live_table_release (table, 0x7000, 15, &out));
  g_assert_cmpint (out.stack_id, ==, 10);
  g_assert_true (tide_live_table_release (table, 0x7000, 50, &out));
  g_assert_cmpint (out.stack_id, ==, 40);
  g_assert_cmpint (out.addr, ==, 0x7000);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);

  /* The orphan still ends the next block allocated at or before 5. */
  b10.alloc_ns = 3;
  g_assert_true (tide_live_table_alloc (table, &b10, &free_ns));
  g_assert_cmpint (free_ns, ==, 5);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* Allocations of other addresses go on while orphans wait; each allocation
 * of the orphans' address takes the earliest free at or after it. */
static void
test_orphans_among_live_blocks (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc a, out;
  gint64 free_ns = 0;

  g_assert_false (tide_live_table_release (table, 0x8000, 60, &out));
  g_assert_false (tide_live_table_release (table, 0x8000, 30, &out));
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 2);
  for (guint i = 1; i <= 100; i++)
    {
      a = block (0x10000 + i * 32, i, i);
      g_assert_false (tide_live_table_alloc (table, &a, &free_ns));
    }
  a = block (0x8000, 50, 500);
  g_assert_true (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpint (free_ns, ==, 60);
  a = block (0x8000, 10, 501);
  g_assert_true (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpint (free_ns, ==, 30);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
  a = block (0x8000, 70, 502);
  g_assert_false (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 101);
  tide_live_table_expire_orphans (table, G_MAXINT64);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
  for (guint i = 100; i >= 1; i--)
    {
      g_assert_true (tide_live_table_release (table, 0x10000 + i * 32, 200, &out));
      g_assert_cmpint (out.stack_id, ==, i);
      g_assert_cmpint (out.alloc_ns, ==, i);
    }
  g_assert_true (tide_live_table_release (table, 0x8000, 80, &out));
  g_assert_cmpint (out.stack_id, ==, 502);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* Address 0 is never a live block in practice, but the wire may say so. */
static void
test_address_zero (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc first = block (0, 10, 1), second = block (0, 40, 2), other = block (0x40, 5, 3);
  TideLiveAlloc out;
  gint64 free_ns, seen[2] = { 0, 0 };

  g_assert_false (tide_live_table_release (table, 0, 5, &out));
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 1);
  tide_live_table_expire_orphans (table, 6);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
  g_assert_false (tide_live_table_alloc (table, &first, &free_ns));
  g_assert_false (tide_live_table_alloc (table, &other, &free_ns));
  g_assert_false (tide_live_table_alloc (table, &second, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 3);
  tide_live_table_foreach (table, count_live, seen);
  g_assert_cmpint (seen[0], ==, 3);
  g_assert_cmpint (seen[1], ==, 40);
  g_assert_true (tide_live_table_release (table, 0, 20, &out));
  g_assert_cmpint (out.stack_id, ==, 1);
  g_assert_true (tide_live_table_release (table, 0, 50, &out));
  g_assert_cmpint (out.stack_id, ==, 2);
  g_assert_cmpint (out.addr, ==, 0);
  g_assert_false (tide_live_table_release (table, 0, 60, &out));
  g_assert_true (tide_live_table_release (table, 0x40, 60, &out));
  g_assert_cmpint (out.stack_id, ==, 3);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* 100000 blocks make the table double many times; released in a shuffled
 * order, each free must still find its own block. */
static void
test_growth (void)
{
  const guint n = 100000;
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  g_autofree guint *order = g_new (guint, n);
  g_autoptr(GRand) rand = g_rand_new_with_seed (20260901);
  TideLiveAlloc a, out;
  gint64 free_ns, seen[2] = { 0, 0 };

  for (guint i = 0; i < n; i++)
    {
      a = block (0x7f3a12340000 + (guint64) i * 48, i + 1, i);
      a.size = i * 3;
      g_assert_false (tide_live_table_alloc (table, &a, &free_ns));
      order[i] = i;
    }
  g_assert_cmpuint (tide_live_table_get_size (table), ==, n);
  tide_live_table_foreach (table, count_live, seen);
  g_assert_cmpint (seen[0], ==, n);
  g_assert_cmpint (seen[1], ==, 0);

  for (guint i = n - 1; i > 0; i--)
    {
      guint j = g_rand_int_range (rand, 0, i + 1), t = order[i];

      order[i] = order[j];
      order[j] = t;
    }
  for (guint k = 0; k < n; k++)
    {
      guint i = order[k];

      g_assert_true (tide_live_table_release (table, 0x7f3a12340000 + (guint64) i * 48,
                                              n + 1, &out));
      g_assert_cmpuint (out.addr, ==, 0x7f3a12340000 + (guint64) i * 48);
      g_assert_cmpint (out.alloc_ns, ==, i + 1);
      g_assert_cmpint (out.stack_id, ==, i);
      g_assert_cmpuint (out.size, ==, i * 3);
      g_assert_cmpuint (tide_live_table_get_size (table), ==, n - k - 1);
    }
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
  seen[0] = seen[1] = 0;
  tide_live_table_foreach (table, count_live, seen);
  g_assert_cmpint (seen[0], ==, 0);
}

/* The reference: each address's blocks, in no order. */
typedef struct
{
  GHashTable *blocks;     /* &addr -> GArray of TideLiveAlloc */
  GHashTable *bound;      /* &stack_id -> expected free_ns of foreach */
  guint       size;
} Model;

static gint64 *
new_int64 (gint64 v)
{
  return g_memdup2 (&v, sizeof v);
}

static void
model_alloc (Model               *m,
             const TideLiveAlloc *a)
{
  GArray *list = g_hash_table_lookup (m->blocks, &a->addr);

  if (list == NULL)
    {
      list = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
      g_hash_table_insert (m->blocks, new_int64 ((gint64) a->addr), list);
    }
  g_array_append_val (list, *a);
  m->size++;
}

/* Index of the newest block of @list made at or before @ns, or -1. */
static int
model_pick (GArray *list,
            gint64  ns)
{
  int best = -1;

  for (guint i = 0; i < list->len; i++)
    {
      const TideLiveAlloc *a = &g_array_index (list, TideLiveAlloc, i);

      if (a->alloc_ns <= ns &&
          (best < 0 || a->alloc_ns > g_array_index (list, TideLiveAlloc, best).alloc_ns))
        best = (int) i;
    }
  return best;
}

static void
check_visit (const TideLiveAlloc *alloc,
             gint64               free_ns,
             gpointer             user_data)
{
  Model *m = user_data;
  gint64 *expected = g_hash_table_lookup (m->bound, &alloc->stack_id);

  g_assert_nonnull (expected);
  g_assert_cmpint (free_ns, ==, *expected);
  /* Each block is visited once. */
  g_hash_table_remove (m->bound, &alloc->stack_id);
}

static void
model_check_foreach (Model         *m,
                     TideLiveTable *table)
{
  GHashTableIter iter;
  GArray *list;

  g_hash_table_iter_init (&iter, m->blocks);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &list))
    for (guint i = 0; i < list->len; i++)
      {
        const TideLiveAlloc *a = &g_array_index (list, TideLiveAlloc, i);
        gint64 newer = 0;

        for (guint j = 0; j < list->len; j++)
          {
            gint64 ns = g_array_index (list, TideLiveAlloc, j).alloc_ns;

            if (ns > a->alloc_ns && (newer == 0 || ns < newer))
              newer = ns;
          }
        g_hash_table_insert (m->bound, new_int64 (a->stack_id), new_int64 (newer));
      }
  tide_live_table_foreach (table, check_visit, m);
  g_assert_cmpuint (g_hash_table_size (m->bound), ==, 0);
}

/* Random allocs and frees over a small set of addresses, compared at every
 * step with the reference: the table grows and shrinks through small sizes
 * where probe runs are long and wrap around the end of the array, so removal
 * must pull back the right slots.  Some blocks arrive late and some frees
 * end an older block of their address. */
static void
test_against_model (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (4711);
  g_autoptr(GHashTable) blocks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                        (GDestroyNotify) g_array_unref);
  g_autoptr(GHashTable) bound = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                       g_free);
  Model m = { blocks, bound, 0 };
  guint64 addrs[160];
  gint64 now = 0;
  guint n_older = 0, n_cycles = 0;
  gboolean grown = FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (addrs); i++)
    addrs[i] = i % 2 ? 0x5600aa000000 + (guint64) g_rand_int_range (rand, 0, 1 << 20) * 16
                     : ((guint64) g_rand_int (rand) << 32 | g_rand_int (rand));
  addrs[0] = 0;

  for (guint step = 0; step < 300000; step++)
    {
      /* Phases push the count up to about a hundred and back to near 0. */
      gboolean filling = (step / 3000) % 2 == 0;
      gboolean alloc = g_rand_int_range (rand, 0, 100) < (filling ? 65 : 25);
      /* Mostly a new address for an alloc, sometimes one already live. */
      gboolean want_live = !alloc || g_rand_int_range (rand, 0, 100) < 10;
      guint64 addr = 0;
      GArray *list = NULL;
      TideLiveAlloc a, out;
      gint64 free_ns;

      for (guint tries = 0; tries < 30; tries++)
        {
          addr = addrs[g_rand_int_range (rand, 0, G_N_ELEMENTS (addrs))];
          list = g_hash_table_lookup (m.blocks, &addr);
          if ((list != NULL && list->len > 0) == want_live)
            break;
        }
      now += 1000000;
      if (alloc)
        {
          /* Unique times (step is the low digits); some arrive up to 200
           * steps late. */
          a = block (addr, now - g_rand_int_range (rand, 0, 200) * (gint64) 1000000 + step,
                     step);
          g_assert_false (tide_live_table_alloc (table, &a, &free_ns));
          model_alloc (&m, &a);
        }
      else if (list != NULL && list->len > 0)
        {
          /* A free at or after the oldest block, so none becomes an orphan. */
          gint64 oldest = G_MAXINT64;
          int pick;

          for (guint i = 0; i < list->len; i++)
            oldest = MIN (oldest, g_array_index (list, TideLiveAlloc, i).alloc_ns);
          free_ns = g_rand_boolean (rand)
                    ? now + 999999
                    : oldest + g_rand_int_range (rand, 0, 300) * (gint64) 1000000;
          pick = model_pick (list, free_ns);
          g_assert_cmpint (pick, >=, 0);
          if (g_array_index (list, TideLiveAlloc, pick).alloc_ns !=
              g_array_index (list, TideLiveAlloc, model_pick (list, G_MAXINT64)).alloc_ns)
            n_older++;
          g_assert_true (tide_live_table_release (table, addr, free_ns, &out));
          g_assert_cmpuint (out.addr, ==, addr);
          g_assert_cmpint (out.alloc_ns, ==, g_array_index (list, TideLiveAlloc, pick).alloc_ns);
          g_assert_cmpint (out.stack_id, ==, g_array_index (list, TideLiveAlloc, pick).stack_id);
          g_array_remove_index_fast (list, pick);
          m.size--;
        }
      g_assert_cmpuint (tide_live_table_get_size (table), ==, m.size);
      g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
      /* A cycle: the table held 80 addresses (its array grew from 64
       * slots to 256), then at most 4 (it shrank back to 64); each fill
       * and drain phase makes one, and each ends with a full comparison
       * right after the shrinking. */
      if (!grown && tide_live_table_get_size (table) >= 80)
        grown = TRUE;
      else if (grown && tide_live_table_get_size (table) <= 4)
        {
          grown = FALSE;
          n_cycles++;
          model_check_foreach (&m, table);
        }
      if (step % 997 == 0)
        model_check_foreach (&m, table);
    }
  model_check_foreach (&m, table);
  /* The walk did what it is meant to exercise: growth and shrinking, many
   * times over, and frees that end an older block of their address. */
  g_assert_cmpuint (n_cycles, ==, 300000 / 6000);
  g_assert_cmpuint (n_older, >, 100);
}

static gint
compare_addr (gconstpointer a,
              gconstpointer b)
{
  const TideLiveAlloc *x = a, *y = b;

  return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Blocks in address order, as a stable comparison sort puts them: equal
 * addresses (an allocation whose free is on its way beside the next one)
 * keep their order.  Sizes from none to many, on both sides of each
 * sort's threshold; addresses that share their top bits, as a heap's do,
 * or differ anywhere in 64 bits. */
static void
test_sort_by_addr (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  const guint sizes[] = { 0, 1, 2, 3, 100, 255, 256, 2049, 16383, 16384, 100000 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint spread = 0; spread < 3; spread++)
      {
        g_autoptr(GArray) sorted = g_array_new (FALSE, FALSE, sizeof (TideLiveAlloc));
        g_autoptr(GArray) expected = NULL;

        for (guint i = 0; i < sizes[s]; i++)
          {
            guint64 low = g_rand_int (rand);
            guint64 addr = spread == 0 ? 0x7f0000000000ull + (low % 512) * 16
                           : spread == 1 ? 0x550000000000ull + (low << 8)
                           : ((guint64) g_rand_int (rand) << 32) | low;
            TideLiveAlloc a = { .addr = addr, .size = 16, .thread_id = i };

            g_array_append_val (sorted, a);
          }
        expected = g_array_copy (sorted);
        g_array_sort (expected, compare_addr);
        tide_live_allocs_sort_by_addr (sorted);
        g_assert_cmpuint (sorted->len, ==, expected->len);
        for (guint i = 0; i < sorted->len; i++)
          {
            g_assert_cmphex (g_array_index (sorted, TideLiveAlloc, i).addr, ==,
                             g_array_index (expected, TideLiveAlloc, i).addr);
            g_assert_cmpint (g_array_index (sorted, TideLiveAlloc, i).thread_id, ==,
                             g_array_index (expected, TideLiveAlloc, i).thread_id);
          }
      }
}

static void
mark_all (TideLiveAlloc *alloc,
          gint64         free_ns,
          gpointer       user_data)
{
  alloc->residency_group = GPOINTER_TO_UINT (user_data);
}

static void
sum_marks (const TideLiveAlloc *alloc,
           gint64               free_ns,
           gpointer             user_data)
{
  *(guint *) user_data += alloc->residency_group;
}

/* The residency's marks: a block enters the table unmarked whatever its
 * record held, keeps a mark given to it, older blocks of its address
 * too, and a block that takes the address of a freed one starts
 * unmarked. */
static void
test_residency_marks (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc a = block (0x6000, 10, 1), b = block (0x6000, 20, 2), out;
  gint64 free_ns;
  guint sum = 0;

  a.residency_group = 99;
  tide_live_table_alloc (table, &a, &free_ns);
  tide_live_table_foreach (table, sum_marks, &sum);
  g_assert_cmpuint (sum, ==, 0);

  tide_live_table_foreach_to_mark (table, mark_all, GUINT_TO_POINTER (3));
  tide_live_table_alloc (table, &b, &free_ns);
  sum = 0;
  tide_live_table_foreach (table, sum_marks, &sum);
  g_assert_cmpuint (sum, ==, 3);
  tide_live_table_foreach_to_mark (table, mark_all, GUINT_TO_POINTER (5));
  sum = 0;
  tide_live_table_foreach (table, sum_marks, &sum);
  g_assert_cmpuint (sum, ==, 10);

  g_assert_true (tide_live_table_release (table, 0x6000, 15, &out));
  g_assert_cmpint (out.alloc_ns, ==, 10);
  g_assert_cmpuint (out.residency_group, ==, 5);
  g_assert_true (tide_live_table_release (table, 0x6000, 25, &out));
  a.alloc_ns = 30;
  tide_live_table_alloc (table, &a, &free_ns);
  sum = 0;
  tide_live_table_foreach (table, sum_marks, &sum);
  g_assert_cmpuint (sum, ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/live-table/in-order", test_in_order);
  g_test_add_func ("/live-table/free-arrives-first", test_free_arrives_first);
  g_test_add_func ("/live-table/address-reused", test_address_reused_before_free_arrives);
  g_test_add_func ("/live-table/orphans-expire", test_orphans_expire);
  g_test_add_func ("/live-table/foreach-bounds", test_foreach_bounds);
  g_test_add_func ("/live-table/chain-out-of-order", test_chain_out_of_order);
  g_test_add_func ("/live-table/orphans-among-live-blocks", test_orphans_among_live_blocks);
  g_test_add_func ("/live-table/address-zero", test_address_zero);
  g_test_add_func ("/live-table/growth", test_growth);
  g_test_add_func ("/live-table/against-model", test_against_model);
  g_test_add_func ("/live-table/sort-by-addr", test_sort_by_addr);
  g_test_add_func ("/live-table/residency-marks", test_residency_marks);
  return g_test_run ();
}
