/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-e2e.c's scenarios of sampled blocks: frees folded into
 * their allocation's record, the unwinder's memo, the malloc family under
 * glibc and jemalloc, the sampler's seeds and reallocs, and CPython's
 * frees, each recorded once.
 */
#include "config.h"

#include "preload-target.h"
#include "tide-test-preload.h"
#include "tide-test-util.h"
#include "tide-wire.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* Replays a connection's ALLOCs and FREEs: every FREE is of a block the
 * process recorded and had not freed yet, and no block is recorded twice.
 * Returns what is still live (address -> its ALLOC record). */
static GHashTable *
replay_lifetimes (const Conn *c)
{
  GHashTable *live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  const TideWireHeader *h;

  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;
      const TideWireFree *fr = (const void *) h;

      if (h->type == TIDE_WIRE_ALLOC)
        {
          if (g_hash_table_contains (live, &a->addr))
            g_error ("ALLOC of %#" G_GINT64_MODIFIER "x, which is live", a->addr);
          if (a->lifetime_ns == 0)
            g_hash_table_insert (live, g_memdup2 (&a->addr, sizeof a->addr), (gpointer) a);
        }
      else if (h->type == TIDE_WIRE_FREE && !g_hash_table_remove (live, &fr->addr))
        g_error ("FREE of %#" G_GINT64_MODIFIER "x, which was not recorded", fr->addr);
    }
  return live;
}

/* The "fam WHAT POINTER SIZE" lines: each block recorded once, with its
 * size and weight 1, and freed after. */
static void
check_family_blocks (const Run  *run,
                     const Conn *c,
                     guint       n_expected)
{
  g_auto (GStrv) lines = g_strsplit (run->out->str, "\n", -1);
  guint n = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], " ", -1);
      guint64 addr, size;
      const TideWireAlloc *a;
      guint index = 0;

      if (g_strv_length (f) != 4 || strcmp (f[0], "fam") != 0)
        continue;
      addr = g_ascii_strtoull (f[2], NULL, 16);
      size = g_ascii_strtoull (f[3], NULL, 10);
      g_assert_cmpuint (count_allocs (c, size), ==, 1);
      a = find_alloc (c, size, 0, &index);
      if (a->addr != addr)
        g_error ("%s: recorded at %#" G_GINT64_MODIFIER "x, not %s", f[1], a->addr, f[2]);
      g_assert_cmpfloat (a->weight, ==, 1.0);
      g_assert_cmpuint (a->kind, ==, TIDE_KIND_MALLOC);
      if (!freed_after (c, addr, index))
        g_error ("%s: no FREE of %s", f[1], f[2]);
      n++;
    }
  g_assert_cmpuint (n, ==, n_expected);
}

/* The FREEs of the block that @a recorded: those of its address timed from
 * its allocation to the next allocation there.  By time, not by place in
 * the stream: another thread's FREE can arrive before the ALLOC. */
static guint
count_frees_of (const Conn          *c,
                const TideWireAlloc *a)
{
  const TideWireHeader *h;
  guint64 end = G_MAXUINT64;
  guint n = 0;

  FOR_EACH_RECORD (c, h)
    if (h->type == TIDE_WIRE_ALLOC && ((const TideWireAlloc *) h)->addr == a->addr &&
        h->time_ns > a->h.time_ns && h->time_ns < end)
      end = h->time_ns;
  FOR_EACH_RECORD (c, h)
    if (h->type == TIDE_WIRE_FREE && ((const TideWireFree *) h)->addr == a->addr &&
        h->time_ns >= a->h.time_ns && h->time_ns < end)
      n++;
  return n;
}

/* The nth recorded block of @size: folded (its ALLOC carries its lifetime
 * and no FREE follows) or freed by one FREE. */
static void
check_fold (const Conn *c,
            guint64     size,
            guint       nth,
            gboolean    folded)
{
  const TideWireAlloc *a = find_alloc (c, size, nth, NULL);

  g_assert_nonnull (a);
  if (folded)
    {
      g_assert_cmpuint (a->lifetime_ns, >, 0);
      g_assert_cmpuint (count_frees_of (c, a), ==, 0);
    }
  else
    {
      g_assert_cmpuint (a->lifetime_ns, ==, 0);
      g_assert_cmpuint (count_frees_of (c, a), ==, 1);
    }
}

/* A sampled block freed by the thread that made it, while its ALLOC waits
 * in that thread's buffer, is one record; freed by another thread, or
 * after a step sent the buffer, it gets a FREE.  An address that another
 * thread freed and this one got again folds into its new record only. */
static void
test_fold (Fixture       *f,
           gconstpointer  data)
{
  RunOptions o = { .mode = "fold", .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .sample_bytes = FAMILY_SAMPLE_BYTES };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *c = clean_single_conn (run);

  check_fold (c, FOLD_SAME, 0, TRUE);
  check_fold (c, FOLD_CROSS, 0, FALSE);
  check_fold (c, FOLD_STEP, 0, FALSE);
  /* glibc gives the block back to the thread of its arena. */
  g_assert_cmpuint (out_pointer (run, "reuse", 0), ==, find_alloc (c, FOLD_REUSE, 0, NULL)->addr);
  g_assert_cmpuint (find_alloc (c, FOLD_REUSE, 1, NULL)->addr, ==,
                    find_alloc (c, FOLD_REUSE, 0, NULL)->addr);
  check_fold (c, FOLD_REUSE, 0, FALSE);
  check_fold (c, FOLD_REUSE, 1, TRUE);
  g_assert_null (find_alloc (c, FOLD_REUSE, 2, NULL));
}

/* How many of @a's frames are @ra. */
static guint
count_frames (const TideWireAlloc *a,
              guint64              ra)
{
  guint n = 0;

  for (guint i = 0; i < a->n_frames; i++)
    n += a->frames[i] == ra;
  return n;
}

/* The counts of TIDEMARK_UNWIND_CHECK's report, which no stack the memo
 * gave may have contradicted. */
static void
read_memo_report (const Run *run,
                  guint64   *hits,
                  guint64   *walks)
{
  const char *report = strstr (run->out->str, "tidemark: unwind memo: ");
  guint64 mismatches;

  g_assert_nonnull (report);
  g_assert_cmpint (sscanf (report, "tidemark: unwind memo: %" G_GUINT64_FORMAT " hits, %"
                           G_GUINT64_FORMAT " walks, %" G_GUINT64_FORMAT " mismatches",
                           hits, walks, &mismatches), ==, 3);
  g_assert_cmpuint (mismatches, ==, 0);
}

/* The stack memo (tide-preload-unwind.c) gives what a walk would: two
 * callers alike, at one stack pointer, told apart by the return address on
 * the stack; recursions of changing depth; allocations in a signal handler.
 * TIDEMARK_UNWIND_CHECK has the preload compare each memo with a walk of
 * unw_backtrace and report the count. */
static void
test_memo (Fixture       *f,
           gconstpointer  data)
{
  RunOptions o = { .mode = "memo", .preload = TRUE, .socket = TRUE, .all = TRUE,
                   .kill_after = -1, .unwind_check = TRUE };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *c = clean_single_conn (run);
  guint64 caller_a = out_pointer (run, "memo-caller-a", 0);
  guint64 caller_b = out_pointer (run, "memo-caller-b", 0);
  guint64 recursion = out_pointer (run, "memo-recursion", 0);
  guint64 hooked = out_pointer (run, "memo-hooked", 0);
  guint64 hits, walks, lo, hi;
  const TideWireHeader *h;
  guint n_a = 0, n_b = 0, n_depth = 0, n_signal = 0, n_hooked = 0;

  g_assert_true (strstr (run->out->str, "\nmemo ok\n") != NULL);
  mapped_span (c, "/preload-target", &lo, &hi);
  read_memo_report (run, &hits, &walks);
  /* Most allocations repeat the last stack: the memo served them. */
  g_assert_cmpuint (hits, >, walks);
  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;

      if (h->type != TIDE_WIRE_ALLOC)
        continue;
      if (a->size == MEMO_A_SIZE || a->size == MEMO_B_SIZE)
        {
          g_assert_cmpuint (a->n_frames, >=, 2);
          g_assert_cmpuint (a->frames[1], ==, a->size == MEMO_A_SIZE ? caller_a : caller_b);
          if (a->size == MEMO_A_SIZE)
            n_a++;
          else
            n_b++;
        }
      else if (a->size > MEMO_DEPTH_SIZE && a->size <= MEMO_DEPTH_SIZE + 3)
        {
          g_assert_cmpuint (count_frames (a, recursion), ==, a->size - MEMO_DEPTH_SIZE);
          n_depth++;
        }
      else if (a->size == MEMO_SIGNAL_SIZE)
        n_signal++;
      else if (count_frames (a, hooked) == 1)
        {
          guint k = 0;

          /* What glibc allocated inside dlsym: the stack keeps glibc's
           * frames inside dlsym, and drops only our hook of it.  Frame
           * k - 1 returns into memo_through_hook, those before it into
           * glibc. */
          while (a->frames[k] != hooked)
            k++;
          g_assert_cmpuint (k, >=, 3);
          g_assert_true (a->frames[k - 1] >= lo && a->frames[k - 1] < hi);
          for (guint i = 0; i < k - 1; i++)
            g_assert_true (a->frames[i] < lo || a->frames[i] >= hi);
          n_hooked++;
        }
    }
  g_assert_cmpuint (n_a, ==, MEMO_ROUNDS * (MEMO_RUN + 1));
  g_assert_cmpuint (n_b, ==, MEMO_ROUNDS * (MEMO_RUN + 1));
  g_assert_cmpuint (n_depth, ==, MEMO_ROUNDS * 2);
  g_assert_cmpuint (n_signal, ==, MEMO_ROUNDS / 10);
  g_assert_cmpuint (n_hooked, >=, 1);
  g_test_message ("%u blocks allocated inside dlsym", n_hooked);
}

/* The memo is not kept across a dlclose (tide-preload-objects.c): every
 * run of one stack after one starts with a walk.  Without that, the runs
 * would all be served from the first walk. */
static void
test_memo_unload (Fixture       *f,
                  gconstpointer  data)
{
  /* meson test sets MALLOC_PERTURB_, with which glibc fills each of the
   * 256 blocks of 64 MiB on malloc and on free: minutes of memset. */
  RunOptions o = { .mode = "memo-unload", .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .sample_bytes = MEMO_UNLOAD_SIZE, .unwind_check = TRUE, .no_perturb = TRUE };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *c = clean_single_conn (run);
  guint64 caller = out_pointer (run, "memo-caller-big", 0);
  guint64 hits, walks;
  const TideWireHeader *h;
  guint n = 0;

  g_assert_true (strstr (run->out->str, "\nmemo-unload ok\n") != NULL);
  read_memo_report (run, &hits, &walks);
  g_assert_cmpuint (walks, ==, MEMO_UNLOAD_ROUNDS);
  g_assert_cmpuint (hits, ==, MEMO_UNLOAD_ROUNDS * (MEMO_UNLOAD_RUN - 1));
  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;

      if (h->type != TIDE_WIRE_ALLOC || a->size != MEMO_UNLOAD_SIZE)
        continue;
      g_assert_cmpuint (a->n_frames, >=, 2);
      g_assert_cmpuint (a->frames[1], ==, caller);
      n++;
    }
  g_assert_cmpuint (n, ==, MEMO_UNLOAD_ROUNDS * MEMO_UNLOAD_RUN);
}

/* Sampled mode through every function of the malloc family, over glibc's
 * allocator and over jemalloc's. */
static void
test_family (Fixture       *f,
             gconstpointer  data)
{
  const char *allocator = data;
  RunOptions o = { .mode = "family", .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .sample_bytes = FAMILY_SAMPLE_BYTES,
                   .also_preload = strcmp (allocator, "jemalloc") == 0 ? "libjemalloc.so.2" : NULL };
  g_autoptr (Run) run = run_target (f, &o);
  g_autofree char *said = g_strdup_printf ("allocator %s\n", allocator);
  const Conn *parent = NULL, *child = NULL;
  GHashTableIter iter;
  gpointer record;

  if (!WIFEXITED (run->status) || WEXITSTATUS (run->status) != 0)
    g_error ("family target failed (status %d): %s", run->status, run->out->str);
  g_assert_true (strstr (run->out->str, "\nfamily ok\n") != NULL);
  /* libjemalloc2 is one of the packages the set-up installs. */
  g_assert_true (g_str_has_prefix (run->out->str, said));
  g_assert_cmpuint (run->conns->len, ==, 2);
  for (guint i = 0; i < run->conns->len; i++)
    {
      const Conn *c = g_ptr_array_index (run->conns, i);
      g_autoptr (GHashTable) live = NULL;
      guint64 lo, hi;

      if (conn_hello (c)->pid == (guint32) run->pid)
        parent = c;
      else
        child = c;
      check_no_drops (c);
      check_frames (c);
      live = replay_lifetimes (c);
      /* Every block the program's own code allocated died, the churn's
       * too.  Blocks that libc made for itself may live on: the message
       * of the failed dlsym, which ld.so keeps until the next dlerror,
       * is sampled in one run in fifty. */
      mapped_span (c, "/preload-target", &lo, &hi);
      g_hash_table_iter_init (&iter, live);
      while (g_hash_table_iter_next (&iter, NULL, &record))
        {
          const TideWireAlloc *a = record;

          if (a->frames[0] >= lo && a->frames[0] < hi)
            g_error ("a block of %" G_GUINT64_FORMAT " bytes that the program made is live",
                     a->size);
        }
    }
  g_assert_nonnull (parent);
  g_assert_nonnull (child);
  /* jemalloc has no pvalloc or reallocarray (preload-target.c). */
  check_family_blocks (run, parent, o.also_preload != NULL ? 12 : 14);
  g_assert_cmpuint (count_allocs (parent, FAMILY_CHILD_SIZE), ==, 0);
  /* The child records its own block, and its realloc of the parent's as a
   * new block; the parent's block was never the child's to free
   * (replay_lifetimes would have failed). */
  g_assert_cmpuint (count_allocs (child, FAMILY_CHILD_SIZE), ==, 1);
  g_assert_cmpuint (count_allocs (child, FAMILY_FORK_SIZE), ==, 0);
  g_assert_cmpuint (count_allocs (child, FAMILY_FORK_SIZE + 1), ==, 1);
}

/* What one run of "sampler" sent: per size, how many blocks were
 * sampled and the bytes that their weights stand for; and the sizes of the
 * sampled blocks in the order they came. */
typedef struct
{
  guint    n[SAMPLER_N_SIZES];
  double   estimate[SAMPLER_N_SIZES];
  GString *order;
} SamplerRun;

static void
sampler_run (Fixture       *f,
             const char    *mode,
             const guint64 *sizes,
             guint          n_sizes,
             const char    *seed,
             SamplerRun    *out)
{
  RunOptions o = { .mode = mode, .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .sample_bytes = SAMPLER_MEAN, .seed = seed };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *c = clean_single_conn (run);
  const TideWireHeader *h;

  g_assert_cmpstr (run->out->str, ==, "sampler ok\n");
  g_assert_cmpuint (conn_hello (c)->sample_bytes, ==, SAMPLER_MEAN);
  *out = (SamplerRun) { .order = g_string_new (NULL) };
  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;

      if (h->type != TIDE_WIRE_ALLOC)
        continue;
      for (guint k = 0; k < n_sizes; k++)
        if (a->size == sizes[k])
          {
            out->n[k]++;
            out->estimate[k] += a->weight * (double) a->size;
            g_string_append_c (out->order, (char) ('a' + k));
          }
    }
}

/* Checks one run's sampled blocks of @size against the binomial of
 * @rounds blocks of that size, each sampled with p = 1 - exp(-s/mean):
 * their number, and the bytes their weights stand for, within 5 standard
 * deviations.  Returns the variance of the bytes. */
static double
assert_binomial (const char *seed,
                 guint64     size,
                 guint       sampled,
                 double      estimate,
                 double      rounds)
{
  double s = (double) size;
  double p = size >= SAMPLER_MEAN ? 1.0 : 1.0 - exp (-s / SAMPLER_MEAN);
  double count_sd = sqrt (rounds * p * (1 - p));
  /* Each block adds s/p with probability p, else 0. */
  double bytes_var = rounds * s * s * (1 - p) / p;

  g_test_message ("seed %s size %" G_GUINT64_FORMAT ": %u sampled, expected %.0f +- %.0f;"
                  " %.0f bytes estimated of %.0f +- %.0f", seed, size, sampled, rounds * p,
                  count_sd, estimate, rounds * s, sqrt (bytes_var));
  g_assert_cmpfloat (fabs (sampled - rounds * p), <=, 5 * count_sd);
  g_assert_cmpfloat (fabs (estimate - rounds * s), <=, 5 * sqrt (bytes_var));
  return bytes_var;
}

/* The real hooks and the real countdown (tide-preload-record.c), over five
 * seeds: for each size, the number of sampled blocks is what a Poisson
 * process of one point per SAMPLER_MEAN bytes gives, p = 1 - exp(-s/mean)
 * per block, and the weighted bytes estimate the bytes allocated; both
 * within 5 standard deviations of the binomial, which the test computes.
 * The sum over all sizes is held to 5 of its (much smaller) standard
 * deviation.  Blocks above the mean are all recorded, each with weight 1.
 * A seed repeats its samples exactly; another seed samples other blocks. */
static void
test_sampler_seeds (Fixture       *f,
                    gconstpointer  data)
{
  static const guint64 sizes[SAMPLER_N_SIZES] = SAMPLER_SIZES;
  static const char *const seeds[] = { "1", "2", "3", "77", "4242" };
  g_autoptr (GHashTable) orders = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree SamplerRun *runs = g_new0 (SamplerRun, G_N_ELEMENTS (seeds));
  SamplerRun again;

  for (guint r = 0; r < G_N_ELEMENTS (seeds); r++)
    {
      double total = 0, estimate = 0, variance = 0;

      sampler_run (f, "sampler", sizes, SAMPLER_N_SIZES, seeds[r], &runs[r]);
      for (guint k = 0; k < SAMPLER_N_SIZES; k++)
        {
          variance += assert_binomial (seeds[r], sizes[k], runs[r].n[k], runs[r].estimate[k],
                                       SAMPLER_ROUNDS);
          total += (double) SAMPLER_ROUNDS * sizes[k];
          estimate += runs[r].estimate[k];
        }
      g_assert_cmpuint (runs[r].n[SAMPLER_N_SIZES - 1], ==, SAMPLER_ROUNDS);
      g_assert_cmpfloat (runs[r].estimate[SAMPLER_N_SIZES - 1], ==,
                         (double) SAMPLER_ROUNDS * sizes[SAMPLER_N_SIZES - 1]);
      g_assert_cmpfloat (fabs (estimate - total), <=, 5 * sqrt (variance));
      /* Every seed samples a different set of blocks. */
      g_assert_false (g_hash_table_contains (orders, runs[r].order->str));
      g_hash_table_add (orders, runs[r].order->str);
    }

  sampler_run (f, "sampler", sizes, SAMPLER_N_SIZES, seeds[0], &again);
  g_assert_cmpstr (again.order->str, ==, runs[0].order->str);
  g_string_free (again.order, TRUE);
  for (guint r = 0; r < G_N_ELEMENTS (seeds); r++)
    g_string_free (runs[r].order, TRUE);
}

/* Blocks grown by realloc, 24 to 48 to 96 bytes: each realloc is an
 * allocation of its new size to the sampler, so the records of each size
 * follow the same binomial as blocks made at that size.  When a block
 * stayed recorded once sampled, it was recorded at each size as often as
 * the sizes up to it draw together: 1.5 times too often at 48 bytes, 1.75
 * times at 96. */
static void
test_sampler_realloc (Fixture       *f,
                      gconstpointer  data)
{
  static const guint64 sizes[SAMPLER_REALLOC_N_SIZES] = SAMPLER_REALLOC_SIZES;
  static const char *const seeds[] = { "1", "2", "3" };

  for (guint r = 0; r < G_N_ELEMENTS (seeds); r++)
    {
      SamplerRun run;

      sampler_run (f, "sampler-realloc", sizes, SAMPLER_REALLOC_N_SIZES, seeds[r], &run);
      for (guint k = 0; k < SAMPLER_REALLOC_N_SIZES; k++)
        (void) assert_binomial (seeds[r], sizes[k], run.n[k], run.estimate[k], SAMPLER_ROUNDS);
      g_string_free (run.order, TRUE);
    }
}

/* ---- CPython's frees, each recorded once --------------------------------- */

#define PYTHON "/usr/bin/python3"
/* 2000 bytes objects of 1000 bytes, one in two kept until the end: larger
 * than pymalloc serves, so pymalloc hands each to malloc, and with
 * PYTHONMALLOC=malloc every object is a malloc block. */
#define PY_OBJECTS_SCRIPT                                               \
  "keep = []\n"                                                         \
  "for i in range(2000):\n"                                             \
  "    b = bytes(1000)\n"                                               \
  "    if i % 2:\n"                                                     \
  "        keep.append(b)\n"                                            \
  "del keep\n"                                                          \
  "print('done')\n"
#define PY_OBJECT_SIZE 1033  /* sys.getsizeof (bytes (1000)) */

/* With every allocation recorded, a Python object's free is one FREE: the
 * wrapper of CPython's allocator records it, and the free() that the
 * chained allocator makes is not recorded again.  That second FREE, of a
 * block no longer live, reached the recorder as a free whose allocation
 * never came: it kept such frees for two seconds and looked through them
 * at every allocation at their address.  (A FREE of an object at an
 * address whose last block was freed can still come: an object that the
 * profiler's own code made, inside its guard, and the program freed.) */
static void
test_python_frees_once (Fixture       *f,
                        gconstpointer  data)
{
  const char *argv[] = { PYTHON, "-c", PY_OBJECTS_SCRIPT, NULL };
  RunOptions o = { .mode = "python", .preload = TRUE, .socket = TRUE, .all = TRUE,
                   .kill_after = -1, .argv = argv, .pythonmalloc = data, .python = TRUE };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *c = clean_single_conn (run);
  g_autoptr (GHashTable) live = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) objects_freed = g_hash_table_new (g_int64_hash, g_int64_equal);
  const TideWireHeader *h;
  guint n_objects = 0, n_objects_freed = 0, n_freed_again = 0;

  g_assert_cmpstr (run->out->str, ==, "done\n");
  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;
      const TideWireFree *fr = (const void *) h;

      if (h->type == TIDE_WIRE_ALLOC)
        {
          /* lifetime_ns: freed before the record left (never in --all). */
          g_assert_cmpuint (a->lifetime_ns, ==, 0);
          g_hash_table_add (live, (gpointer) &a->addr);
          g_hash_table_remove (objects_freed, &a->addr);
          n_objects += a->kind == TIDE_KIND_PYOBJECT && a->size == PY_OBJECT_SIZE;
        }
      else if (h->type == TIDE_WIRE_FREE && g_hash_table_remove (live, &fr->addr))
        {
          if (fr->kind == TIDE_KIND_PYOBJECT)
            {
              g_hash_table_add (objects_freed, (gpointer) &fr->addr);
              n_objects_freed++;
            }
        }
      else if (h->type == TIDE_WIRE_FREE && fr->kind == TIDE_KIND_MALLOC
               && g_hash_table_contains (objects_freed, &fr->addr))
        n_freed_again++;
    }
  g_assert_cmpuint (n_objects, >=, 2000);
  g_assert_cmpuint (n_objects_freed, >=, 2000);
  g_assert_cmpuint (n_freed_again, ==, 0);
}

void
add_preload_block_tests (void)
{
  g_test_add ("/capture/preload/e2e/memo", Fixture, NULL,
              fixture_setup, test_memo, fixture_teardown);
  g_test_add ("/capture/preload/e2e/memo-unload", Fixture, NULL,
              fixture_setup, test_memo_unload, fixture_teardown);
  g_test_add ("/capture/preload/e2e/sampler-seeds", Fixture, NULL,
              fixture_setup, test_sampler_seeds, fixture_teardown);
  g_test_add ("/capture/preload/e2e/sampler-realloc", Fixture, NULL,
              fixture_setup, test_sampler_realloc, fixture_teardown);
  g_test_add ("/capture/preload/e2e/fold", Fixture, NULL,
              fixture_setup, test_fold, fixture_teardown);
  g_test_add ("/capture/preload/e2e/family/glibc", Fixture, "glibc",
              fixture_setup, test_family, fixture_teardown);
  g_test_add ("/capture/preload/e2e/family/jemalloc", Fixture, "jemalloc",
              fixture_setup, test_family, fixture_teardown);
  g_test_add ("/capture/preload/e2e/python-frees-once/pymalloc", Fixture, NULL,
              fixture_setup, test_python_frees_once, fixture_teardown);
  g_test_add ("/capture/preload/e2e/python-frees-once/malloc", Fixture, "malloc",
              fixture_setup, test_python_frees_once, fixture_teardown);
}
