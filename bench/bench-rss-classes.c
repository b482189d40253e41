/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-rss-classes: what the recorder's readers of the RSS classes cost on
 * a process with many mappings.  The bench maps MAPPINGS separate pages
 * (every other one read-only, so that no two merge), writes each, forks a
 * child that inherits them all, and times, medians of --runs:
 *
 *   status        /proc/PID/status: the kernel's split, read at step ends;
 *   smaps_rollup  the page walk read twice a second (and at step ends
 *                 under --sync-steps);
 *   cow open      the child's inherited pages noted at fork;
 *   cow measure   its copied pages counted, twice a second;
 *   anon split    its maps read again, and the resident pages of its
 *                 thread stacks and libraries' bss counted, with each
 *                 smaps_rollup.
 *
 * The recorder reads smaps_rollup and the copy-on-write count of every
 * process twice a second, or less often where a snapshot would take more
 * than 1% of the time to the next (ROLLUP_COST_FACTOR of
 * capture/core/tide-recording.c): the bench says at which
 * interval that puts one such process, and what twice a second would
 * cost.  With --pid it times the same readers (but the copy-on-write
 * count, which needs a fork) on a running process, a PyTorch job's say.
 *
 *   bench/bench-rss-classes [--mappings N] [--runs N] [--pid PID]
 */
#include "config.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tide-anon-split.h"
#include "tide-cow.h"
#include "tide-bench-median.h"
#include "tide-procfs.h"

#define BUDGET_CORE_SHARE 0.01  /* of the recorder's thread: ROLLUP_COST_FACTOR */
#define POLL_S            0.5     /* ROLLUP_POLL_NS */

static double
median (GArray *ms)
{
  return tide_bench_median ((double *) (gpointer) ms->data, ms->len);
}

static void
make_mappings (guint n)
{
  long page = sysconf (_SC_PAGESIZE);

  for (guint i = 0; i < n; i++)
    {
      char *p = mmap (NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

      if (p == MAP_FAILED)
        g_error ("mmap failed after %u mappings", i);
      p[0] = 1;
      /* Neighbours of different protections never merge into one VMA. */
      if (i % 2)
        mprotect (p, page, PROT_READ);
    }
}

static pid_t
fork_sleeper (void)
{
  pid_t child = fork ();

  if (child == 0)
    {
      pause ();
      _exit (0);
    }
  return child;
}

static int
count_mappings (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/maps", pid);
  g_autofree char *text = NULL;
  int n = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  for (const char *p = text; *p; p++)
    n += *p == '\n';
  return n;
}

int
main (int    argc,
      char **argv)
{
  gint mappings = 10000, runs = 21, pid = 0;
  GOptionEntry entries[] = {
    { "mappings", 0, 0, G_OPTION_ARG_INT, &mappings, "Mappings to make (default 10000)", "N" },
    { "pid", 0, 0, G_OPTION_ARG_INT, &pid, "Time the readers on this process instead", "PID" },
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Readings of each kind (default 21)", "N" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- cost of the RSS class readers");
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) status_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) rollup_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) open_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) measure_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) split_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(TideProcCounters) counters = NULL;
  g_autoptr(TidePagemap) pagemap = NULL;
  g_autoptr(TideAnonSplitter) splitter = tide_anon_splitter_new ();
  TideRssClasses classes;
  TideAnonSplit split = { 0 };
  guint64 inherited = 0;
  double snapshot_ms, interval_s;
  pid_t child;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || mappings < 1 || runs < 1)
    g_error ("%s", error ? error->message : "--mappings and --runs must be positive");
  if (pid > 0)
    child = pid;
  else
    {
      make_mappings ((guint) mappings);
      child = fork_sleeper ();
    }
  counters = tide_proc_counters_open (child, &error);
  g_assert_no_error (error);
  pagemap = tide_pagemap_open (child, &error);
  g_assert_no_error (error);

  for (gint r = 0; r < runs; r++)
    {
      gint64 t0 = g_get_monotonic_time (), t1, t2, t3, t4, t5;
      g_autoptr(TideCow) cow = NULL;
      guint64 copied;
      gint64 left;
      double v;

      tide_proc_counters_read_classes (counters, FALSE, &classes);
      t1 = g_get_monotonic_time ();
      tide_proc_counters_read_classes (counters, TRUE, &classes);
      t2 = g_get_monotonic_time ();
      if (pid == 0)
        {
          cow = tide_cow_open (child, getpid (), &error);
          g_assert_no_error (error);
        }
      t3 = g_get_monotonic_time ();
      if (cow != NULL)
        tide_cow_measure (cow, &copied, &left, NULL);
      t4 = g_get_monotonic_time ();
      tide_anon_splitter_read (splitter, child, pagemap, &split);
      t5 = g_get_monotonic_time ();
      inherited = cow != NULL ? tide_cow_get_inherited (cow) : 0;
      v = (t1 - t0) / 1e3; g_array_append_val (status_ms, v);
      v = (t2 - t1) / 1e3; g_array_append_val (rollup_ms, v);
      v = (t3 - t2) / 1e3; g_array_append_val (open_ms, v);
      v = (t4 - t3) / 1e3; g_array_append_val (measure_ms, v);
      v = (t5 - t4) / 1e3; g_array_append_val (split_ms, v);
    }

  snapshot_ms = median (rollup_ms) + median (measure_ms) + median (split_ms);
  interval_s = MAX (POLL_S, snapshot_ms / 1000.0 / BUDGET_CORE_SHARE);
  g_print ("process with %d mappings, RSS %.1f MiB (copy-on-write inherited pages: %.1f MiB), "
           "medians of %d:\n", count_mappings (child), classes.rss_bytes / 1048576.0,
           inherited / 1048576.0, runs);
  g_print ("  status        %8.3f ms\n", median (status_ms));
  g_print ("  smaps_rollup  %8.3f ms\n", median (rollup_ms));
  g_print ("  cow open      %8.3f ms (once, at fork)\n", median (open_ms));
  g_print ("  cow measure   %8.3f ms\n", median (measure_ms));
  g_print ("  anon split    %8.3f ms (maps, thread stacks and library data: %.1f MiB and %.1f "
           "MiB, of which %.1f MiB written file pages)\n", median (split_ms),
           split.thread_stacks_bytes / 1048576.0, split.lib_data_bytes / 1048576.0,
           split.lib_written_bytes / 1048576.0);
  g_print ("a snapshot of it: %.3f ms; twice a second that would be %.2f%% of one core; "
           "at the budget of %.0f%% the recorder reads it every %.2f s\n", snapshot_ms,
           100 * snapshot_ms * 2 / 1000.0, 100 * BUDGET_CORE_SHARE, interval_s);
  if (pid == 0)
    {
      kill (child, SIGKILL);
      waitpid (child, NULL, 0);
    }
  return 0;
}
