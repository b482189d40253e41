/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Python objects through CPython's allocator API, with Debian's
 * /usr/bin/python3 and no torch: py-objects.py keeps small dicts from
 * log_metrics beside a churn function that keeps nothing.  The truth is
 * tracemalloc's, measured by the same program in a run of its own without
 * the profiler: tracemalloc keeps its tables outside what it traces, so
 * its figure holds none of its own overhead, and the recorded runs hold
 * none of tracemalloc's.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace.h"

#define PYTHON         "/usr/bin/python3"
#define SCRIPT         TIDE_PYTHON_TESTS_DIR "/py-objects.py"
#define FORK_SCRIPT    TIDE_PYTHON_TESTS_DIR "/py-fork-objects.py"
#define STEPS          10
#define SAMPLED_STEPS  20
/* 3.11's dict free list: the dicts (and their keys) that churn frees last
 * and log_metrics takes back without asking the allocator. */
#define DICT_FREELIST  80
/* pymalloc serves objects up to 512 bytes (SMALL_REQUEST_THRESHOLD). */
#define PYMALLOC_SMALL_MAX 512
/* Churn's size in a measuring run, where the test leaves it to the default. */
#define TRUTH_CHURN    "1000"
/* TideAllocKind of tide-wire.h, as SQL text. */
#define KIND_MALLOC    1
#define KIND_PYOBJECT  10
/* TIDE_COUNTER_PY_ARENAS, as SQL text. */
#define PY_ARENAS      30
G_STATIC_ASSERT (TIDE_COUNTER_PY_ARENAS == PY_ARENAS);

typedef TideTestRecording Fixture;

typedef struct
{
  double per_step;   /* bytes per step */
  gint64 growth;     /* bytes over the growth window */
  guint  n;          /* suspects */
} Share;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  tide_test_recording_init (f, "tide-pyobj");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tide_test_recording_clear (f);
}

/* Runs @argv with NAME=VALUE pairs added to the environment (a fixed hash
 * seed, so that every run makes the same objects); returns its stdout. */
static char *
run (const char * const *argv,
     const char * const *extra_env)
{
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status = 0;

  env = g_environ_setenv (env, "PYTHONHASHSEED", "0", TRUE);
  for (guint i = 0; extra_env[i] != NULL; i += 2)
    env = g_environ_setenv (env, extra_env[i], extra_env[i + 1], TRUE);
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                &error);
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("%s failed (%d): %s", argv[0], status, err);
  return out;
}

/* tracemalloc's bytes held by the lines of the keeping function
 * (log_metrics, or log_blobs) after the first step and after the last, as
 * printed by py-objects.py "tracemalloc". */
static void
parse_truth (const char *out,
             gint64     *first,
             gint64     *last)
{
  g_assert_cmpint (sscanf (out, "log_%*s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
                           first, last), ==, 2);
  g_assert_cmpint (*last, >, *first);
}

/* Bytes the keeping function keeps over steps 2..@steps, by tracemalloc,
 * without the profiler.  The program makes the same objects at every run
 * (PYTHONHASHSEED=0), and a tracemalloc run is the slowest of the suite:
 * each (steps, environment) is measured once and shared by the sub-tests
 * that ask for it.  Where @extra_env leaves churn's size to the default,
 * the measuring run churns TRUTH_CHURN dicts at a time: tracemalloc traces
 * every one of them, and what churn leaves to the keeping function (the
 * objects on CPython's free lists, 80 at most of a kind) is the same from
 * a hundred dicts up, so the figure moves by a few bytes, not the 10% that
 * a sampled estimate is held to. */
static gint64
truth_growth (guint               steps,
              const char * const *extra_env)
{
  static GHashTable *measured;
  g_autofree char *env_key = g_strjoinv (" ", (char **) extra_env);
  g_autofree char *key = g_strdup_printf ("%u %s", steps, env_key);
  g_autofree char *n = g_strdup_printf ("%u", steps);
  const char *argv[] = { PYTHON, SCRIPT, n, "tracemalloc", NULL };
  const char *env[8] = { "PY_OBJECTS_CHURN", TRUTH_CHURN };
  g_autofree char *out = NULL;
  gint64 first, last;
  gpointer growth;

  if (measured == NULL)
    measured = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if ((growth = g_hash_table_lookup (measured, key)) != NULL)
    return *(gint64 *) growth;
  /* Later pairs win: an environment that sizes churn keeps its size. */
  for (guint i = 0; extra_env[i] != NULL; i++)
    {
      g_assert_cmpuint (i, <, G_N_ELEMENTS (env) - 3);
      env[2 + i] = extra_env[i];
    }
  out = run (argv, env);
  parse_truth (out, &first, &last);
  g_hash_table_insert (measured, g_steal_pointer (&key), g_memdup2 (&(gint64) { last - first },
                                                                    sizeof (gint64)));
  return last - first;
}

static void
record (Fixture            *f,
        const char         *mode,
        guint               steps,
        const char * const *python_args,
        const char * const *extra_env)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *n = g_strdup_printf ("%u", steps);
  g_autofree char *out = NULL;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  g_ptr_array_add (argv, (char *) "record");
  g_ptr_array_add (argv, (char *) "--force");
  g_ptr_array_add (argv, (char *) "-q");
  if (mode != NULL)
    g_ptr_array_add (argv, (char *) mode);
  g_ptr_array_add (argv, (char *) "-o");
  g_ptr_array_add (argv, f->path);
  g_ptr_array_add (argv, (char *) "--");
  g_ptr_array_add (argv, (char *) PYTHON);
  for (guint i = 0; python_args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) python_args[i]);
  g_ptr_array_add (argv, (char *) SCRIPT);
  g_ptr_array_add (argv, n);
  g_ptr_array_add (argv, NULL);
  out = run ((const char * const *) argv->pdata, extra_env);
  g_assert_true (g_str_has_suffix (out, "done 10\n") || g_str_has_suffix (out, "done 20\n"));
}

/* The innermost Python frame's function of a group, or "". */
static const char *
headline_function (TideGroup *g)
{
  for (guint i = 0; i < g->frames->len; i++)
    {
      TideFrame *frame = g_ptr_array_index (g->frames, i);

      if (frame->kind == TIDE_FRAME_PYTHON)
        return frame->function;
    }
  return "";
}

/* The suspects whose headline is a Python frame of @prefix, added up. */
static Share
suspects_in (GPtrArray  *suspects,
             const char *prefix)
{
  Share share = { 0 };

  for (guint i = 0; i < suspects->len; i++)
    {
      TideGroup *g = g_ptr_array_index (suspects, i);

      if (!g_str_has_prefix (headline_function (g), prefix))
        continue;
      share.per_step += g->bytes_per_step;
      share.growth += g->growth_bytes;
      share.n++;
    }
  return share;
}

/* Each suspect's innermost frames and growth, for the log of a failure. */
static void
tell_suspects (GPtrArray *suspects)
{
  for (guint i = 0; i < suspects->len; i++)
    {
      TideGroup *g = g_ptr_array_index (suspects, i);
      g_autoptr(GString) frames = g_string_new (NULL);

      for (guint k = 0; k < g->frames->len && k < 8; k++)
        {
          TideFrame *frame = g_ptr_array_index (g->frames, k);

          g_string_append_printf (frames, " < %s:%d", frame->function ? frame->function : "?",
                                  frame->line);
        }
      g_test_message ("suspect %u: %.0f B/step since step %d, %" G_GINT64_FORMAT " B:%s", i + 1,
                      g->bytes_per_step, g->growth_step, g->growth_bytes, frames->str);
    }
}

static GPtrArray *
load_suspects (Fixture *f)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->path);
  GPtrArray *suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);

  g_assert_nonnull (suspects);
  return suspects;
}

static gint64
query (Fixture    *f,
       const char *sql)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->path);

  return tide_test_query_int (trace, sql);
}

/* Every suspect names a line of the program: none is an arena, which has
 * no stack. */
static void
assert_every_suspect_has_python (GPtrArray *suspects)
{
  for (guint i = 0; i < suspects->len; i++)
    g_assert_cmpstr (headline_function (g_ptr_array_index (suspects, i)), !=, "");
}

/* Records py-objects.py sampled with @seed and the NAME=VALUE pairs of
 * @extra_env (two at most) in its environment; the suspects of @function
 * must keep @truth bytes a step, within 10%.  Returns the suspects. */
static GPtrArray *
record_sampled_leak (Fixture            *f,
                     const char         *seed,
                     const char * const *extra_env,
                     const char         *function,
                     double              truth)
{
  const char *env[7] = { "TIDEMARK_SEED", seed };
  GPtrArray *suspects;
  Share leak;

  for (guint i = 0; extra_env[i] != NULL; i++)
    {
      g_assert_cmpuint (i, <, G_N_ELEMENTS (env) - 3);
      env[2 + i] = extra_env[i];
    }
  record (f, NULL, SAMPLED_STEPS, (const char *[]) { NULL }, env);
  suspects = load_suspects (f);
  leak = suspects_in (suspects, function);
  g_test_message ("seed %s: %s %.0f B/step in %u suspects, truth %.0f",
                  seed, function, leak.per_step, leak.n, truth);
  g_assert_cmpfloat (leak.per_step, >=, 0.9 * truth);
  g_assert_cmpfloat (leak.per_step, <=, 1.1 * truth);
  return suspects;
}

static const char *const seeds[] = { "1", "2", "3" };

/* Sampled, over three seeds: the leak within 10% of tracemalloc's figure
 * per step, churn no suspect, the arenas a class and no stack's. */
static void
test_sampled (Fixture       *f,
              gconstpointer  data)
{
  const char *pymalloc = data;  /* "malloc": PYTHONMALLOC=malloc */
  double truth = (double) truth_growth (SAMPLED_STEPS, (const char *[]) { NULL })
                 / (SAMPLED_STEPS - 1);

  for (guint s = 0; s < G_N_ELEMENTS (seeds); s++)
    {
      const char *env[] = { "PYTHONMALLOC", pymalloc != NULL ? pymalloc : "pymalloc", NULL };
      g_autoptr(GPtrArray) suspects = record_sampled_leak (f, seeds[s], env, "log_metrics", truth);

      g_assert_cmpuint (suspects_in (suspects, "churn").n, ==, 0);
      assert_every_suspect_has_python (suspects);
      g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = "
                                 G_STRINGIFY (KIND_PYOBJECT)), >, 0);
      /* Arenas under pymalloc; without it, only the interpreter's frame
       * stack chunks (16 KiB each), which CPython maps through its arena
       * allocator too.  Never rows of their own. */
      g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = 11"), ==, 0);
      if (pymalloc == NULL)
        g_assert_cmpint (query (f, "SELECT max (value) FROM counters WHERE counter = "
                                   G_STRINGIFY (PY_ARENAS)), >=, 20 << 20);
      else
        g_assert_cmpint (query (f, "SELECT max (value) FROM counters WHERE counter = "
                                   G_STRINGIFY (PY_ARENAS)), <, 1 << 20);
    }
}

/* Objects larger than pymalloc serves, which CPython's object allocator
 * passes on to malloc: each is seen once, by the object domain's wrapper
 * (whose call of the chained allocator keeps the malloc hook out), so
 * log_blobs's suspects hold what tracemalloc counts, not twice that, and
 * none of their blocks is a malloc block.  Sampled, over three seeds. */
static void
test_sampled_large (Fixture       *f,
                    gconstpointer  data)
{
  const char *large[] = { "PY_OBJECTS_LARGE", "1", NULL };
  double truth = (double) truth_growth (SAMPLED_STEPS, large) / (SAMPLED_STEPS - 1);

  for (guint s = 0; s < G_N_ELEMENTS (seeds); s++)
    {
      g_autoptr(GPtrArray) suspects =
        record_sampled_leak (f, seeds[s], large, "log_blobs", truth);

      g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = "
                                 G_STRINGIFY (KIND_MALLOC) " AND size = 633"), ==, 0);
    }
}

/* Lists grown by append, whose items CPython reallocs: each realloc ends
 * the old block's record and is sampled as an allocation of its size (a
 * recorded block that stayed recorded was counted once per realloc of its
 * history: 1.44 times the truth here).  Under pymalloc, a realloc that the
 * sampler takes moves its block out of the pools, where the free of each
 * reaches the profiler: log_rows drops as many lists as it keeps, so a
 * lost free would count them too.  Sampled, over three seeds. */
static void
test_sampled_grown (Fixture       *f,
                    gconstpointer  data)
{
  const char *pymalloc = data;  /* "malloc": PYTHONMALLOC=malloc */
  const char *grown[] = { "PY_OBJECTS_GROWN", "1",
                          "PYTHONMALLOC", pymalloc != NULL ? pymalloc : "pymalloc", NULL };
  double truth = (double) truth_growth (SAMPLED_STEPS, grown) / (SAMPLED_STEPS - 1);

  for (guint s = 0; s < G_N_ELEMENTS (seeds); s++)
    {
      g_autoptr(GPtrArray) suspects = record_sampled_leak (f, seeds[s], grown, "log_rows", truth);

      g_assert_cmpuint (suspects_in (suspects, "churn").n, ==, 0);
    }
}

/* The blocks by which sys.getallocatedblocks() fell when the child of
 * py-fork-objects.py deleted its parent's objects, as the parent printed. */
static gint64
freed_blocks (const char *out)
{
  gint64 freed = 0;

  g_assert_cmpint (sscanf (out, "freed %" G_GINT64_FORMAT, &freed), ==, 1);
  return freed;
}

/* A sampled object holds a place, a pool block where it would have been,
 * which its free lets go: in a fork's child too, where the free of an
 * object its parent made is not the child's to record.  So when the child
 * deletes the parent's 20,000 bytes objects, pymalloc's count of blocks
 * falls by one more for each of them that the parent sampled than it does
 * without the profiler. */
static void
test_fork_places (Fixture       *f,
                  gconstpointer  data)
{
  const char *plain_argv[] = { PYTHON, FORK_SCRIPT, NULL };
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "-o", f->path, "--",
                         PYTHON, FORK_SCRIPT, NULL };
  g_autofree char *plain = run (plain_argv, (const char *[]) { NULL });
  g_autofree char *recorded = run (argv, (const char *[]) { "TIDEMARK_SEED", "1", NULL });
  /* bytes(427): 460 bytes with its header, made between the two steps. */
  gint64 sampled = query (f, "SELECT count (*) FROM allocations a"
                             " JOIN steps b ON b.process_id = a.process_id AND b.label = 'before'"
                             " JOIN steps m ON m.process_id = a.process_id AND m.label = 'made'"
                             " WHERE a.kind = " G_STRINGIFY (KIND_PYOBJECT) " AND a.size = 460"
                             " AND a.alloc_ns > b.end_ns AND a.alloc_ns <= m.end_ns");

  g_test_message ("freed %" G_GINT64_FORMAT " blocks plain, %" G_GINT64_FORMAT
                  " recorded; %" G_GINT64_FORMAT " sampled", freed_blocks (plain),
                  freed_blocks (recorded), sampled);
  g_assert_cmpint (sampled, >, 0);
  g_assert_cmpint (freed_blocks (recorded), ==, freed_blocks (plain) + sampled);
}

/* Recorded with every object, churn builds 10,000 dicts at a time rather
 * than 60,000: far more than the dict free list holds, which is all that
 * those recordings need of it, at a fraction of their cost.  The
 * tracemalloc-owner test churns alike, to share their truth. */
static const char *const ALL_CHURN_ENV[] = { "PY_OBJECTS_CHURN", "10000", NULL };

/* --all: every object of log_metrics, to the byte.  tracemalloc gives an
 * object that a free list hands back the traceback of the line that took
 * it (CPython tells it so in _Py_NewReference); an allocator hook sees no
 * such reuse, so the dicts that churn freed last and log_metrics took
 * back count at churn's line: at most the dict free list each step. */
static void
test_all (Fixture       *f,
          gconstpointer  data)
{
  const char *pymalloc = data;
  gint64 truth = truth_growth (STEPS, ALL_CHURN_ENV);
  const char *env[] = { ALL_CHURN_ENV[0], ALL_CHURN_ENV[1],
                        "PYTHONMALLOC", pymalloc != NULL ? pymalloc : "pymalloc", NULL };
  g_autoptr(GPtrArray) suspects = NULL;
  Share leak, churn;

  record (f, "--all", STEPS, (const char *[]) { NULL }, env);
  suspects = load_suspects (f);
  leak = suspects_in (suspects, "log_metrics");
  churn = suspects_in (suspects, "churn");
  g_test_message ("log_metrics %" G_GINT64_FORMAT " B, churn %" G_GINT64_FORMAT
                  " B, tracemalloc %" G_GINT64_FORMAT " B", leak.growth, churn.growth, truth);
  g_assert_cmpint (leak.growth + churn.growth, ==, truth);
  /* A dict and its keys: 64 and 120 bytes on 3.11; 200 leaves room. */
  g_assert_cmpint (churn.growth, <=, (gint64) (STEPS - 1) * DICT_FREELIST * 200);
  assert_every_suspect_has_python (suspects);
}

/* Started with -X tracemalloc, the interpreter is tracemalloc's: what it
 * counts log_metrics keeping is what it counts without the profiler, no
 * object is ours, and churn is still no suspect (its arenas are
 * plumbing).  Its figures may differ by the one small object that reading
 * Python frames makes CPython keep (a code object's line table): counted
 * at log_metrics when the first sample there falls after step 1, which
 * the random sampling decides, so the growth may exceed the truth by
 * less than pymalloc's largest small object, never fall short of it.
 * churn's line does keep a little: tracemalloc's entries (malloc'd) for
 * the dicts it freed onto the free list, which log_metrics took back, a
 * few KiB a step.  Sampled, that is a sample or none most runs, and once
 * in a few hundred four, past the suspect floor: the sampler's seed is
 * fixed, so that every run makes the same draw. */
static void
test_tracemalloc_owner (Fixture       *f,
                        gconstpointer  data)
{
  g_autofree char *n = g_strdup_printf ("%u", STEPS);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "-o", f->path, "--",
                         PYTHON, "-X", "tracemalloc", SCRIPT, n, "tracemalloc", NULL };
  const char *env[] = { ALL_CHURN_ENV[0], ALL_CHURN_ENV[1], "TIDEMARK_SEED", "1", NULL };
  g_autofree char *traced = run (argv, env);
  g_autoptr(GPtrArray) suspects = NULL;
  gint64 first, last, truth;

  parse_truth (traced, &first, &last);
  truth = truth_growth (STEPS, ALL_CHURN_ENV);
  g_assert_cmpint (last - first, >=, truth);
  g_assert_cmpint (last - first, <, truth + PYMALLOC_SMALL_MAX);
  g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = "
                             G_STRINGIFY (KIND_PYOBJECT)), ==, 0);
  suspects = load_suspects (f);
  tell_suspects (suspects);
  g_assert_cmpuint (suspects_in (suspects, "churn").n, ==, 0);
  assert_every_suspect_has_python (suspects);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, fn) \
  g_test_add (path, Fixture, data, fixture_setup, fn, fixture_teardown)
  ADD ("/python-objects/sampled", NULL, test_sampled);
  ADD ("/python-objects/sampled/pythonmalloc-malloc", "malloc", test_sampled);
  ADD ("/python-objects/sampled/larger-than-pymalloc", NULL, test_sampled_large);
  ADD ("/python-objects/sampled/grown-by-realloc", NULL, test_sampled_grown);
  ADD ("/python-objects/sampled/grown-by-realloc/pythonmalloc-malloc", "malloc",
       test_sampled_grown);
  ADD ("/python-objects/sampled/fork-lets-places-go", NULL, test_fork_places);
  ADD ("/python-objects/all", NULL, test_all);
  ADD ("/python-objects/all/pythonmalloc-malloc", "malloc", test_all);
  ADD ("/python-objects/tracemalloc-owner", NULL, test_tracemalloc_owner);
#undef ADD
  return g_test_run ();
}
