/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What pymalloc's arenas hold free, with Debian's /usr/bin/python3 and no
 * torch: py-arenas.py keeps half of the small objects of each step (a size
 * class of its own per step) and frees the rest, in one process or in a
 * fork's child, or frees them all.
 *
 * The truth is CPython's own statistics (sys._debugmallocstats(): the
 * arenas' bytes less the bytes of the blocks in use), printed by the same
 * program in a run of its own without the profiler, since CPython prints
 * them only while pymalloc is its allocator.  Where the newest arena ends
 * differs between two runs (the interpreter's start-up, and whether an
 * arena's address lets it hold 63 or 64 pools), and its untouched pools
 * are free in both counts, so the growth over the steps may differ by one
 * arena; each step's level also by the start-up objects freed after the
 * hooks, which the recorder counts as used: two arenas.  The sampling's
 * own error is added in the default mode.
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "tide-format-bytes.h"
#include "tide-report.h"
#include "tide-report-rss.h"
#include "tide-schema.h"
#include "tide-test-util.h"

#define PYTHON      "/usr/bin/python3"
#define SCRIPT      TIDE_PYTHON_TESTS_DIR "/py-arenas.py"
#define STEPS       6
#define MIB         G_GINT64_CONSTANT (1048576)
/* 3.11's arena (64-bit), and a few pools of headers and rounding. */
#define ARENA       MIB
#define POOLS_SLACK (64 * 1024)
/* record's default mean bytes between samples. */
#define SAMPLE_BYTES 65536.0

typedef TideTestRecording Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  unused)
{
  tide_test_recording_init (f, "tide-py-arenas");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  unused)
{
  tide_test_recording_clear (f);
}

/* Runs @argv with a fixed hash seed and NAME=VALUE pairs of @extra_env;
 * returns its stdout, and its stderr in @err. */
static char *
run (const char * const *argv,
     const char * const *extra_env,
     char              **err)
{
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  int status = 0;

  env = g_environ_setenv (env, "PYTHONHASHSEED", "0", TRUE);
  for (guint i = 0; extra_env[i] != NULL; i += 2)
    env = g_environ_setenv (env, extra_env[i], extra_env[i + 1], TRUE);
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, err, &status,
                &error);
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("%s failed (%d): %s", argv[0], status, err != NULL ? *err : "");
  return out;
}

/* The number after "@key " on the line of step @k (-1: the last line). */
static gint64
printed (const char *out,
         gint        k,
         const char *key)
{
  g_autofree char *pattern = k >= 0 ? g_strdup_printf ("^step %d .*\\b%s (-?[0-9]+)", k, key)
                                    : g_strdup_printf ("^%s [0-9]+ ([0-9]+)$", key);
  g_autoptr(GRegex) regex = g_regex_new (pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;
  g_autofree char *value = NULL;

  if (!g_regex_match (regex, out, 0, &match))
    g_error ("no '%s' for step %d in the output: %s", key, k, out);
  value = g_match_info_fetch (match, 1);
  return g_ascii_strtoll (value, NULL, 10);
}

/* The free bytes of the arenas after each step, by CPython, without the
 * profiler.  The program makes the same objects at every run: each mode
 * is measured once and shared by the sub-tests that ask for it. */
static void
truth (const char *mode,
       gint64      free_bytes[STEPS])
{
  static GHashTable *measured;
  const char *argv[] = { PYTHON, SCRIPT, mode, "stats", NULL };
  g_autofree char *out = NULL;
  gint64 *known;

  if (measured == NULL)
    measured = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if ((known = g_hash_table_lookup (measured, mode)) == NULL)
    {
      out = run (argv, (const char *[]) { NULL }, NULL);
      known = g_new (gint64, STEPS);
      for (gint k = 0; k < STEPS; k++)
        known[k] = printed (out, k, "free");
      g_hash_table_insert (measured, g_strdup (mode), known);
    }
  memcpy (free_bytes, known, STEPS * sizeof (gint64));
}

/* tidemark record [@flag] -o TRACE -- python3 py-arenas.py @mode */
static void
record (Fixture            *f,
        const char         *flag,
        const char         *mode,
        const char * const *extra_env)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) argv = NULL;

  g_strv_builder_add_many (builder, TIDE_TIDEMARK_EXE, "record", "--force", "-o", f->path, NULL);
  if (flag != NULL)
    g_strv_builder_add (builder, flag);
  g_strv_builder_add_many (builder, "--", PYTHON, SCRIPT, mode, NULL);
  argv = g_strv_builder_end (builder);
  f->out = run ((const char * const *) argv, extra_env, &f->err);
  f->trace = tide_test_open_trace (f->path);
}

/* The value of @counter at the end of step "step @k", -1: none. */
static gint64
at_step (Fixture *f,
         gint     counter,
         gint     k)
{
  g_autofree char *sql = g_strdup_printf ("SELECT coalesce ((SELECT c.value FROM counters c,"
                                          " steps s WHERE s.label = 'step %d'"
                                          " AND c.process_id = s.process_id AND c.counter = %d"
                                          " AND c.ts_ns <= s.end_ns"
                                          " ORDER BY c.ts_ns DESC LIMIT 1), -1)", k, counter);

  return tide_test_query_int (f->trace, sql);
}

/* tidemark report TRACE @mode --format @format */
static char *
report (Fixture    *f,
        const char *mode,
        const char *format)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", f->path, mode, "--format", format, NULL };

  return run (argv, (const char *[]) { NULL }, NULL);
}

static const TideClassSuspect *
find_class_suspect (GPtrArray            *suspects,
                    TideClassSuspectKind  kind)
{
  for (guint i = 0; i < suspects->len; i++)
    if (((TideClassSuspect *) g_ptr_array_index (suspects, i))->kind == kind)
      return g_ptr_array_index (suspects, i);
  return NULL;
}

static GPtrArray *
class_suspects (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *suspects = tide_report_class_suspects (f->trace, &error);

  g_assert_no_error (error);
  return suspects;
}

/* The bytes live at the last step of the stack whose headline is
 * py-arenas.py's line that makes the objects. */
static gint64
objects_line_bytes (Fixture *f)
{
  gint line = tide_test_source_line (SCRIPT, "made = [bytes(size - BYTES_HEADER)");
  g_autoptr(GPtrArray) groups = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, NULL);
  gint64 bytes = -1;

  g_assert_nonnull (groups);
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);

      for (guint j = 0; j < g->frames->len; j++)
        {
          TideFrame *frame = g_ptr_array_index (g->frames, j);

          if (frame->kind != TIDE_FRAME_PYTHON)
            continue;
          if (frame->line == line && g_str_has_suffix (frame->file, "py-arenas.py"))
            {
              g_assert_cmpint (bytes, ==, -1);
              bytes = g->bytes;
            }
          break;
        }
    }
  return bytes;
}

/* The suspect of a fragmenting run, in the report (text, CSV, JSON) and
 * the summary. */
static const TideClassSuspect *
assert_fragmentation_suspect (Fixture   *f,
                              GPtrArray *suspects,
                              gint64     process_id)
{
  const TideClassSuspect *s = find_class_suspect (suspects, TIDE_CLASS_SUSPECT_PY_ARENA_FREE);
  g_autofree char *name = NULL;
  g_autofree char *end = NULL;
  g_autofree char *text = report (f, "--suspects", "text");
  g_autofree char *csv = report (f, "--suspects", "csv");
  g_autofree char *json = report (f, "--suspects", "json");
  g_autofree char *csv_cells = NULL;
  g_autofree char *json_fields = NULL;
  g_autofree char *text_line = NULL;

  g_assert_nonnull (s);
  g_assert_cmpint (s->process.id, ==, process_id);
  /* The suspects' rule looks for growth from the second step on. */
  g_assert_cmpint (s->growth_step, ==, 2);
  g_assert_cmpstr (tide_class_suspect_class (s), ==, "py_arena_free");
  end = tide_format_bytes (s->end_bytes);
  name = g_strdup_printf ("Python's allocator keeps %s free in its arenas", end);
  g_assert_cmpstr (s->name, ==, name);
  g_assert_nonnull (strstr (s->hint, "only when every object in it is freed"));
  g_assert_nonnull (strstr (s->hint, "fragmentation"));
  g_assert_nonnull (strstr (s->hint, "PYTHONMALLOC=malloc"));
  g_assert_nonnull (strstr (f->err, "\ntidemark: suspect: Python's allocator keeps "));
  text_line = g_strdup_printf ("\nclass: %s, ", s->name);
  g_assert_nonnull (strstr (text, text_line));
  g_assert_nonnull (strstr (text, s->hint));
  csv_cells = g_strdup_printf (",class,py_arena_free,%s,\"%s\"\n", s->name, s->hint);
  g_assert_nonnull (strstr (csv, csv_cells));
  json_fields = g_strdup_printf ("\"kind\":\"class\",\"class\":\"py_arena_free\",\"name\":\"%s\","
                                 "\"hint\":\"%s\"", s->name, s->hint);
  g_assert_nonnull (strstr (json, json_fields));
  return s;
}

/* Bytes of the arenas on pages not present by the end of row @k, as the
 * recorder read them with its private memory; -1: not read. */
static gint64
absent_at (GPtrArray *rows,
           gint       k)
{
  const TideStepRow *r = k >= 0 ? g_ptr_array_index (rows, k) : NULL;

  return r != NULL ? r->class_end[TIDE_STEP_PY_ARENA_ABSENT] : -1;
}

/* `report --rss`: each step's term is the change of the free bytes that
 * CPython counts, less that of those on pages not present, by its name in
 * text and its column in CSV.  A reading that the recorder took late,
 * while the program filled an arena, once left the term 1.3 MiB from the
 * free bytes' change. */
static void
assert_rss_terms (Fixture      *f,
                  const gint64  free_bytes[STEPS])
{
  g_autoptr(GPtrArray) rows = tide_report_job_steps (f->trace, NULL);
  g_autoptr(GArray) explanations = NULL;
  g_autofree char *csv = report (f, "--rss", "csv");
  g_autofree char *text = report (f, "--rss", "text");

  g_assert_nonnull (rows);
  g_assert_cmpuint (rows->len, ==, STEPS);
  explanations = tide_rss_explain_steps (rows);
  for (gint k = 1; k < STEPS; k++)
    {
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, k);
      /* A step whose private memory was not read at its end is told by
       * the next step that was, over both; over the first step too, from
       * the process's start, where nothing was free. */
      gint first = k - (e->last_step - e->first_step);
      gint64 absent_end = absent_at (rows, k), absent_start = absent_at (rows, first - 1);
      gint64 absent = absent_end < 0 ? 0 : absent_end - MAX (absent_start, 0);

      /* The last steps, when told up to the process's last reading, run
       * past what the program printed at its last step. */
      if (e->to_exit_read)
        continue;
      g_assert_cmpint (e->terms[TIDE_RSS_PY_ARENA_FREE], ==,
                       e->pending ? 0 : free_bytes[k] - (first > 0 ? free_bytes[first - 1] : 0) -
                                        absent);
    }
  g_assert_true (g_str_has_prefix (csv, "pid,role,steps_pid,step,label,base,base_delta_bytes,"
                                        "rss_delta_bytes,cow_bytes,heap_bytes,alloc_free_bytes,"
                                        "file_bytes,shmem_bytes,sharing_bytes,py_arena_free_bytes,"
                                        "unexplained_bytes,thread_stacks_bytes,lib_data_bytes,"
                                        "tidemark_own_bytes,py_unhooked_bytes,"
                                        "inherited_freed_bytes,first_step,"
                                        "pending,to_last_reading,heap_after_steps_bytes\n"));
  if (strstr (text, "Python arenas free +") == NULL)
    g_error ("no \"Python arenas free +\" in:\n%s", text);
}

/* --all: each step's free bytes are CPython's to within two arenas, the
 * growth over the steps to within one, and the suspect grows by it; the
 * objects the program kept are counted once, at the line that made them.
 * Counted at their requested sizes, the 261,000 kept objects would leave
 * 15 bytes each of their classes free: 2.9 MiB more growth. */
static void
test_fragment_all (Fixture       *f,
                   gconstpointer  unused)
{
  g_autoptr(GPtrArray) suspects = NULL;
  const TideClassSuspect *s;
  gint64 t[STEPS], e[STEPS];

  truth ("fragment", t);
  record (f, "--all", "fragment", (const char *[]) { NULL });
  for (gint k = 0; k < STEPS; k++)
    {
      e[k] = at_step (f, TIDE_COUNTER_PY_ARENA_FREE, k);
      g_test_message ("step %d: free %" G_GINT64_FORMAT ", CPython's %" G_GINT64_FORMAT, k,
                      e[k], t[k]);
      tide_test_assert_within (e[k], t[k], 2 * ARENA);
    }
  /* Half of 8 MiB freed a step: 4 MiB, at the objects' size classes. */
  for (gint k = 1; k < STEPS; k++)
    tide_test_assert_within (printed (f->out, k, "freed"), 4 * MIB, 1024);
  tide_test_assert_within (e[STEPS - 1] - e[0], t[STEPS - 1] - t[0], ARENA + POOLS_SLACK);

  /* What pymalloc had in use at the hooks, sent once: more than nothing,
   * less than the arenas then. */
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT count (*) FROM counters"
                                                  " WHERE counter = 32 AND process_id = 1"), ==, 1);
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT value FROM counters WHERE counter = 32"),
                   >, 0);
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT value FROM counters WHERE counter = 32"),
                   <, at_step (f, TIDE_COUNTER_PY_ARENAS, 0));
  suspects = class_suspects (f);
  s = assert_fragmentation_suspect (f, suspects, 1);
  g_assert_cmpint (s->end_bytes, ==, e[STEPS - 1]);
  g_assert_cmpint (s->growth_bytes, ==, e[STEPS - 1] - e[0]);
  g_assert_cmpfloat (s->bytes_per_step, ==, (double) (e[STEPS - 1] - e[0]) / (STEPS - 1));
  g_assert_cmpint (objects_line_bytes (f), ==, printed (f->out, -1, "kept"));
  assert_rss_terms (f, e);
}

/* Sampled, over three seeds: within one arena and four standard
 * deviations of the sampled estimate of the live objects, which is about
 * the square root of their bytes times the mean sampling interval. */
static void
test_fragment_sampled (Fixture       *f,
                       gconstpointer  unused)
{
  const char *seeds[] = { "1", "2", "3" };
  gint64 t[STEPS];

  truth ("fragment", t);
  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    {
      const char *env[] = { "TIDEMARK_SEED", seeds[i], NULL };
      g_autoptr(GPtrArray) suspects = NULL;
      const TideClassSuspect *s;
      gint64 slack;

      g_clear_object (&f->trace);
      g_clear_pointer (&f->out, g_free);
      g_clear_pointer (&f->err, g_free);
      record (f, NULL, "fragment", env);
      slack = ARENA + (gint64) (4 * sqrt ((double) printed (f->out, -1, "kept") * SAMPLE_BYTES));
      suspects = class_suspects (f);
      s = assert_fragmentation_suspect (f, suspects, 1);
      g_test_message ("seed %s: growth %" G_GINT64_FORMAT ", CPython's %" G_GINT64_FORMAT
                      ", slack %" G_GINT64_FORMAT, seeds[i], s->growth_bytes,
                      t[STEPS - 1] - t[0], slack);
      tide_test_assert_within (s->growth_bytes, t[STEPS - 1] - t[0], slack);
      tide_test_assert_within (s->end_bytes, t[STEPS - 1], slack + ARENA);
    }
}

/* A fork's child maps its parent's arenas with the objects in them: its
 * free bytes are CPython's to within two arenas from its first step on,
 * and grow into its own suspect. */
static void
test_fork (Fixture       *f,
           gconstpointer  unused)
{
  g_autoptr(GPtrArray) suspects = NULL;
  const TideClassSuspect *s;
  gint64 t[STEPS];

  truth ("fork", t);
  record (f, "--all", "fork", (const char *[]) { NULL });
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT count (*) FROM processes"), ==, 2);
  for (gint k = 1; k < STEPS; k++)
    {
      gint64 e = at_step (f, TIDE_COUNTER_PY_ARENA_FREE, k);

      g_test_message ("child's step %d: free %" G_GINT64_FORMAT ", CPython's %" G_GINT64_FORMAT,
                      k, e, t[k]);
      tide_test_assert_within (e, t[k], 2 * ARENA);
    }
  suspects = class_suspects (f);
  s = assert_fragmentation_suspect (f, suspects, 2);
  tide_test_assert_within (s->growth_bytes, t[STEPS - 1] - t[1], ARENA + POOLS_SLACK);
}

/* Everything freed: the arenas go back, nothing stays free in them, and
 * no suspect. */
static void
test_control (Fixture       *f,
              gconstpointer  unused)
{
  g_autoptr(GPtrArray) suspects = NULL;
  gint64 t[STEPS];

  truth ("control", t);
  record (f, "--all", "control", (const char *[]) { NULL });
  for (gint k = 1; k < STEPS; k++)
    {
      tide_test_assert_within (t[k], t[0], POOLS_SLACK);
      tide_test_assert_within (at_step (f, TIDE_COUNTER_PY_ARENA_FREE, k),
                     at_step (f, TIDE_COUNTER_PY_ARENA_FREE, 0), POOLS_SLACK);
      g_assert_cmpint (at_step (f, TIDE_COUNTER_PY_ARENAS, k), ==,
                       at_step (f, TIDE_COUNTER_PY_ARENAS, 0));
    }
  tide_test_assert_within (at_step (f, TIDE_COUNTER_PY_ARENA_FREE, STEPS - 1), t[STEPS - 1], 2 * ARENA);
  suspects = class_suspects (f);
  g_assert_null (find_class_suspect (suspects, TIDE_CLASS_SUSPECT_PY_ARENA_FREE));
  g_assert_null (strstr (f->err, "Python's allocator"));
}

/* PYTHONMALLOC=malloc: no arenas, so nothing free in them and no such
 * suspect, and the kept objects counted once, as under pymalloc. */
static void
test_pythonmalloc_malloc (Fixture       *f,
                          gconstpointer  unused)
{
  const char *env[] = { "PYTHONMALLOC", "malloc", NULL };
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GString) csv = g_string_new (NULL);

  record (f, "--all", "fragment", env);
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT count (*) FROM counters WHERE counter"
                                                  " IN (31, 32)"), ==, 0);
  G_STATIC_ASSERT (TIDE_COUNTER_PY_ARENA_FREE == 31 && TIDE_COUNTER_PY_UNHOOKED == 32);
  suspects = class_suspects (f);
  g_assert_null (find_class_suspect (suspects, TIDE_CLASS_SUSPECT_PY_ARENA_FREE));
  g_assert_cmpint (objects_line_bytes (f), ==, printed (f->out, -1, "kept"));
  rows = tide_report_job_steps (f->trace, NULL);
  g_assert_nonnull (rows);
  for (guint i = 0; i < rows->len; i++)
    g_assert_cmpint (((TideStepRow *) g_ptr_array_index (rows, i))->class_end[TIDE_STEP_PY_ARENA_FREE],
                     ==, -1);
}

/* Where the objects are not recorded as pymalloc serves them, there is no
 * figure and no such suspect, though the arenas grow as in the fragmenting
 * run: an interpreter that tracemalloc traces from its start (its objects
 * are not recorded) and pymalloc's debug hooks (-X dev: each block is
 * larger than the object asked for).  Sampled, as /python-arenas/fragment/sampled
 * finds the suspect that these must not. */
static void
test_not_pymalloc_itself (Fixture       *f,
                          gconstpointer  unused)
{
  const char *options[] = { "tracemalloc", "dev" };

  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-o", f->path, "--",
                             PYTHON, "-X", options[i], SCRIPT, "fragment", NULL };
      g_autoptr(GPtrArray) suspects = NULL;

      g_clear_object (&f->trace);
      out = run (argv, (const char *[]) { NULL }, &err);
      f->trace = tide_test_open_trace (f->path);
      g_assert_cmpint (tide_test_query_int (f->trace, "SELECT count (*) FROM counters"
                                                      " WHERE counter IN (31, 32)"), ==, 0);
      g_assert_cmpint (at_step (f, TIDE_COUNTER_PY_ARENAS, STEPS - 1), >,
                       at_step (f, TIDE_COUNTER_PY_ARENAS, 0) + 16 * MIB);
      suspects = class_suspects (f);
      g_assert_null (find_class_suspect (suspects, TIDE_CLASS_SUSPECT_PY_ARENA_FREE));
      g_assert_null (strstr (err, "Python's allocator"));
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) \
  g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/python-arenas/fragment/all", test_fragment_all);
  ADD ("/python-arenas/fragment/sampled", test_fragment_sampled);
  ADD ("/python-arenas/fork", test_fork);
  ADD ("/python-arenas/control", test_control);
  ADD ("/python-arenas/pythonmalloc-malloc", test_pythonmalloc_malloc);
  ADD ("/python-arenas/not-pymalloc-itself", test_not_pymalloc_itself);
#undef ADD
  return g_test_run ();
}
