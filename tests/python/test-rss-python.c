/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The RSS by class of Python jobs, end to end: `tidemark record
 * --sync-steps` on the scripts of this folder (Debian's /usr/bin/python3,
 * numpy and python3-torch), read back from the trace and from the
 * record summary.  Skipped (exit 77) only when /usr/bin/python3 cannot
 * import torch and numpy.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tide-report-rss.h"
#include "tide-schema.h"
#include "tide-test-util.h"

#define PYTHON   "/usr/bin/python3"
#define KIB      G_GINT64_CONSTANT (1024)
#define MIB      G_GINT64_CONSTANT (1048576)
/* TIDE_COUNTER_COW_BYTES, as SQL text. */
#define TIDE_COUNTER_COW_BYTES_VALUE 24
G_STATIC_ASSERT (TIDE_COUNTER_COW_BYTES == TIDE_COUNTER_COW_BYTES_VALUE);
/* TIDE_COUNTER_PY_UNHOOKED, as the SQL of test_fork_arenas() writes it. */
G_STATIC_ASSERT (TIDE_COUNTER_PY_UNHOOKED == 32);

typedef TideTestRecording Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  unused)
{
  tide_test_recording_init (f, "tide-rss-python");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  unused)
{
  tide_test_recording_clear (f);
}

/* Runs `tidemark record` by @argv, which must succeed, and opens its
 * trace; @what names the recording in the error. */
static void
run_record (Fixture            *f,
            const char * const *argv,
            const char         *what)
{
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &f->out, &f->err,
                &status, &error);
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("recording %s failed (%d): %s", what, status, f->err);
  f->trace = tide_test_open_trace (f->path);
}

/* tidemark record --sync-steps -o TRACE -- python3 SCRIPT ARG */
static void
record (Fixture    *f,
        const char *script,
        const char *arg)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, script, NULL);
  g_autofree char *what = g_strdup_printf ("%s %s", script, arg);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "--sync-steps", "-o", f->path,
                         "--", PYTHON, path, arg, NULL };

  run_record (f, argv, what);
}

/* tidemark record -o TRACE -- python3 SCRIPT: without --sync-steps, as a
 * user records, so that the recorder decides at which step ends it reads
 * the private memory. */
static void
record_unsynced (Fixture    *f,
                 const char *script)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, script, NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-o", f->path, "--", PYTHON,
                         path, NULL };

  run_record (f, argv, script);
}

/* tidemark record --torch -o TRACE -- python3 SCRIPT, as a user records a
 * PyTorch job: its DataLoader workers are named. */
static void
record_torch (Fixture    *f,
              const char *script)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, script, NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "--torch", "-o", f->path, "--",
                         PYTHON, path, NULL };

  run_record (f, argv, script);
}

/* The last value of @counter that @process_id had by the end of the
 * first process's step @label. */
static gint64
at_step (Fixture    *f,
         gint64      process_id,
         gint        counter,
         const char *label)
{
  g_autofree char *sql = g_strdup_printf ("SELECT c.value FROM counters c, steps s"
                                          " WHERE s.process_id = 1 AND s.label = '%s'"
                                          " AND c.process_id = %" G_GINT64_FORMAT
                                          " AND c.counter = %d AND c.ts_ns <= s.end_ns"
                                          " ORDER BY c.ts_ns DESC LIMIT 1",
                                          label, process_id, counter);

  return tide_test_query_int (f->trace, sql);
}

/* The value that the target printed after @key. */
static gint64
printed (Fixture    *f,
         const char *key)
{
  g_autofree char *pattern = g_strdup_printf ("^%s (-?[0-9]+)$", key);
  g_autoptr(GRegex) regex = g_regex_new (pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;
  g_autofree char *value = NULL;

  if (!g_regex_match (regex, f->out, 0, &match))
    g_error ("no '%s' in the output: %s", key, f->out);
  value = g_match_info_fetch (match, 1);
  return g_ascii_strtoll (value, NULL, 10);
}

/* The line of rss-cow.py that builds the list's floats. */
static gint
floats_line (void)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, "rss-cow.py", NULL);

  return tide_test_source_line (path, "return [float(i) for i in range(N)]");
}

/* The job's peak in the record summary, in MiB. */
static double
summary_peak_pss (Fixture *f)
{
  g_autoptr(GRegex) regex = g_regex_new ("^tidemark: trace .*: [0-9]+ processes, [0-9]+ steps, "
                                         "job peak PSS ([0-9.]+) MiB on the host\n", G_REGEX_MULTILINE, 0,
                                         NULL);
  g_autoptr(GMatchInfo) match = NULL;
  g_autofree char *mib = NULL;

  if (!g_regex_match (regex, f->err, 0, &match))
    g_error ("no job peak PSS in the summary: %s", f->err);
  mib = g_match_info_fetch (match, 1);
  return g_ascii_strtod (mib, NULL);
}

/* The parent and its worker share the parent's pages, so the summary's
 * job peak (PSS summed) is well below their RSS summed, and above what
 * either holds alone. */
static void
assert_pss_below_rss (Fixture    *f,
                      const char *label)
{
  double pss = summary_peak_pss (f) * MIB;
  gint64 parent = at_step (f, 1, TIDE_COUNTER_RSS, label);
  gint64 child = at_step (f, 2, TIDE_COUNTER_RSS, label);

  g_assert_cmpfloat (pss, <, 0.9 * (parent + child));
  g_assert_cmpfloat (pss, >, MAX (parent, child));
}

/* The worker (process 2) read every float of the parent's 4M-item list:
 * the copy-on-write it shows over that step is the growth of its own
 * Private_Dirty within 10%, and the parent's line that made the floats is
 * named, in the report and in the record summary. */
static void
test_cow_list (Fixture       *f,
               gconstpointer  unused)
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *expected_source = g_strdup_printf ("rss-cow.py:%d (make_list.<locals>.<listcomp>)",
                                                      floats_line ());
  g_autofree char *summary = NULL;
  g_autofree char *source_bytes = NULL;
  gint64 growth, copied;
  TideCowRow *row;

  record (f, "rss-cow.py", "list");
  growth = printed (f, "private_dirty_growth");
  copied = at_step (f, 2, TIDE_COUNTER_COW_BYTES, "touched") -
           at_step (f, 2, TIDE_COUNTER_COW_BYTES, "forked");
  /* 4M floats of 24 bytes: 92 MiB of objects, in pages of their arenas. */
  g_assert_cmpint (growth, >, 90 * MIB);
  g_assert_cmpint (copied, >=, growth - growth / 10);
  g_assert_cmpint (copied, <=, growth + growth / 10);

  rows = tide_report_cow (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 1);
  row = g_ptr_array_index (rows, 0);
  g_assert_cmpint (row->process.id, ==, 2);
  g_assert_cmpstr (row->source, ==, expected_source);
  /* The list's floats are most of what the worker copied: all but a tenth
   * at the last attribution, which lags the count by at most an eighth
   * (tide-capture-process-cow.c). */
  g_assert_cmpint (row->source_bytes, >=, copied * 8 / 10);
  source_bytes = tide_format_bytes (row->source_bytes);
  summary = g_strdup_printf ("copied on write, %s of it from the parent's blocks allocated at "
                             "%s\n", source_bytes, expected_source);
  g_assert_nonnull (strstr (f->err, summary));
  assert_pss_below_rss (f, "touched");
}

/* The same numbers in one numpy array: reading it writes one object's
 * reference count, so the worker copies next to nothing. */
static void
test_cow_numpy (Fixture       *f,
                gconstpointer  unused)
{
  g_autofree char *array_line = NULL;
  gint64 copied;

  record (f, "rss-cow.py", "numpy");
  copied = at_step (f, 2, TIDE_COUNTER_COW_BYTES, "touched");
  g_assert_cmpint (copied, >=, 0);
  g_assert_cmpint (copied, <, 4 * MIB);
  g_assert_cmpint (printed (f, "private_dirty_growth"), <, 4 * MIB);
  /* The array's own pages are not copied.  (What numpy's import made is
   * named by the line that imported it, the user's: a few reference
   * counts written on its pages may be.) */
  array_line = g_strdup_printf (" of it from the parent's blocks allocated at "
                                "rss-cow.py:%d ", tide_test_source_line ("tests/python/rss-cow.py",
                                                                         "numpy.arange("));
  g_assert_null (strstr (f->err, array_line));
}

static gint64
class_suspect_count (GPtrArray            *suspects,
                     TideClassSuspectKind  kind)
{
  gint64 n = 0;

  for (guint i = 0; i < suspects->len; i++)
    n += ((TideClassSuspect *) g_ptr_array_index (suspects, i))->kind == kind;
  return n;
}

/* The worker reads a quarter of the list in each of four steps: its
 * copy-on-write grows a quarter of the floats' pages a step, which makes
 * it a suspect, with what to do about it. */
static void
test_cow_steady (Fixture       *f,
                 gconstpointer  unused)
{
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GError) error = NULL;
  gint64 total = 0;
  TideClassSuspect *s;

  record (f, "rss-cow.py", "steady");
  total = at_step (f, 2, TIDE_COUNTER_COW_BYTES, "quarter 4") -
          at_step (f, 2, TIDE_COUNTER_COW_BYTES, "forked");
  suspects = tide_report_class_suspects (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  s = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (s->kind, ==, TIDE_CLASS_SUSPECT_COW);
  g_assert_cmpint (s->process.id, ==, 2);
  /* Step 2 is "forked", the worker's first. */
  g_assert_cmpint (s->growth_step, ==, 3);
  g_assert_cmpfloat (s->bytes_per_step, >=, 0.9 * total / 4);
  g_assert_cmpfloat (s->bytes_per_step, <=, 1.1 * total / 4);
  g_assert_cmpint (total, >, 90 * MIB);
  g_assert_true (g_str_has_prefix (s->name, "copy-on-write in python3 "));
  g_assert_nonnull (strstr (s->hint, "numpy arrays or tensors"));
  g_assert_nonnull (strstr (f->err, "\ntidemark: suspect: copy-on-write in python3 "));
}

/* Five steps, each leaving two more threads' arenas holding 16 MiB that
 * they freed: 32 MiB a step more that glibc keeps free, a suspect whose
 * hint names the remedies.  The unexplained rest of each step stays under
 * a megabyte. */
static void
test_allocator (Fixture       *f,
                gconstpointer  unused)
{
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GError) error = NULL;
  TideClassSuspect *s;

  record (f, "rss-arenas.py", NULL);
  g_assert_cmpstr (f->out, ==, "10\n");
  for (gint k = 2; k <= 5; k++)
    {
      g_autofree char *now = g_strdup_printf ("threads %d", 2 * k);
      g_autofree char *before = g_strdup_printf ("threads %d", 2 * (k - 1));
      gint64 grown = at_step (f, 1, TIDE_COUNTER_ALLOC_FREE, now) -
                     at_step (f, 1, TIDE_COUNTER_ALLOC_FREE, before);

      g_assert_cmpint (grown, >=, 32 * MIB);
      g_assert_cmpint (grown, <=, 32 * MIB + MIB / 4);
    }
  suspects = tide_report_class_suspects (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpint (class_suspect_count (suspects, TIDE_CLASS_SUSPECT_ALLOC_FREE), ==, 1);
  g_assert_cmpint (class_suspect_count (suspects, TIDE_CLASS_SUSPECT_COW), ==, 0);
  s = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (s->growth_step, ==, 2);
  g_assert_cmpfloat (s->bytes_per_step, >=, 32 * MIB);
  g_assert_cmpfloat (s->bytes_per_step, <=, 32 * MIB + MIB / 4);
  g_assert_true (g_regex_match_simple ("^glibc arenas keep 16[0-9]\\.[0-9]{2} MiB free$", s->name,
                                       0, 0));
  g_assert_nonnull (strstr (s->hint, "MALLOC_ARENA_MAX=2"));
  g_assert_nonnull (strstr (s->hint, "malloc_trim(0)"));
  g_assert_nonnull (strstr (s->hint, "jemalloc"));
  g_assert_true (g_regex_match_simple ("\ntidemark: suspect: glibc arenas keep 16[0-9]\\.[0-9]{2} "
                                       "MiB free, \\+32\\.[0-9]{2} MiB/step since step 2, in "
                                       "[^\n]+ \\(pid [0-9]+, host\\)\n",
                                       f->err, 0, 0));
}

/* A tensor moved to shared memory by share_memory_(): 16 MiB of shmem in
 * its step; then a 32 MiB file mapped and read: 32 MiB file-backed. */
static void
test_shmem_and_file (Fixture       *f,
                     gconstpointer  unused)
{
  gint64 shmem, file;

  record (f, "rss-torch.py", f->dir);
  g_assert_cmpstr (f->out, ==, "True 8192\n");
  shmem = at_step (f, 1, TIDE_COUNTER_RSS_SHMEM, "shmem") -
          at_step (f, 1, TIDE_COUNTER_RSS_SHMEM, "baseline");
  g_assert_cmpint (shmem, >=, 16 * MIB);
  g_assert_cmpint (shmem, <=, 16 * MIB + MIB / 4);
  g_assert_cmpint (at_step (f, 1, TIDE_COUNTER_RSS_SHMEM, "file"), ==,
                   at_step (f, 1, TIDE_COUNTER_RSS_SHMEM, "shmem"));
  file = at_step (f, 1, TIDE_COUNTER_RSS_FILE, "file") -
         at_step (f, 1, TIDE_COUNTER_RSS_FILE, "shmem");
  g_assert_cmpint (file, >=, 32 * MIB);
  g_assert_cmpint (file, <=, 32 * MIB + MIB);
}

/* rss-steady.py keeps 20 MiB of touched heap a step.  Each step's
 * explanation (or, after steps whose private memory was not read at their
 * end, the explanation of the steps it spans) gives 20 MiB of private
 * memory a step, all of it heap, within 2 MiB, and at most 2 MiB
 * unexplained; the last steps are explained by the reading that the
 * process's exit waits for, with what it freed after them said apart;
 * the summary finds no growth beyond the heap.  Before steps were
 * spanned, three steps in four read "0 B private: heap +20 MiB,
 * unexplained -20 MiB" and the fourth "+94 MiB private: heap +20 MiB,
 * unexplained +74 MiB". */
static void
test_steady_heap (Fixture       *f,
                  gconstpointer  unused)
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GArray) explanations = NULL;
  g_autoptr(GPtrArray) summaries = NULL;
  const TideProcessSummary *summary;
  TideJobPeak peak;
  guint n_read = 0;

  record_unsynced (f, "rss-steady.py");
  g_assert_cmpstr (f->out, ==, "kept 25\n");
  rows = tide_report_job_steps (f->trace, NULL);
  g_assert_nonnull (rows);
  g_assert_cmpuint (rows->len, ==, 25);
  explanations = tide_rss_explain_steps (rows);
  for (guint i = 1; i < rows->len; i++)
    {
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);
      g_autofree char *line = tide_rss_explanation_describe (e);
      gint64 truth = 20 * MIB * (e->last_step - e->first_step + 1);

      g_test_message ("step %u: %s", i + 1, line);
      g_assert_true (e->private_base);
      /* Every step is explained: a pending one by a later step's reading,
       * the last ones by the reading that the recorder takes as the
       * process exits. */
      if (e->pending)
        {
          g_assert_cmpint (e->spanned_by, >, e->last_step);
          continue;
        }
      /* A process's first step end waits for its reading: no span
       * reaches back to it. */
      g_assert_cmpint (e->first_step, >, 1);
      n_read++;
      /* Up to the process's last reading, taken at its exit: main() has
       * returned by then, and its 25 blocks are freed, after the steps,
       * which the heap term says apart. */
      if (e->to_exit_read)
        {
          truth -= 25 * 20 * MIB;
          g_assert_cmpint (ABS (e->heap_after_steps + 25 * 20 * MIB), <=, 2 * MIB);
          g_assert_nonnull (strstr (line, " over the steps, -500."));
        }
      g_assert_cmpint (ABS (e->base_delta - truth), <=, 2 * MIB);
      g_assert_cmpint (ABS (e->terms[TIDE_RSS_HEAP] - truth), <=, 2 * MIB);
      g_assert_cmpint (ABS (e->terms[TIDE_RSS_UNEXPLAINED]), <=, 2 * MIB);
    }
  /* One at least while the job grows (by an eighth: a snapshot as soon
   * as the budget allows), and the last. */
  g_assert_cmpuint (n_read, >=, 2);
  g_assert_null (strstr (f->err, "growth beyond the heap"));

  /* Its RSS grew by the 25 blocks over its steps, and the interpreter's
   * start: not by what was left once main() had freed them. */
  summaries = tide_report_processes (f->trace, NULL);
  g_assert_nonnull (summaries);
  g_assert_cmpuint (summaries->len, ==, 1);
  summary = g_ptr_array_index (summaries, 0);
  g_assert_cmpint (summary->rss_growth, >=, 25 * 20 * MIB);
  g_assert_cmpint (summary->rss_growth, <=, 25 * 20 * MIB + 32 * MIB);

  /* PSS is read a few times a second: the job's peak is its highest
   * reading, and says how much the RSS rose after it, where by more than
   * a 32nd of it, so that the two reach what the job kept. */
  g_assert_true (tide_report_job_peak (f->trace, &peak, NULL));
  g_test_message ("job peak PSS %" G_GINT64_FORMAT ", RSS rose %" G_GINT64_FORMAT " after",
                  peak.bytes, peak.rise_bytes);
  g_assert_cmpint (peak.bytes + peak.rise_bytes, >=, 25 * 20 * MIB - 20 * MIB);
  g_assert_true (peak.rise_bytes == 0 || strstr (f->err, "its RSS rose") != NULL);
}

/* rss-cow-exit.py: a fork's child that copies 40 MiB on write and exits
 * 50 ms later, between two of the poll's readings: its last reading, taken
 * as it exits, gives its copy-on-write within 10%. */
static void
test_cow_at_exit (Fixture       *f,
                  gconstpointer  unused)
{
  gint64 copied, measured;

  record_unsynced (f, "rss-cow-exit.py");
  copied = printed (f, "copied");
  g_assert_cmpint (printed (f, "status"), ==, 0);
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT count (*) FROM processes"), ==, 2);
  measured = tide_test_query_int (f->trace, "SELECT value FROM counters WHERE process_id = 2"
                                            " AND counter = " G_STRINGIFY (TIDE_COUNTER_COW_BYTES_VALUE)
                                            " ORDER BY ts_ns DESC LIMIT 1");
  g_test_message ("copied %" G_GINT64_FORMAT " B, measured %" G_GINT64_FORMAT " B", copied,
                  measured);
  g_assert_cmpint (measured, >=, copied * 9 / 10);
  g_assert_cmpint (measured, <=, copied * 11 / 10);
}

/* loader-cow.py: two short-lived DataLoader workers each sum half of a
 * list of 4M Python floats, which copies the pages of its floats on write
 * (their reference counts).  Each worker's copy-on-write, read as it
 * exits, is within 10% of its Private_Dirty at its peak, as a watcher in
 * a run of the job without the profiler read it every few milliseconds.
 * A worker was once read a single time, 0.4 s before it exited: 33 to
 * 78 MiB of its 134. */
static void
test_cow_loader_watcher (Fixture       *f,
                         gconstpointer  unused)
{
  g_autofree char *script = g_build_filename (TIDE_PYTHON_TESTS_DIR, "loader-cow.py", NULL);
  const char *plain[] = { PYTHON, script, "watch", NULL };
  g_autofree char *watched = tide_test_spawn_ok (plain);
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GError) error = NULL;
  guint seen = 0;

  record_torch (f, "loader-cow.py");
  rows = tide_report_cow (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2);
  for (guint i = 0; i < rows->len; i++)
    {
      const TideCowRow *row = g_ptr_array_index (rows, i);
      g_autofree char *key = NULL;
      g_autoptr(GRegex) regex = NULL;
      g_autoptr(GMatchInfo) match = NULL;
      g_autofree char *value = NULL;
      gint64 peak;
      gint worker;

      g_assert_true (g_str_has_prefix (row->process.role, "DataLoader worker "));
      worker = atoi (row->process.role + strlen ("DataLoader worker "));
      g_assert_cmpint (worker, >=, 0);
      g_assert_cmpint (worker, <, 2);
      seen |= 1u << worker;
      key = g_strdup_printf ("^peak %d ([0-9]+)$", worker);
      regex = g_regex_new (key, G_REGEX_MULTILINE, 0, NULL);
      if (!g_regex_match (regex, watched, 0, &match))
        g_error ("no peak of worker %d in: %s", worker, watched);
      value = g_match_info_fetch (match, 1);
      peak = g_ascii_strtoll (value, NULL, 10);
      g_test_message ("worker %d: copied %" G_GINT64_FORMAT " B, Private_Dirty peak %"
                      G_GINT64_FORMAT " B without the profiler", worker, row->copied_bytes, peak);
      g_assert_cmpint (peak, >=, 48 * MIB);
      g_assert_cmpint (row->copied_bytes, >=, peak * 9 / 10);
      g_assert_cmpint (row->copied_bytes, <=, peak * 11 / 10);
    }
  g_assert_cmpuint (seen, ==, 3);
}

/* `rss-fork-arenas.py`: a worker forked from a parent whose Python arenas
 * hold room that it freed.  That room is on pages the worker shares: no
 * explanation of the worker's private memory counts it, at its first step
 * or up to its last reading.  The worker only waits: its private memory
 * since the fork is what it copied, the pages that the fork handlers
 * copied before the recorder met it included (300 KiB were unexplained
 * without them), and the preload's own pages that it touched first, its
 * HELLO's among them (240 KiB were unexplained while the term counted
 * from a first value sent after them); what is left is the preload's
 * flusher thread, made for the child before that. */
static void
test_fork_arenas (Fixture       *f,
                  gconstpointer  unused)
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GArray) explanations = NULL;
  gint64 worker_id, unhooked;
  guint n_worker = 0;

  record (f, "rss-fork-arenas.py", NULL);
  g_assert_cmpstr (f->out, ==, "kept 1000000\n");
  worker_id = tide_test_query_int (f->trace, "SELECT id FROM processes WHERE parent_id > 0");
  unhooked = tide_test_query_int (f->trace, "SELECT value FROM counters WHERE process_id = 1"
                                            " AND counter = 32");
  g_assert_cmpint (unhooked, >, 64 * KIB);
  g_assert_cmpint (at_step (f, 1, TIDE_COUNTER_PY_ARENA_FREE, "made"), >=, 16 * MIB);
  rows = tide_report_job_steps (f->trace, NULL);
  g_assert_nonnull (rows);
  explanations = tide_rss_explain_steps (rows);
  for (guint i = 0; i < rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);
      g_autofree char *line = NULL;

      /* The parent's objects from before the hooks, in its first row: what
       * its pymalloc said it had in use; none in the worker's, which
       * inherited them on shared pages. */
      if (r->process.id != worker_id && !e->pending && r->number == 1)
        g_assert_cmpint (e->terms[TIDE_RSS_PY_UNHOOKED], ==, unhooked);
      if (r->process.id != worker_id || e->pending)
        continue;
      g_assert_cmpint (e->terms[TIDE_RSS_PY_UNHOOKED], ==, 0);
      line = tide_rss_explanation_describe (e);
      g_test_message ("step %d: %s", r->number, line);
      n_worker++;
      g_assert_cmpint (ABS (e->terms[TIDE_RSS_PY_ARENA_FREE]), <=, MIB);
      g_assert_cmpint (ABS (e->terms[TIDE_RSS_UNEXPLAINED]), <=, 128 * KIB);
    }
  g_assert_cmpuint (n_worker, ==, 2);
}

int
main (int    argc,
      char **argv)
{
  if (!tide_test_python_imports (PYTHON, "torch") || !tide_test_python_imports (PYTHON, "numpy"))
    {
      g_print ("1..0 # SKIP " PYTHON " cannot import torch and numpy\n");
      return 77;
    }
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/rss-python/cow/list", test_cow_list);
  ADD ("/rss-python/cow/numpy", test_cow_numpy);
  ADD ("/rss-python/cow/steady", test_cow_steady);
  ADD ("/rss-python/cow/at-exit", test_cow_at_exit);
  ADD ("/rss-python/allocator", test_allocator);
  ADD ("/rss-python/shmem-and-file", test_shmem_and_file);
  ADD ("/rss-python/steady-heap", test_steady_heap);
  ADD ("/rss-python/cow/loader-watcher", test_cow_loader_watcher);
  ADD ("/rss-python/fork-arenas", test_fork_arenas);
#undef ADD
  return g_test_run ();
}
