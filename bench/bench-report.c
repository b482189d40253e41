/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-report TRACE: what each mode of `tidemark report` costs on a
 * (large) trace: opening the trace and running the report's query, as
 * the command does before it formats the rows.  Modes: --steps,
 * --suspects and --retained, by stack and by scope, and --retained with
 * --step (the middle step, or --step N).  Medians of --runs (at least 5);
 * each run opens the trace afresh.  Prints a table against the target,
 * with the CPU time beside the wall time, and exits 1 when a mode
 * misses it.
 */
#include "config.h"

#include <stdio.h>
#include <sys/resource.h>

#include "tide-bench-median.h"
#include "tide-report.h"
#include "tide-trace.h"

#define TARGET_MS 500.0

typedef enum
{
  MODE_STEPS,
  MODE_SUSPECTS,
  MODE_RETAINED,
  MODE_RETAINED_STEP,
} Mode;

typedef struct
{
  const char  *name;
  Mode         mode;
  TideGroupBy  by;
} Case;

static const Case cases[] = {
  { "--steps", MODE_STEPS, TIDE_GROUP_BY_STACK },
  { "--suspects", MODE_SUSPECTS, TIDE_GROUP_BY_STACK },
  { "--suspects --by scope", MODE_SUSPECTS, TIDE_GROUP_BY_SCOPE },
  { "--retained", MODE_RETAINED, TIDE_GROUP_BY_STACK },
  { "--retained --by scope", MODE_RETAINED, TIDE_GROUP_BY_SCOPE },
  { "--retained --step N", MODE_RETAINED_STEP, TIDE_GROUP_BY_STACK },
  { "--retained --step N --by scope", MODE_RETAINED_STEP, TIDE_GROUP_BY_SCOPE },
};

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

/* User and system time of this process: on a shared machine the wall
 * time also holds the time other processes had the cores. */
static double
cpu_ms (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

/* Opens @path and runs one report; returns its time, or -1, and its
 * CPU time in @cpu. */
static double
run_case (const char *path,
          const Case *c,
          gint        step,
          guint      *n_rows,
          double     *cpu)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  double t0 = now_ms (), c0 = cpu_ms ();

  trace = tide_trace_open (path, &error);
  if (trace != NULL)
    switch (c->mode)
      {
      case MODE_STEPS:
        rows = tide_report_steps (trace, &error);
        break;
      case MODE_SUSPECTS:
        rows = tide_report_suspects (trace, c->by, &error);
        break;
      case MODE_RETAINED:
        rows = tide_report_retained (trace, 0, c->by, &error);
        break;
      case MODE_RETAINED_STEP:
        rows = tide_report_retained (trace, step, c->by, &error);
        break;
      }
  if (rows == NULL)
    {
      g_printerr ("bench-report: %s\n", error->message);
      return -1;
    }
  *n_rows = rows->len;
  *cpu = cpu_ms () - c0;
  return now_ms () - t0;
}

/* The middle step of the first process that has steps. */
static gint
middle_step (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);
  g_autoptr(GPtrArray) rows = trace ? tide_report_steps (trace, &error) : NULL;

  if (rows == NULL || rows->len == 0)
    return 1;
  return ((TideStepRow *) g_ptr_array_index (rows, rows->len / 2))->number;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new ("TRACE - time every report mode");
  g_autoptr(GError) error = NULL;
  int runs = 5, step = 0;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs (at least 5)", "N" },
    { "step", 0, 0, G_OPTION_ARG_INT, &step, "Step of --retained --step (default: the middle)",
      "N" },
    { NULL }
  };
  gboolean all_met = TRUE;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || runs < 5 ||
      step < 0)
    {
      g_printerr ("usage: bench-report [--runs N>=5] [--step N] TRACE\n");
      return 2;
    }
  if (step == 0)
    step = middle_step (argv[1]);

  g_print ("report modes on %s, %d runs each (open + query), N = %d\n", argv[1], runs, step);
  g_print ("  %-32s %10s %10s %10s %8s %8s\n", "mode", "median ms", "max ms", "CPU ms", "rows",
           "target");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree double *times = g_new (double, runs);
      g_autofree double *cpu = g_new (double, runs);
      guint n_rows = 0;
      double med;

      for (int r = 0; r < runs; r++)
        if ((times[r] = run_case (argv[1], &cases[i], step, &n_rows, &cpu[r])) < 0)
          return 1;
      med = tide_bench_median (times, runs);
      all_met &= med <= TARGET_MS;
      g_print ("  %-32s %10.1f %10.1f %10.1f %8u %8s\n", cases[i].name, med, times[runs - 1],
               tide_bench_median (cpu, runs), n_rows, med <= TARGET_MS ? "met" : "MISSED");
    }
  g_print ("  target: each mode at most %.0f ms (median)\n", TARGET_MS);
  return all_met ? 0 : 1;
}
