/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <stdio.h>

#include "tide-cli.h"
#include "tide-plumbing.h"
#include "tide-report-format.h"
#include "tide-report-rss.h"
#include "tide-report.h"
#include "tide-storage-error.h"
#include "tide-trace.h"

typedef struct
{
  gboolean    steps;
  gboolean    suspects;
  gboolean    retained;
  gboolean    processes;
  gboolean    rss;
  gint        step;
  TideGroupBy by;
  TideFormat  format;
  GHashTable *only;             /* processes.id set of --process, or NULL */
  gboolean    native;           /* text: every frame of each stack */
} ReportRequest;

static gboolean
run_report (TideTrace           *trace,
            const ReportRequest *req,
            GString             *out,
            GError             **error)
{
  if (req->processes)
    {
      g_autoptr(GPtrArray) summaries = tide_report_processes (trace, error);
      TideJobPeak peak;

      if (summaries == NULL || !tide_report_job_peak (trace, &peak, error))
        return FALSE;
      if (req->only != NULL)
        tide_report_keep_summaries (summaries, req->only);
      /* The job's, which --process does not narrow. */
      tide_format_processes (out, summaries, req->only == NULL ? &peak : NULL, req->format);
    }
  if (req->steps)
    {
      g_autoptr(GPtrArray) rows = tide_report_job_steps (trace, error);
      if (rows == NULL)
        return FALSE;
      if (req->only != NULL)
        tide_report_keep_steps (rows, req->only);
      if (out->len > 0)
        g_string_append_c (out, '\n');
      tide_format_steps (out, rows, req->format);
    }
  if (req->rss)
    {
      g_autoptr(GPtrArray) rows = tide_report_job_steps (trace, error);
      if (rows == NULL)
        return FALSE;
      if (req->only != NULL)
        tide_report_keep_steps (rows, req->only);
      if (out->len > 0)
        g_string_append_c (out, '\n');
      tide_format_rss (out, rows, req->format);
      if (req->format == TIDE_FORMAT_TEXT)
        {
          g_autofree char *reads = tide_report_describe_rss_reads (trace);

          if (reads != NULL)
            g_string_append_printf (out, "\n%s\n", reads);
        }
    }
  if ((req->suspects || req->retained) && req->format == TIDE_FORMAT_TEXT)
    {
      g_autofree char *measured = tide_report_describe_attach (trace);

      if (measured != NULL)
        g_string_append_printf (out, "%s%s\n", out->len > 0 ? "\n" : "", measured);
    }
  if (req->suspects)
    {
      g_autoptr(GPtrArray) groups = tide_report_suspects (trace, req->by, error);
      g_autoptr(GPtrArray) classes = NULL;

      if (groups == NULL)
        return FALSE;
      /* The classes of resident memory that grow like a leak, after the
       * stacks. */
      classes = tide_report_class_suspects (trace, error);
      if (classes == NULL)
        return FALSE;
      if (req->only != NULL)
        {
          tide_report_keep_groups (groups, req->only);
          tide_report_keep_class_suspects (classes, req->only);
        }
      if (out->len > 0)
        g_string_append_c (out, '\n');
      tide_format_suspects (out, groups, classes, req->by, req->format,
                            req->native ? TIDE_FRAMES_ALL : TIDE_FRAMES_AROUND_HEADLINE);
    }
  if (req->retained)
    {
      g_autoptr(GPtrArray) groups = tide_report_retained (trace, req->step, req->by, error);
      if (groups == NULL)
        return FALSE;
      if (req->only != NULL)
        tide_report_keep_groups (groups, req->only);
      tide_format_groups_detailed (out, groups, TIDE_GROUPS_RETAINED, req->by, req->step,
                                   req->format,
                                   req->native ? TIDE_FRAMES_ALL : TIDE_FRAMES_AROUND_HEADLINE);
    }
  return TRUE;
}

int
tide_cli_report (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(GStrv) files = NULL;
  g_autofree char *format = NULL;
  g_autofree char *by = NULL;
  g_autofree char *early_end = NULL;
  g_autofree char *process = NULL;
  g_autoptr(GHashTable) only = NULL;
  TideProcessSpec spec;
  g_auto(GStrv) plumbing = NULL;
  g_auto(GStrv) library = NULL;
  g_auto(GStrv) own_code = NULL;
  ReportRequest req = { .by = TIDE_GROUP_BY_STACK };
  GOptionEntry entries[] = {
    { "steps", 0, 0, G_OPTION_ARG_NONE, &req.steps, "One row per step", NULL },
    { "suspects", 0, 0, G_OPTION_ARG_NONE, &req.suspects, "Leak suspects, fastest growth first",
      NULL },
    { "retained", 0, 0, G_OPTION_ARG_NONE, &req.retained,
      "What is still live (at the trace end, or at the end of --step)", NULL },
    { "rss", 0, 0, G_OPTION_ARG_NONE, &req.rss, "Each process's memory change per step, "
      "explained: copy-on-write, heap, allocator, files, shmem", NULL },
    { "processes", 0, 0, G_OPTION_ARG_NONE, &req.processes, "The job's processes: role, rank, "
      "peak, growth and suspects", NULL },
    { "process", 0, 0, G_OPTION_ARG_STRING, &process, "Only this process: a pid, or rank:N",
      "PID|rank:N" },
    { "step", 0, 0, G_OPTION_ARG_INT, &req.step, "With --retained: what this step allocated "
      "and kept", "N" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &by, "Group by stack (default) or scope", "stack|scope" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (default), csv or json", "FORMAT" },
    { "native", 0, 0, G_OPTION_ARG_NONE, &req.native, "Text: print every frame of each stack, "
      "native ones included", NULL },
    { "plumbing", 0, 0, G_OPTION_ARG_STRING_ARRAY, &plumbing, "One more frame pattern that never "
      "names a stack (GLOB, module:GLOB or file:GLOB; repeatable)", "PATTERN" },
    { "library", 0, 0, G_OPTION_ARG_STRING_ARRAY, &library, "Python files that are library code, "
      "beside installed packages and the standard library (GLOB on the path; repeatable)",
      "GLOB" },
    { "own-code", 0, 0, G_OPTION_ARG_STRING_ARRAY, &own_code, "Python files that are your own "
      "code even where installed, as a torch checkout (GLOB on the path; repeatable)", "GLOB" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "TRACE" },
    { NULL }
  };

  context = g_option_context_new ("- report what a trace retained");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (files == NULL || files[0] == NULL || files[1] != NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "report needs exactly one trace file");
  if (format != NULL && !tide_format_parse (format, &req.format))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "unknown format '%s' (text, csv or json)", format);
  if (by != NULL && g_strcmp0 (by, "stack") != 0 && g_strcmp0 (by, "scope") != 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "unknown grouping '%s' (stack or scope)", by);
  if (g_strcmp0 (by, "scope") == 0)
    req.by = TIDE_GROUP_BY_SCOPE;
  if (req.step < 0 || (req.step > 0 && !req.retained))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--step N goes with --retained, N >= 1");
  if (process != NULL && !tide_process_spec_parse (process, &spec))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--process takes a pid or rank:N, not '%s'",
                          process);
  if (req.steps + req.suspects + req.retained + req.processes + req.rss > 1 &&
      req.format != TIDE_FORMAT_TEXT)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "csv and json take one report at a time");
  if (!req.steps && !req.suspects && !req.retained && !req.processes && !req.rss)
    req.steps = req.suspects = TRUE;

  trace = tide_trace_open (files[0], &error);
  if (trace == NULL)
    return tide_cli_storage_failure (error);
  for (guint i = 0; plumbing != NULL && plumbing[i] != NULL; i++)
    if (!tide_trace_add_plumbing (trace, plumbing[i], &error))
      return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--plumbing: %s", error->message);
  for (guint i = 0; library != NULL && library[i] != NULL; i++)
    tide_trace_add_library (trace, library[i]);
  for (guint i = 0; own_code != NULL && own_code[i] != NULL; i++)
    tide_trace_add_own_code (trace, own_code[i]);
  if (process != NULL && (req.only = only = tide_report_process_ids (trace, &spec, &error)) == NULL)
    return tide_cli_storage_failure (error);
  /* The note only with a report: a failure says one line. */
  if (!run_report (trace, &req, out, &error))
    return tide_cli_storage_failure (error);
  early_end = tide_trace_describe_early_end (trace);
  if (early_end != NULL)
    fprintf (stderr, "tidemark: note: %s ends early (%s); the report covers what was "
                     "written before\n", files[0], early_end);
  else if (!tide_trace_is_complete (trace))
    fprintf (stderr, "tidemark: note: %s is incomplete (its recording did not finish); "
                     "the report covers what was written\n", files[0]);
  fputs (out->str, stdout);
  return TIDE_EXIT_OK;
}
