/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record` end to end: the real command, the real preload library,
 * the test programs of tests/targets with their known leaks, and the trace
 * read back through the storage queries that `tidemark report` prints; and
 * `tidemark export` of such a trace.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TIDE_HAVE_RENDER
#include "tide-test-png.h"
#endif

#include "preload-target.h"
#include "tide-plumbing.h"
#include "tide-report.h"
#include "tide-process-end.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace.h"

#define MiB (1024 * 1024)

typedef struct
{
  char *dir;
  char *trace;
} Fixture;

typedef struct
{
  int   status;   /* exit status, or 128 + signal */
  char *out;
  char *err;
} Run;

static void
run_clear (Run *run)
{
  g_free (run->out);
  g_free (run->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static char *
target_path (const char *name)
{
  return g_build_filename (TIDE_TARGETS_DIR, name, NULL);
}

static int
wait_status_to_int (int wait_status)
{
  return WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128 + WTERMSIG (wait_status);
}

static void
run_argv (const char * const *argv,
          Run                *run)
{
  g_autoptr(GError) error = NULL;
  int wait_status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &run->out, &run->err,
                &wait_status, &error);
  g_assert_no_error (error);
  run->status = wait_status_to_int (wait_status);
}

/* tidemark record [mode] -o TRACE -- TARGET [ARGS...] */
static void
record_args (Fixture           *f,
             const char        *mode,
             const char        *target,
             const char *const *args,
             Run               *run)
{
  g_autofree char *target_exe = target[0] == '/' ? g_strdup (target) : target_path (target);
  const char *argv[16];
  guint n = 0;

  argv[n++] = TIDE_TIDEMARK_EXE;
  argv[n++] = "record";
  argv[n++] = "--force";
  argv[n++] = "-q";
  if (mode != NULL)
    argv[n++] = mode;
  argv[n++] = "-o";
  argv[n++] = f->trace;
  argv[n++] = "--";
  argv[n++] = target_exe;
  for (guint i = 0; args[i] != NULL && n + 1 < G_N_ELEMENTS (argv); i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  run_argv (argv, run);
}

static void
record (Fixture    *f,
        const char *mode,
        const char *target,
        const char *arg1,
        const char *arg2,
        Run        *run)
{
  const char *args[] = { arg1, arg1 ? arg2 : NULL, NULL };

  record_args (f, mode, target, args, run);
}

/* The group whose innermost frame is @function, or NULL. */
static TideGroup *
find_group (GPtrArray  *groups,
            const char *function)
{
  for (guint i = 0; i < groups->len; i++)
    if (g_strcmp0 (tide_test_top_function (g_ptr_array_index (groups, i)), function) == 0)
      return g_ptr_array_index (groups, i);
  return NULL;
}

/* Sum over every group with that innermost function (one per process). */
static void
sum_function (GPtrArray  *groups,
              const char *function,
              gint64     *bytes,
              gint64     *count)
{
  *bytes = *count = 0;
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      if (g_strcmp0 (tide_test_top_function (g), function) == 0)
        {
          *bytes += g->bytes;
          *count += g->count;
        }
    }
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = tide_test_make_dir ("tide-record");
  f->trace = g_build_filename (f->dir, "run.tide", NULL);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tide_test_remove_dir (f->dir);
  g_free (f->trace);
  g_free (f->dir);
}

/* ---- leaks, exactly and sampled ------------------------------------------- */

static void
test_leaky_all (Fixture       *f,
                gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) step7 = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  TideGroup *cache, *tensor;

  record (f, "--all", "leaky-steps", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "leaky-steps done\n");

  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
  steps = tide_report_steps (trace, NULL);
  g_assert_cmpuint (steps->len, ==, 10);

  /* Exactly the two leaks: not the churn, not the step-6 spike. */
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (suspects->len, ==, 2);
  tensor = g_ptr_array_index (suspects, 0);
  cache = g_ptr_array_index (suspects, 1);
  g_assert_cmpstr (tide_test_top_function (tensor), ==, "leak_big_tensor");
  g_assert_cmpint (tensor->growth_step, ==, 5);
  g_assert_cmpint (tensor->growth_bytes, ==, 6 * 4 * MiB);
  g_assert_cmpstr (tide_test_top_function (cache), ==, "leak_feature_cache");
  g_assert_cmpint (cache->growth_step, ==, 4);
  g_assert_cmpint (cache->growth_bytes, ==, 7 * 96 * 16384);
  g_assert_cmpfloat (cache->bytes_per_step, ==, 96 * 16384);
  g_assert_nonnull (strstr (((TideFrame *) g_ptr_array_index (cache->frames, 0))->file,
                            "leaky-steps.c"));

  /* What step 7 allocated and kept, by stack. */
  step7 = tide_report_retained (trace, 7, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (step7->len, ==, 2);
  g_assert_cmpint (find_group (step7, "leak_feature_cache")->bytes, ==, 96 * 16384);
  g_assert_cmpint (find_group (step7, "leak_feature_cache")->count, ==, 96);
  g_assert_cmpint (find_group (step7, "leak_feature_cache")->growth_step, ==, 4);
  g_assert_cmpint (find_group (step7, "leak_big_tensor")->bytes, ==, 4 * MiB);
  g_assert_cmpint (find_group (step7, "leak_big_tensor")->count, ==, 1);
  /* The leaked blocks were written (memset), so they are resident. */
  g_assert_cmpint (find_group (step7, "leak_big_tensor")->resident_bytes, ==, 4 * MiB);
}

/* A fixed seed samples the same blocks of a deterministic program in every
 * run, whatever its tids: same rows, same estimate. */
static void
test_sampled_repeatable (Fixture       *f,
                         gconstpointer  data)
{
  gint64 rows[2];
  double estimate[2];

  g_setenv ("TIDEMARK_SEED", "20261202", TRUE);
  for (guint i = 0; i < 2; i++)
    {
      g_auto(Run) run = { 0 };
      g_autoptr(TideTrace) trace = NULL;
      g_autoptr(GPtrArray) live = NULL;

      g_remove (f->trace);
      record (f, NULL, "leaky-steps", "--feature-blocks", "384", &run);
      g_assert_cmpint (run.status, ==, 0);
      trace = tide_test_open_trace (f->trace);
      live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
      estimate[i] = find_group (live, "leak_feature_cache")->bytes;
      rows[i] = tide_test_query_int (trace, "SELECT count (*) FROM allocations");
    }
  g_unsetenv ("TIDEMARK_SEED");
  g_assert_cmpint (rows[0], >, 0);
  g_assert_cmpint (rows[0], ==, rows[1]);
  g_assert_cmpfloat (estimate[0], ==, estimate[1]);
}

/* Sampled (the default mode): blocks at least as large as the sampling
 * interval are exact; smaller ones are estimated.  The feature cache leaks
 * 384 x 16 KiB per step here (42 MiB in all), where the estimate's standard
 * deviation is 3.6%: 10% is 2.8 sigma.  The seed is fixed so that CI runs
 * are repeatable; the bound holds for any seed but rarely. */
static void
test_leaky_sampled (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) live = NULL;
  TideGroup *cache, *tensor;
  const double cache_per_step = 384.0 * 16384;
  double estimate;

  g_setenv ("TIDEMARK_SEED", "20261202", TRUE);
  record (f, NULL, "leaky-steps", "--feature-blocks", "384", &run);
  g_unsetenv ("TIDEMARK_SEED");
  g_assert_cmpint (run.status, ==, 0);

  trace = tide_test_open_trace (f->trace);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (suspects->len, ==, 2);
  tensor = find_group (suspects, "leak_big_tensor");
  cache = find_group (suspects, "leak_feature_cache");
  g_assert_nonnull (tensor);
  g_assert_nonnull (cache);
  g_assert_cmpint (tensor->growth_step, ==, 5);
  g_assert_cmpint (tensor->growth_bytes, ==, 6 * 4 * MiB);
  g_assert_cmpint (cache->growth_step, ==, 4);
  g_test_message ("leak_feature_cache: %.0f bytes/step estimated, %.0f true",
                  cache->bytes_per_step, cache_per_step);
  g_assert_cmpfloat (fabs (cache->bytes_per_step - cache_per_step), <=, 0.10 * cache_per_step);

  live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
  estimate = find_group (live, "leak_feature_cache")->bytes;
  g_assert_cmpfloat (fabs (estimate - 7 * cache_per_step), <=, 0.10 * 7 * cache_per_step);
}

static void
test_control (Fixture       *f,
              gconstpointer  data)
{
  const char *mode = data;
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;

  record (f, mode, "churn-control", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "churn-control done\n");
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpuint (tide_report_steps (trace, NULL)->len, ==, 10);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (suspects->len, ==, 0);
}

/* The row of the nth block of @size, in allocation order: "alloc_ns free_ns". */
static char *
block_times (TideTrace *trace,
             guint64    size,
             guint      nth)
{
  g_autofree char *sql = g_strdup_printf ("SELECT alloc_ns || ' ' || ifnull (free_ns, 'live')"
                                          " FROM allocations WHERE size = %" G_GUINT64_FORMAT
                                          " ORDER BY alloc_ns LIMIT 1 OFFSET %u", size, nth);

  return tide_test_query_text (trace, sql);
}

/* Blocks whose frees were folded into their records (tide-preload-buffer.h)
 * get the same rows as those freed by a FREE record: each freed once, after
 * it was made, and a reused address two rows.  preload-target's fold mode
 * frees one of each kind. */
static void
test_folded_frees (Fixture       *f,
                   gconstpointer  data)
{
  static const guint64 sizes[] = { FOLD_SAME, FOLD_CROSS, FOLD_STEP, FOLD_REUSE, FOLD_REUSE };
  g_autofree char *sample_bytes = g_strdup_printf ("--sample-bytes=%d", FAMILY_SAMPLE_BYTES);
  g_autofree char *count_reused = g_strdup_printf ("SELECT count (*) FROM allocations"
                                                   " WHERE size = %d", FOLD_REUSE);
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  gint64 previous_free = 0;

  record (f, sample_bytes, TIDE_PRELOAD_TARGET, "fold", NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  trace = tide_test_open_trace (f->trace);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree char *times = block_times (trace, sizes[i], i == 4 ? 1 : 0);
      gint64 alloc_ns, free_ns;

      g_assert_cmpint (sscanf (times, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
                               &alloc_ns, &free_ns), ==, 2);
      /* Made after the last one was freed, freed after it was made. */
      g_assert_cmpint (alloc_ns, >=, previous_free);
      g_assert_cmpint (free_ns, >, alloc_ns);
      previous_free = free_ns;
    }
  g_assert_cmpint (tide_test_query_int (trace, count_reused), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, 5);
}

/* ---- threads, processes, libraries ----------------------------------------- */

static void
test_storm (Fixture       *f,
            gconstpointer  data)
{
  g_auto(Run) plain = { 0 };
  g_auto(Run) run = { 0 };
  g_autofree char *exe = target_path ("alloc-storm");
  const char *argv[] = { exe, "--iterations", "40000", NULL };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) live = NULL;
  gint64 bytes, count;

  run_argv (argv, &plain);
  record (f, "--all", "alloc-storm", "--iterations", "40000", &run);
  g_assert_cmpint (run.status, ==, 0);
  /* Profiling does not change what the program computes. */
  g_assert_cmpstr (run.out, ==, plain.out);

  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta WHERE key = 'dropped_events'"), ==, 0);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM threads"), >=, 9);
  live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
  sum_function (live, "storm_leak_per_thread", &bytes, &count);
  g_assert_cmpint (bytes, ==, 8 * 100 * 1000);
  g_assert_cmpint (count, ==, 8 * 100);
  /* Every storm block but the leaked ones was freed: none shows as live. */
  sum_function (live, "storm_churn", &bytes, &count);
  g_assert_cmpint (count, ==, 0);
}

/* The CPU time of every thread of @pid so far, from /proc/PID/stat
 * (utime and stime, in clock ticks: rounded down). */
static gint64
proc_cpu_ns (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) fields = NULL;
  const char *after_comm;
  gint64 ticks;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  after_comm = strrchr (text, ')');
  g_assert_nonnull (after_comm);
  /* Fields from the state on: utime and stime are the 14th and 15th of
   * the line, the 12th and 13th after the comm. */
  fields = g_strsplit (after_comm + 2, " ", -1);
  g_assert_cmpuint (g_strv_length (fields), >, 13);
  ticks = g_ascii_strtoll (fields[11], NULL, 10) + g_ascii_strtoll (fields[12], NULL, 10);
  return ticks * (G_GINT64_CONSTANT (1000000000) / sysconf (_SC_CLK_TCK));
}

/* The trace's recorder_cpu_ns is the CPU time of the recorder's own
 * threads, all of them, and of nothing else, measured as the recording
 * ends.  It is held between two measurements taken from outside:
 * - at least what /proc said the recorder had used while the program was
 *   still running (alloc-storm --hold waits to be told to exit), so every
 *   thread is counted: the writer alone takes a good part of it;
 * - at most what wait4 says the recorder used over its whole life with the
 *   program that it waited for, less what the program said it had used
 *   itself, so the program's CPU time is not counted in. */
static void
test_recorder_cpu (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *exe = target_path ("alloc-storm");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->trace,
                         "--", exe, "--iterations", "40000", "--hold", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  char line[64] = "";
  struct rusage usage;
  int in_fd, err_fd, wait_status;
  gint64 program_cpu = -1, before_exit, whole_life, recorder_cpu;
  FILE *err;
  GPid recorder;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL,
                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                            &recorder, &in_fd, NULL, &err_fd, &error);
  g_assert_no_error (error);
  err = fdopen (err_fd, "r");
  while (fgets (line, sizeof line, err) != NULL && strcmp (line, "holding\n") != 0)
    if (g_str_has_prefix (line, "cpu "))
      program_cpu = g_ascii_strtoll (line + 4, NULL, 10);
  g_assert_cmpstr (line, ==, "holding\n");
  g_assert_cmpint (program_cpu, >, 0);
  before_exit = proc_cpu_ns (recorder);
  g_assert_cmpint (write (in_fd, "go\n", 3), ==, 3);
  close (in_fd);
  g_assert_cmpint (wait4 (recorder, &wait_status, 0, &usage), ==, recorder);
  g_assert_cmpint (wait_status_to_int (wait_status), ==, 0);
  fclose (err);
  whole_life = (gint64) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000
               + (gint64) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000;

  trace = tide_test_open_trace (f->trace);
  recorder_cpu = tide_test_query_int (trace, "SELECT value FROM meta"
                                             " WHERE key = 'recorder_cpu_ns'");
  g_test_message ("recorder cpu: %" G_GINT64_FORMAT " ns, /proc before exit %" G_GINT64_FORMAT
                  ", whole life %" G_GINT64_FORMAT ", program %" G_GINT64_FORMAT,
                  recorder_cpu, before_exit, whole_life, program_cpu);
  g_assert_cmpint (before_exit, >, 0);
  g_assert_cmpint (recorder_cpu, >=, before_exit);
  g_assert_cmpint (recorder_cpu, <=, whole_life - program_cpu);
}

/* The profiler's own allocations (libunwind's thread-local blocks, which
 * ld.so makes with malloc at a thread's first sampled allocation) must not
 * come from the program's heap: they moved the program's later blocks and
 * changed when glibc trimmed its arenas.  heap-layout prints a hash of
 * where its blocks went, in four threads one after another. */
static void
test_heap_layout (Fixture       *f,
                  gconstpointer  data)
{
  const char *mode = data;
  g_auto(Run) plain = { 0 };
  g_auto(Run) again = { 0 };
  g_auto(Run) run = { 0 };
  g_autofree char *exe = target_path ("heap-layout");
  const char *argv[] = { exe, NULL };

  run_argv (argv, &plain);
  run_argv (argv, &again);
  g_assert_cmpint (plain.status, ==, 0);
  g_assert_cmpstr (plain.out, ==, again.out);  /* the program is deterministic */
  g_assert_true (g_str_has_prefix (plain.out, "thread "));

  record (f, mode, "heap-layout", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, plain.out);
}

/* The nice value of a /proc/PID/stat line (field 19), and its comm. */
static int
stat_nice (const char  *line,
           char       **comm)
{
  const char *open_ = strchr (line, '(');
  const char *close_ = strrchr (line, ')');
  g_auto(GStrv) fields = NULL;

  g_assert_nonnull (open_);
  g_assert_nonnull (close_);
  *comm = g_strndup (open_ + 1, close_ - open_ - 1);
  fields = g_strsplit (close_ + 2, " ", -1);
  g_assert_cmpuint (g_strv_length (fields), >, 17);
  return atoi (fields[16]);
}

/* The recorder's writer asks for nice -10 where it may (writer_raise_priority
 * in tide-trace-writer.c); the program keeps the priority it was given.
 * The program waits (10 s at most) until the writer thread has run, named
 * itself and set its priority: on a loaded machine the program may start
 * first. */
static void
test_priority (Fixture       *f,
               gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_auto(GStrv) lines = NULL;
  g_autofree char *script = NULL;
  struct rlimit nice_limit;
  gboolean target = FALSE, writer_seen = FALSE;
  int want_writer;
  const char *args[] = { "-c", NULL, NULL };

  g_assert_cmpint (getrlimit (RLIMIT_NICE, &nice_limit), ==, 0);
  /* RLIMIT_NICE allows nice down to 20 - rlim_cur. */
  want_writer = geteuid () == 0 || nice_limit.rlim_cur >= 30 ? -10 : 0;
  script = g_strdup_printf ("for i in $(seq 200); do"
                            " awk '$2 == \"(tide-writer)\" && $19 == %d { f = 1 } END { exit !f }'"
                            " /proc/$PPID/task/*/stat && break; sleep 0.05; done;"
                            " cat /proc/$PPID/task/*/stat; echo target; cat /proc/$$/stat",
                            want_writer);
  args[1] = script;
  record_args (f, NULL, "/bin/sh", args, &run);
  g_assert_cmpint (run.status, ==, 0);
  lines = g_strsplit (run.out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_autofree char *comm = NULL;
      int nice_value;

      if (strcmp (lines[i], "target") == 0)
        {
          target = TRUE;
          continue;
        }
      nice_value = stat_nice (lines[i], &comm);
      if (target)
        g_assert_cmpint (nice_value, ==, 0);
      else if (strcmp (comm, "tide-writer") == 0)
        {
          g_assert_cmpint (nice_value, ==, want_writer);
          writer_seen = TRUE;
        }
      else
        g_assert_cmpint (nice_value, ==, 0);  /* the recorder's other threads */
    }
  g_assert_true (target);
  g_assert_true (writer_seen);
}

static void
test_fork_exec (Fixture       *f,
                gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) live = NULL;
  TideGroup *leaf, *grandchild;
  gint64 bytes, count;

  record (f, "--all", "fork-exec-chain", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);

  trace = tide_test_open_trace (f->trace);
  /* Parent, forked child, the child after exec, and the grandchild. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 4);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"
                                     " WHERE exe LIKE '%fork-exec-leaf'"), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (DISTINCT pid) FROM processes"), ==, 3);

  live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
  leaf = find_group (live, "leaf_leak");
  grandchild = find_group (live, "grandchild_leak");
  g_assert_nonnull (leaf);
  g_assert_nonnull (grandchild);
  g_assert_cmpint (leaf->pid, !=, grandchild->pid);
  /* A short loop may be unrolled into several call sites: sum them. */
  sum_function (live, "leaf_leak", &bytes, &count);
  g_assert_cmpint (bytes, ==, 3 * 100000);
  g_assert_cmpint (count, ==, 3);
  sum_function (live, "grandchild_leak", &bytes, &count);
  g_assert_cmpint (bytes, ==, 2 * 50000);
  g_assert_cmpint (count, ==, 2);
}

/* exec-while-stopped: three images of one pid, the last two of which
 * connected while the recorder was stopped, so that it accepted them
 * together.  They are met in the order they started: each of the first
 * two ends by exec where the next starts, and is the next one's parent;
 * the last ends by its exit, after its step, whose end has its private
 * memory read (--sync-steps).  The recorder used to read the newest HELLO
 * first, and end that image, the one running, by the older one's exec. */
static void
test_exec_while_stopped (Fixture       *f,
                         gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *replaced = g_strdup_printf (
    "SELECT count (*) FROM processes p JOIN processes n ON n.parent_id = p.id"
    " JOIN process_ends e ON e.process_id = p.id"
    " WHERE e.kind = %d AND p.end_ns = n.start_ns AND p.start_ns < n.start_ns", TIDE_END_EXEC);
  g_autofree char *last = g_strdup_printf (
    "SELECT count (*) FROM processes p JOIN process_ends e ON e.process_id = p.id"
    " JOIN steps s ON s.process_id = p.id"
    " WHERE p.start_ns = (SELECT max (start_ns) FROM processes)"
    " AND e.kind = %d AND e.exit_code = 0 AND p.end_ns > s.end_ns", TIDE_END_EXITED);
  g_autofree char *read = g_strdup_printf (
    "SELECT count (*) FROM counters c JOIN steps s"
    " ON s.process_id = c.process_id AND c.ts_ns = s.end_ns WHERE c.counter = %d",
    TIDE_COUNTER_USS);

  record (f, "--sync-steps", "exec-while-stopped", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "done\n");
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 3);
  g_assert_cmpint (tide_test_query_int (trace, replaced), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, last), ==, 1);
  g_assert_cmpint (tide_test_query_int (trace, read), ==, 1);
}

static void
test_dlopen (Fixture       *f,
             gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) live = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  TideGroup *g;
  TideFrame *top;

  record (f, "--all", "dlopen-leak", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  trace = tide_test_open_trace (f->trace);

  live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
  g = find_group (live, "plugin_leak_rows");
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, 5 * 64 * 4096);
  g_assert_cmpint (g->count, ==, 5 * 64);
  top = g_ptr_array_index (g->frames, 0);
  g_assert_true (g_str_has_suffix (top->module, "libtide-test-plugin.so"));
  g_assert_nonnull (strstr (top->file, "test-plugin.c"));

  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_nonnull (find_group (suspects, "plugin_leak_rows"));
}

/* ---- residency ---------------------------------------------------------------- */

/* Polls the trace being written until the recorder has measured the
 * residency of @n steps. */
static void
wait_for_measured_steps (const char *path,
                         gint64      n)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autoptr(TideTrace) trace = tide_trace_open (path, NULL);

      if (trace != NULL &&
          tide_test_query_int (trace, "SELECT count (DISTINCT step_id) FROM step_residency") >= n)
        return;
      g_usleep (10 * 1000);
    }
  g_error ("the recorder measured no %" G_GINT64_FORMAT " steps in 60 s", n);
}

/* rss-toucher with @args, under --all: the 64 MiB mapping is recorded;
 * 4 MiB more of it is resident per step, and the recorder measured exactly
 * that from pagemap at every step, the last one included.  The program
 * goes on from each step but the last once the trace holds its
 * measurement (--pause-each-step), so that no step's pages are counted in
 * the one before, however far the recorder lags. */
static void
check_rss_toucher (Fixture           *f,
                   const char *const *args)
{
  g_autofree char *exe = target_path ("rss-toucher");
  const char *argv[16] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->trace,
                           "--", exe, "--pause-each-step" };
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  char out[64] = "";
  guint n = 10;
  int in_fd, out_fd, wait_status;
  GPid recorder;
  FILE *out_file;

  for (guint i = 0; args[i] != NULL && n + 1 < G_N_ELEMENTS (argv); i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &recorder, &in_fd, &out_fd, NULL, &error);
  g_assert_no_error (error);
  for (gint64 step = 1; step < 8; step++)
    {
      wait_for_measured_steps (f->trace, step);
      g_assert_cmpint (write (in_fd, "go\n", 3), ==, 3);
    }
  close (in_fd);
  out_file = fdopen (out_fd, "r");
  g_assert_nonnull (fgets (out, sizeof out, out_file));
  fclose (out_file);
  g_assert_cmpint (waitpid (recorder, &wait_status, 0), ==, recorder);
  g_assert_cmpint (wait_status_to_int (wait_status), ==, 0);
  g_assert_cmpstr (out, ==, "rss-toucher done\n");

  trace = tide_test_open_trace (f->trace);
  steps = tide_report_steps (trace, NULL);
  g_assert_cmpuint (steps->len, ==, 8);
  for (guint i = 0; i < steps->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (steps, i);

      g_assert_cmpint (row->mapped_end, ==, 64 * MiB);
      g_assert_true (row->has_resident);
      g_assert_cmpint (row->resident_explained, ==, (gint64) (i + 1) * 4 * MiB);
      g_assert_cmpint (row->rss_end, >=, row->resident_explained);
    }
}

static void
test_residency (Fixture       *f,
                gconstpointer  data)
{
  const char *args[] = { NULL };

  check_rss_toucher (f, args);
}

/* A process that exits right after its last step, while the recorder is
 * still busy with the allocations before it: it waits at exit until the
 * recorder has handled its last step, so that step is measured too. */
static void
test_residency_at_exit (Fixture       *f,
                        gconstpointer  data)
{
  const char *args[] = { "--burst", "1000000", "--end-sleep-ms", "0", NULL };

  check_rss_toucher (f, args);
}

/* ---- exits, signals, deaths ------------------------------------------------- */

static void
test_exit_status (Fixture       *f,
                  gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_auto(Run) missing = { 0 };

  record (f, NULL, "/bin/sh", "-c", "echo out; exit 3", &run);
  g_assert_cmpint (run.status, ==, 3);
  g_assert_cmpstr (run.out, ==, "out\n");
  {
    g_autoptr(TideTrace) trace = tide_test_open_trace (f->trace);
    g_assert_cmpint (tide_test_query_int (trace, "SELECT exit_status FROM processes"), ==, 3);
  }

  g_unlink (f->trace);
  record (f, NULL, "/nonexistent/trainer", NULL, NULL, &missing);
  g_assert_cmpint (missing.status, ==, 127);
  g_assert_cmpstr (missing.err, ==, "tidemark: cannot run /nonexistent/trainer: "
                                    "No such file or directory\n");
  /* No half-written trace is left behind. */
  g_assert_false (g_file_test (f->trace, G_FILE_TEST_EXISTS));
}

/* Starts `tidemark record -- sleeper-alloc [ARG1 ARG2]` and waits for its
 * first line. */
static GPid
start_sleeper (Fixture     *f,
               const char  *arg1,
               const char  *arg2,
               FILE       **out)
{
  g_autofree char *exe = target_path ("sleeper-alloc");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "-o", f->trace, "--", exe,
                         arg1, arg2, NULL };
  g_autoptr(GError) error = NULL;
  char line[64] = "";
  int out_fd;
  GPid pid;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  *out = fdopen (out_fd, "r");
  g_assert_nonnull (fgets (line, sizeof line, *out));
  g_assert_cmpstr (line, ==, "sleeper-alloc running\n");
  return pid;
}

/* Reads the sleeper's lines until it says that it ended step @n: by then
 * it has connected, marked steps and allocated, whatever the machine's
 * speed. */
static void
wait_for_step (FILE *out,
               int   n)
{
  g_autofree char *expected = g_strdup_printf ("step %d\n", n);
  char line[64];

  while (fgets (line, sizeof line, out) != NULL)
    if (strcmp (line, expected) == 0)
      return;
  g_error ("the sleeper ended before step %d", n);
}

/* Reads what the target printed until it was killed: its last step, or
 * @seen if it printed none after that one. */
static int
last_printed_step (FILE *out,
                   int   seen)
{
  char line[64];
  int step = seen;

  while (fgets (line, sizeof line, out) != NULL)
    if (g_str_has_prefix (line, "step "))
      step = atoi (line + 5);
  fclose (out);
  return step;
}

/* The direct child of the recorder, from /proc/PID/task/PID/children. */
static pid_t
child_of (GPid parent)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", parent, parent);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return (pid_t) atoi (text);
}

static int
wait_for (GPid pid)
{
  int wait_status;

  g_assert_cmpint (waitpid (pid, &wait_status, 0), ==, pid);
  return wait_status_to_int (wait_status);
}

/* The target is killed with SIGKILL.  Every step it printed before dying
 * is in the trace, and so is every allocation it made before that step (a
 * step marker first sends what its thread buffered).  Nothing here depends
 * on how busy the machine is. */
static void
test_target_sigkill (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  FILE *out;
  GPid recorder = start_sleeper (f, NULL, NULL, &out);
  pid_t target;
  int printed;
  gint64 steps, allocs;

  wait_for_step (out, 2);
  target = child_of (recorder);
  g_assert_cmpint (target, >, 0);
  kill (target, SIGKILL);
  g_assert_cmpint (wait_for (recorder), ==, 128 + SIGKILL);
  printed = last_printed_step (out, 2);
  g_assert_cmpint (printed, >=, 2);

  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
  steps = tide_test_query_int (trace, "SELECT count (*) FROM steps");
  g_assert_cmpint (steps, >=, printed);
  g_assert_cmpint (steps, <=, printed + 1);
  allocs = tide_test_query_int (trace, "SELECT count (*) FROM allocations a"
                                       " JOIN stack_nodes n ON n.id = a.stack_id"
                                       " JOIN frames fr ON fr.id = n.frame_id"
                                       " WHERE fr.function = 'steady_growth'");
  /* Five 1 MiB blocks per step, always recorded (larger than the interval). */
  g_assert_cmpint (allocs, >=, 5 * (gint64) printed);
}

static void
test_sigint_forwarded (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  FILE *out;
  GPid recorder = start_sleeper (f, NULL, NULL, &out);

  wait_for_step (out, 1);
  /* kill() from another process: the recorder passes it on to the target. */
  kill (recorder, SIGINT);
  g_assert_cmpint (wait_for (recorder), ==, 128 + SIGINT);
  fclose (out);
  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
}

/* `kill PID` of the recorder, as a batch system sends it: the program gets
 * the SIGTERM itself (it says so, and exits with a status of its own
 * choosing), the recorder exits with that status, and the trace is
 * complete, with every step and every block the program reported. */
static void
test_sigterm_forwarded (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  char line[64] = "";
  FILE *out;
  GPid recorder = start_sleeper (f, "--term-status", "7", &out);
  int rounds = 0, steps = 0;

  wait_for_step (out, 2);
  kill (recorder, SIGTERM);
  g_assert_cmpint (wait_for (recorder), ==, 7);
  while (fgets (line, sizeof line, out) != NULL && !g_str_has_prefix (line, "sigterm "))
    ;
  fclose (out);
  g_assert_cmpint (sscanf (line, "sigterm after round %d, step %d", &rounds, &steps), ==, 2);
  g_assert_cmpint (steps, >=, 2);
  g_assert_cmpint (rounds / 5, ==, steps);

  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
  g_assert_cmpint (tide_test_query_int (trace, "SELECT exit_status FROM processes"), ==, 7);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta WHERE key = 'exit_status'"),
                   ==, 7);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, steps);
  /* 1 MiB blocks: larger than the interval, each one recorded. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"
                                               " WHERE size = 1048576"), ==, rounds);
}

/* Polls the trace being written until it holds the target's process. */
static void
wait_for_first_commit (const char *path)
{
  for (int attempt = 0; attempt < 500; attempt++)
    {
      g_autoptr(TideTrace) trace = tide_trace_open (path, NULL);

      if (trace != NULL && tide_test_query_int (trace, "SELECT count (*) FROM processes") > 0)
        return;
      g_usleep (10 * 1000);
    }
  g_assert_not_reached ();
}

static void
test_recorder_killed (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *exe = target_path ("rss-toucher");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->trace,
                         "--", exe, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(TideTrace) trace = NULL;
  char buf[256];
  ssize_t n;
  int out_fd;
  GPid recorder;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &recorder, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  wait_for_first_commit (f->trace);
  kill (recorder, SIGKILL);
  g_assert_cmpint (wait_for (recorder), ==, 128 + SIGKILL);

  /* The target inherited the pipe: EOF comes when it has finished. */
  while ((n = read (out_fd, buf, sizeof buf)) > 0)
    g_string_append_len (out, buf, n);
  close (out_fd);
  g_assert_cmpstr (out->str, ==, "rss-toucher done\n");

  /* What was committed before the recorder died still opens. */
  trace = tide_test_open_trace (f->trace);
  g_assert_false (tide_trace_is_complete (trace));
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 1);
}

/* ---- the report command on bad input ---------------------------------------- */

static void
test_report_bad_input (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *text = g_build_filename (f->dir, "notes.tide", NULL);
  g_autofree char *missing = g_build_filename (f->dir, "missing.tide", NULL);
  const char *argv_text[] = { TIDE_TIDEMARK_EXE, "report", text, NULL };
  const char *argv_missing[] = { TIDE_TIDEMARK_EXE, "report", missing, NULL };
  const char *argv_format[] = { TIDE_TIDEMARK_EXE, "report", text, "--format", "xml", NULL };
  g_auto(Run) r1 = { 0 };
  g_auto(Run) r2 = { 0 };
  g_auto(Run) r3 = { 0 };
  g_autofree char *expected = NULL;

  g_assert_true (g_file_set_contents (text, "not a trace\n", -1, NULL));
  run_argv (argv_text, &r1);
  expected = g_strdup_printf ("tidemark: %s is not a Tidemark trace (not an SQLite database)\n",
                              text);
  g_assert_cmpint (r1.status, ==, 2);
  g_assert_cmpstr (r1.err, ==, expected);
  g_assert_cmpstr (r1.out, ==, "");

  run_argv (argv_missing, &r2);
  g_assert_cmpint (r2.status, ==, 2);
  g_assert_true (g_str_has_suffix (r2.err, "No such file or directory\n"));

  run_argv (argv_format, &r3);
  g_assert_cmpint (r3.status, ==, 2);
  g_assert_cmpstr (r3.err, ==, "tidemark: unknown format 'xml' (text, csv or json)\n");
}

/* ---- the export command ------------------------------------------------------ */

/* What a recording maps: the recorder is the parent of the target's shell. */
static void
test_record_maps_no_drawing (Fixture       *f,
                             gconstpointer  data)
{
  g_auto(Run) run = { 0 };

  record (f, NULL, "/bin/sh", "-c", "cat /proc/$PPID/maps", &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "/libsqlite3.so"));
  /* PNG export's cairo and pango are a module that only export loads. */
  g_assert_null (strstr (run.out, "/libcairo"));
  g_assert_null (strstr (run.out, "/libpango"));
}

#ifdef TIDE_HAVE_RENDER
static void
test_export_png_csv (Fixture       *f,
                     gconstpointer  data)
{
  g_autofree char *png = g_build_filename (f->dir, "timeline.png", NULL);
  g_autofree char *csv = g_build_filename (f->dir, "steps.csv", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", png, "--width", "640",
                         "--height", "360", "--csv", csv, NULL };
  g_auto(Run) recorded = { 0 };
  g_auto(Run) exported = { 0 };
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  cairo_surface_t *image;

  record (f, "--all", "leaky-steps", NULL, NULL, &recorded);
  g_assert_cmpint (recorded.status, ==, 0);
  run_argv (argv, &exported);
  g_assert_cmpint (exported.status, ==, 0);
  g_assert_cmpstr (exported.err, ==, "");

  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 10 + 1);  /* header, steps, "" */
  /* Each step names its process: pid, role and distributed rank. */
  g_assert_true (g_str_has_prefix (lines[0], "pid,role,dist_rank,steps_pid,step,label,start_ns,"));

  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (image), ==, 640);
  g_assert_cmpint (cairo_image_surface_get_height (image), ==, 360);
  /* The RSS lane's line and fill, and the leak steps' bands (tide-render.h). */
  g_assert_cmpuint (tide_test_count_pixels (image, 0x1c71d8), >, 0);
  g_assert_cmpuint (tide_test_count_pixels (image, 0xc6dcf5), >, 0);
  g_assert_cmpuint (tide_test_count_pixels (image, 0xfbe0e1), >, 0);
  g_assert_cmpuint (tide_test_count_pixels (image, 0xe01b24), >, 0);
  cairo_surface_destroy (image);
}

/* tidemark export TRACE --png PNG [--process P]: the PNG's bytes, and the
 * number of its pixels in the light palette's leak band colour. */
static char *
export_process_png (Fixture    *f,
                    const char *process,
                    gsize      *len,
                    guint      *leak_pixels)
{
  g_autofree char *png = g_build_filename (f->dir, "ranks.png", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", png, "--width", "400",
                         "--height", "300", process ? "--process" : NULL, process, NULL };
  g_auto(Run) exported = { 0 };
  cairo_surface_t *image;
  char *bytes = NULL;

  run_argv (argv, &exported);
  g_assert_cmpstr (exported.err, ==, "");
  g_assert_cmpint (exported.status, ==, 0);
  g_assert_true (g_file_get_contents (png, &bytes, len, NULL));
  image = cairo_image_surface_create_from_png (png);
  *leak_pixels = tide_test_count_pixels (image, 0xfbe0e1);
  cairo_surface_destroy (image);
  return bytes;
}

/* A two-rank trace exports one process's lanes and step bands: rank 0's
 * have no leak band, rank 1's do, and by default it is rank 1, which has
 * the top suspect.  The CSV narrows to the process and names it. */
static void
test_export_ranks (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *csv = g_build_filename (f->dir, "ranks.csv", NULL);
  const char *csv_argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--csv", csv,
                             "--process", "501", NULL };
  const char *missing_argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--csv", csv,
                                 "--process", "rank:5", NULL };
  g_auto(Run) csv_run = { 0 };
  g_auto(Run) missing = { 0 };
  g_autofree char *rank0 = NULL, *rank1 = NULL, *chosen = NULL, *text = NULL;
  g_auto(GStrv) lines = NULL;
  gsize len0, len1, len_chosen;
  guint leak0, leak1, leak_chosen;

  tide_test_write_two_ranks (f->trace);
  rank0 = export_process_png (f, "rank:0", &len0, &leak0);
  rank1 = export_process_png (f, "rank:1", &len1, &leak1);
  chosen = export_process_png (f, NULL, &len_chosen, &leak_chosen);
  g_assert_cmpuint (leak0, ==, 0);
  g_assert_cmpuint (leak1, >, 0);
  g_assert_cmpmem (chosen, len_chosen, rank1, len1);

  run_argv (csv_argv, &csv_run);
  g_assert_cmpint (csv_run.status, ==, 0);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 10 + 1);
  g_assert_true (g_str_has_prefix (lines[1], "501,rank 1,1,501,1,,0,1000000,"));

  run_argv (missing_argv, &missing);
  g_assert_cmpint (missing.status, ==, 2);
  g_assert_true (g_str_has_suffix (missing.err, "has no process with rank 5\n"));
}

/* report --processes and --process through the command line. */
static void
test_report_processes (Fixture       *f,
                       gconstpointer  data)
{
  const char *list_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--processes",
                              "--format", "csv", NULL };
  const char *steps_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--steps",
                               "--process", "rank:1", NULL };
  const char *bad_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--process", "abc", NULL };
  g_auto(Run) list = { 0 };
  g_auto(Run) steps = { 0 };
  g_auto(Run) bad = { 0 };

  tide_test_write_two_ranks (f->trace);
  run_argv (list_argv, &list);
  g_assert_cmpint (list.status, ==, 0);
  g_assert_cmpstr (list.out, ==,
                   "pid,parent_pid,role,dist_rank,peak_rss_bytes,rss_growth_bytes,steps,suspects,"
                   "end,exit_code,signal,signal_name,core_dumped,oom_killed,oom_scope,"
                   "oom_limit_bytes,end_step,device_oom,command\n"
                   "500,,rank 0,0,115343360,9437184,10,0,exited,0,,,0,0,,,,,train --ddp\n"
                   "501,,rank 1,1,115343360,9437184,10,1,exited,0,,,0,0,,,,,train --ddp\n");
  run_argv (steps_argv, &steps);
  g_assert_cmpint (steps.status, ==, 0);
  g_assert_true (g_str_has_prefix (steps.out, "Steps of rank 1 (pid 501)\n"));
  run_argv (bad_argv, &bad);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_cmpstr (bad.err, ==, "tidemark: --process takes a pid or rank:N, not 'abc'\n");
}

static void
test_export_renderer_missing (Fixture       *f,
                              gconstpointer  data)
{
  g_autofree char *png = g_build_filename (f->dir, "timeline.png", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", png, NULL };
  g_auto(Run) recorded = { 0 };
  g_auto(Run) exported = { 0 };

  record (f, NULL, "leaky-steps", NULL, NULL, &recorded);
  g_assert_cmpint (recorded.status, ==, 0);
  g_setenv ("TIDEMARK_PNG_MODULE", "/nonexistent/tidemark-png.so", TRUE);
  run_argv (argv, &exported);
  g_unsetenv ("TIDEMARK_PNG_MODULE");
  g_assert_cmpint (exported.status, ==, 1);
  g_assert_cmpstr (exported.err, ==, "tidemark: cannot load PNG export: "
                   "/nonexistent/tidemark-png.so: cannot open shared object file: "
                   "No such file or directory\n");
  g_assert_false (g_file_test (png, G_FILE_TEST_EXISTS));
}
#endif

/* Every native frame of a trace, one line each, in a stable order. */
static char *
frames_as_text (const char *trace_path)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (trace_path);

  return tide_test_query_text (trace,
    "SELECT group_concat (frame, char (10)) FROM ("
    "  SELECT module || '+' || module_offset || ' ' || ifnull (function, '?') || ' '"
    "         || ifnull (file, '?') || ':' || line AS frame"
    "  FROM frames WHERE module IS NOT NULL ORDER BY frame)");
}

static guint
count_files (const char *dir)
{
  g_autoptr(GDir) handle = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (handle != NULL && g_dir_read_name (handle) != NULL)
    n++;
  return n;
}

/* Points the recordings that follow at @dir's symbol cache; returns the
 * suite's own, for restore_symbol_cache(). */
static char *
use_symbol_cache (const char *dir)
{
  char *suite_cache = g_strdup (g_getenv ("TIDEMARK_SYMBOL_CACHE"));

  g_setenv ("TIDEMARK_SYMBOL_CACHE", dir, TRUE);
  return suite_cache;
}

static void
restore_symbol_cache (const char *suite_cache)
{
  if (suite_cache != NULL)
    g_setenv ("TIDEMARK_SYMBOL_CACHE", suite_cache, TRUE);
  else
    g_unsetenv ("TIDEMARK_SYMBOL_CACHE");
}

/* The second recording takes its frames from the symbol cache that the
 * first one left, and they are the frames the first one resolved. */
static void
test_symbol_cache (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *cache_dir = tide_test_make_dir ("tide-symbols");
  g_autofree char *unused_dir = tide_test_make_dir ("tide-symbols-unused");
  g_autofree char *cold = NULL;
  g_autofree char *warm = NULL;
  g_autofree char *suite_cache = use_symbol_cache (cache_dir);

  for (guint i = 0; i < 2; i++)
    {
      g_auto(Run) run = { 0 };

      record (f, "--all", "leaky-steps", NULL, NULL, &run);
      g_assert_cmpint (run.status, ==, 0);
      if (i == 0)
        cold = frames_as_text (f->trace);
      else
        warm = frames_as_text (f->trace);
      g_assert_cmpint (g_unlink (f->trace), ==, 0);
    }
  g_assert_nonnull (strstr (cold, " leak_feature_cache "));
  g_assert_nonnull (strstr (cold, "/leaky-steps.c:"));
  g_assert_cmpstr (warm, ==, cold);
  /* One file per ELF file with a build-id: the target and libc at least. */
  g_assert_cmpuint (count_files (cache_dir), >=, 2);

  {
    g_auto(Run) run = { 0 };

    g_setenv ("TIDEMARK_SYMBOL_CACHE", unused_dir, TRUE);
    record (f, "--no-symbol-cache", "leaky-steps", NULL, NULL, &run);
    g_assert_cmpint (run.status, ==, 0);
    g_assert_cmpuint (count_files (unused_dir), ==, 0);
  }
  restore_symbol_cache (suite_cache);
  tide_test_remove_dir (cache_dir);
  tide_test_remove_dir (unused_dir);
}

/* ---- a leak in an inlined static function (inline-leak.c) ------------------ */

/* The line of tests/targets/@file that holds @mark. */
static int
source_line (const char *file,
             const char *mark)
{
  g_autofree char *path = g_build_filename (TIDE_TARGETS_SRC_DIR, file, NULL);

  return tide_test_source_line (path, mark);
}

/* The compiler inlined keep_copy(): no code of its own in the target. */
static void
assert_keep_copy_inlined (void)
{
  g_autofree char *target = target_path ("inline-leak");
  g_autofree char *nm = g_find_program_in_path ("nm");  /* binutils, as objcopy */
  const char *argv[] = { nm, target, NULL };
  g_auto(Run) run = { 0 };

  g_assert_nonnull (nm);
  run_argv (argv, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, " T main\n"));
  g_assert_null (strstr (run.out, "keep_copy"));
}

/* The top suspect's frames: __strdup (glibc: plumbing), then keep_copy as
 * an inline frame at its strdup line, then main at the call site. */
static void
assert_inline_suspect (Fixture *f)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->trace);
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  const TideFrame *headline, *caller;
  TideGroup *top;
  gint h;

  g_assert_cmpuint (suspects->len, ==, 1);
  top = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (top->growth_bytes, ==, 7 * 65536);  /* steps 2..8, over step 1 */
  h = tide_frames_find_headline (top->frames);
  g_assert_cmpint (h, ==, 1);
  g_assert_true (((TideFrame *) g_ptr_array_index (top->frames, 0))->plumbing);
  headline = tide_group_get_headline (top);
  g_assert_cmpint (headline->kind, ==, TIDE_FRAME_INLINE);
  g_assert_cmpstr (headline->function, ==, "keep_copy");
  g_assert_true (g_str_has_suffix (headline->file, "/tests/targets/inline-leak.c"));
  g_assert_cmpint (headline->line, ==, source_line ("inline-leak.c", "/* KEEP-LINE */"));
  caller = g_ptr_array_index (top->frames, h + 1);
  g_assert_cmpint (caller->kind, ==, TIDE_FRAME_NATIVE);
  g_assert_cmpstr (caller->function, ==, "main");
  g_assert_cmpint (caller->line, ==, source_line ("inline-leak.c", "/* CALL-LINE */"));
}

static void
test_inline_leak (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *cache_dir = tide_test_make_dir ("tide-symbols-inline");
  g_autofree char *cold = NULL;
  g_autofree char *expected = g_strdup_printf ("  1. inline-leak.c:%d keep_copy\n",
                                               source_line ("inline-leak.c", "/* KEEP-LINE */"));

  assert_keep_copy_inlined ();
  /* Twice: the second recording takes the inline levels from the cache. */
  g_autofree char *suite_cache = use_symbol_cache (cache_dir);

  for (guint i = 0; i < 2; i++)
    {
      g_auto(Run) run = { 0 };
      g_auto(Run) report = { 0 };
      const char *argv[] = { TIDE_TIDEMARK_EXE, "report", "--suspects", f->trace, NULL };
      g_autofree char *frames = NULL;

      record (f, "--all", "inline-leak", NULL, NULL, &run);
      g_assert_cmpint (run.status, ==, 0);
      assert_inline_suspect (f);
      run_argv (argv, &report);
      g_assert_cmpint (report.status, ==, 0);
      g_assert_nonnull (strstr (report.out, expected));
      frames = frames_as_text (f->trace);
      if (i == 0)
        cold = g_steal_pointer (&frames);
      else
        g_assert_cmpstr (frames, ==, cold);
      g_assert_cmpint (g_unlink (f->trace), ==, 0);
    }
  restore_symbol_cache (suite_cache);
  tide_test_remove_dir (cache_dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, fn) \
  g_test_add (path, Fixture, data, fixture_setup, fn, fixture_teardown)
  ADD ("/record/leaky/all", NULL, test_leaky_all);
  ADD ("/record/leaky/sampled", NULL, test_leaky_sampled);
  ADD ("/record/control/all", "--all", test_control);
  ADD ("/record/control/sampled", NULL, test_control);
  ADD ("/record/storm", NULL, test_storm);
  ADD ("/record/recorder-cpu", NULL, test_recorder_cpu);
  ADD ("/record/folded-frees", NULL, test_folded_frees);
  ADD ("/record/heap-layout/sampled", "--sample-bytes=4096", test_heap_layout);
  ADD ("/record/heap-layout/all", "--all", test_heap_layout);
  ADD ("/record/priority", NULL, test_priority);
  ADD ("/record/fork-exec", NULL, test_fork_exec);
  ADD ("/record/exec-while-stopped", NULL, test_exec_while_stopped);
  ADD ("/record/dlopen", NULL, test_dlopen);
  ADD ("/record/leaky/sampled-repeatable", NULL, test_sampled_repeatable);
  ADD ("/record/residency", NULL, test_residency);
  ADD ("/record/residency-at-exit", NULL, test_residency_at_exit);
  ADD ("/record/exit-status", NULL, test_exit_status);
  ADD ("/record/target-sigkill", NULL, test_target_sigkill);
  ADD ("/record/sigint-forwarded", NULL, test_sigint_forwarded);
  ADD ("/record/sigterm-forwarded", NULL, test_sigterm_forwarded);
  ADD ("/record/recorder-killed", NULL, test_recorder_killed);
  ADD ("/record/symbol-cache", NULL, test_symbol_cache);
  ADD ("/record/inline-leak", NULL, test_inline_leak);
  ADD ("/report/bad-input", NULL, test_report_bad_input);
  ADD ("/record/maps-no-drawing", NULL, test_record_maps_no_drawing);
#ifdef TIDE_HAVE_RENDER
  ADD ("/export/png-csv", NULL, test_export_png_csv);
  ADD ("/export/ranks", NULL, test_export_ranks);
  ADD ("/report/processes", NULL, test_report_processes);
  ADD ("/export/renderer-missing", NULL, test_export_renderer_missing);
#endif
#undef ADD
  return g_test_run ();
}
