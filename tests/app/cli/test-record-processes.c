/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record` end to end (test-record.c): threads, processes, libraries, and the
 * resident bytes of recorded blocks.
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
#include "tide-test-record.h"
#include "tide-test-util.h"
#include "tide-trace.h"

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
  g_assert_cmpint (leaf->process.pid, !=, grandchild->process.pid);
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
 * the first and the last end a step each, whose end has its private
 * memory read (--sync-steps), and the last ends by its exit.  The
 * recorder used to read the newest HELLO first, and end that image, the
 * one running, by the older one's exec.  Nothing that /proc tells of the
 * pid is the first image's once it exec'd: the recorder's poll, due as it
 * went on, gave it the last image's RSS (1 MiB more) after its end, and
 * the snapshot due then a reading of the last image's memory.  No
 * counter of an image lies after its end: the first image's heap lane,
 * which nothing changed, had its one point where the recorder met the
 * image's end of connection, 2 s after the exec that ended it. */
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
  g_autofree char *reads = NULL;
  const char *after_end = "SELECT count (*) FROM counters c JOIN processes p ON p.id = c.process_id"
                         " WHERE c.ts_ns > p.end_ns";

  record (f, "--sync-steps", "exec-while-stopped", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_str_equal (run.out, "stopped it waiting\ndone\n") ||
                 g_str_equal (run.out, "done\n"));
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 3);
  g_assert_cmpint (tide_test_query_int (trace, replaced), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, last), ==, 1);
  g_assert_cmpint (tide_test_query_int (trace, read), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, after_end), ==, 0);
  /* The snapshot due as the recorder went on read the first image after
   * its exec: lost, and counted, not the next image's values.  Only where
   * the target could stop the recorder waiting for its next event (it
   * reads /proc/PID/syscall, which takes the right to trace it: as root,
   * in CI): stopped in the middle of a round, the recorder may meet the
   * first image's end before its timer. */
  if (!g_str_has_prefix (run.out, "stopped it waiting\n"))
    return;
  g_assert_cmpint (tide_test_query_int (trace, "SELECT CAST (value AS INTEGER) FROM meta"
                                               " WHERE key = 'rss_class_reads_missed'"), ==, 1);
  reads = tide_report_describe_rss_reads (trace);
  g_assert_true (g_str_has_suffix (reads, "; 1 reading lost to processes that ended during them"));
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
          tide_test_query_int (trace, "SELECT count (*) FROM step_residency_totals") >= n)
        return;
      g_usleep (10 * 1000);
    }
  g_error ("the recorder measured no %" G_GINT64_FORMAT " steps in 60 s", n);
}

/* Records the target @name with @args under --all, letting it go on from
 * each of its first @paced steps once the trace holds that step's
 * measurement, so that no step's pages are counted in the one before,
 * however far the recorder lags; it must print "@name done". */
static void
record_paced (Fixture           *f,
              const char        *name,
              const char *const *args,
              gint64             paced)
{
  g_autofree char *exe = target_path (name);
  g_autofree char *done = g_strdup_printf ("%s done\n", name);
  const char *argv[16] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->trace,
                           "--", exe };
  g_autoptr(GError) error = NULL;
  char out[64] = "";
  guint n = 9;
  int in_fd, out_fd, wait_status;
  GPid recorder;
  FILE *out_file;

  for (guint i = 0; args[i] != NULL && n + 1 < G_N_ELEMENTS (argv); i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &recorder, &in_fd, &out_fd, NULL, &error);
  g_assert_no_error (error);
  for (gint64 step = 1; step <= paced; step++)
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
  g_assert_cmpstr (out, ==, done);
}

/* Asserts that the blocks of the trace's steps were resident by exactly
 * @mib[i] MiB at step i + 1's end, as the recorder measured them. */
static void
assert_resident_mib (Fixture      *f,
                     const gint64 *mib,
                     guint         n_steps)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->trace);
  g_autoptr(GPtrArray) steps = tide_report_steps (trace, NULL);

  g_assert_cmpuint (steps->len, ==, n_steps);
  for (guint i = 0; i < steps->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (steps, i);

      g_assert_true (row->has_resident);
      g_assert_cmpint (row->resident_explained, ==, mib[i] * MiB);
      g_assert_cmpint (row->rss_end, >=, row->resident_explained);
    }
}

/* rss-toucher with @args: the 64 MiB mapping is recorded; 4 MiB more of
 * it is resident per step, and the recorder measured exactly that from
 * pagemap at every step, the last one included. */
static void
check_rss_toucher (Fixture           *f,
                   const char *const *args)
{
  static const gint64 mib[] = { 4, 8, 12, 16, 20, 24, 28, 32 };
  const char *paused[16] = { "--pause-each-step" };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) steps = NULL;

  for (guint i = 0; args[i] != NULL && i + 2 < G_N_ELEMENTS (paused); i++)
    paused[i + 1] = args[i];
  record_paced (f, "rss-toucher", paused, G_N_ELEMENTS (mib) - 1);
  assert_resident_mib (f, mib, G_N_ELEMENTS (mib));
  trace = tide_test_open_trace (f->trace);
  steps = tide_report_steps (trace, NULL);
  for (guint i = 0; i < steps->len; i++)
    g_assert_cmpint (((TideStepRow *) g_ptr_array_index (steps, i))->mapped_end, ==, 64 * MiB);
}

/* ... and the recorder wrote a group's row only where it changed: the
 * mapping's at each of the 8 steps, as 4 MiB more of it came in, and no
 * row that repeats its group's last one. */
static void
test_residency (Fixture       *f,
                gconstpointer  data)
{
  const char *args[] = { NULL };
  g_autoptr(TideTrace) trace = NULL;

  check_rss_toucher (f, args);
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM step_residency_totals"), ==,
                   8);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM step_residency r"
                                               " JOIN allocations a ON a.stack_id = r.stack_id"
                                               " WHERE a.size = 64 * 1048576"), ==, 8);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM (SELECT resident_bytes,"
                                               " resident_born_bytes, lag (resident_bytes) OVER"
                                               " (PARTITION BY stack_id, scope_id"
                                               "  ORDER BY step_id) AS last FROM step_residency)"
                                               " WHERE last = resident_bytes"
                                               " AND resident_born_bytes = 0"), ==, 0);
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

/* A malloc'd block written whole at step 1 is known whole at the next
 * step ends without a read of its pages, while a mapping's pages, which
 * the program drops at step 3 without a free, are read again at each:
 * 16, 16, 8 and 12 MiB (resident-drop.c). */
static void
test_residency_dropped_pages (Fixture       *f,
                              gconstpointer  data)
{
  static const gint64 mib[] = { 16, 16, 8, 12 };
  const char *args[] = { NULL };

  record_paced (f, "resident-drop", args, G_N_ELEMENTS (mib) - 1);
  assert_resident_mib (f, mib, G_N_ELEMENTS (mib));
}

void
add_record_process_tests (void)
{
  RECORD_TEST_ADD ("/record/storm", NULL, test_storm);
  RECORD_TEST_ADD ("/record/recorder-cpu", NULL, test_recorder_cpu);
  RECORD_TEST_ADD ("/record/heap-layout/sampled", "--sample-bytes=4096", test_heap_layout);
  RECORD_TEST_ADD ("/record/heap-layout/all", "--all", test_heap_layout);
  RECORD_TEST_ADD ("/record/priority", NULL, test_priority);
  RECORD_TEST_ADD ("/record/fork-exec", NULL, test_fork_exec);
  RECORD_TEST_ADD ("/record/exec-while-stopped", NULL, test_exec_while_stopped);
  RECORD_TEST_ADD ("/record/dlopen", NULL, test_dlopen);
  RECORD_TEST_ADD ("/record/residency", NULL, test_residency);
  RECORD_TEST_ADD ("/record/residency-at-exit", NULL, test_residency_at_exit);
  RECORD_TEST_ADD ("/record/residency-dropped-pages", NULL, test_residency_dropped_pages);
}
