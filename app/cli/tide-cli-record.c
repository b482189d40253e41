/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "tide-cli.h"
#include "tide-device-oom.h"
#include "tide-output-name.h"
#include "tide-recorder.h"
#include "tide-report-format.h"
#include "tide-report-rss.h"
#include "tide-report.h"
#include "tide-symbol-cache.h"
#include "tide-trace.h"
#include "tide-wire.h"

#define SUMMARY_SUSPECTS 3
/* Less than this beyond the heap in any step is not worth a line. */
#define SUMMARY_GROWTH_BYTES (G_GINT64_CONSTANT (1) << 20)

static char *
find_preload_library (void)
{
  g_autofree char *built = g_build_filename (TIDE_BUILD_ROOT, "capture", "preload",
                                             TIDE_PRELOAD_NAME, NULL);
  g_autofree char *installed = g_build_filename (TIDE_PKGLIBDIR, TIDE_PRELOAD_NAME, NULL);

  return tide_cli_find_part ("TIDEMARK_PRELOAD", built, installed);
}

/* The tidemark Python package and its bootstrap sitecustomize. */
static char *
find_python_dir (void)
{
  g_autofree char *built = g_build_filename (TIDE_BUILD_ROOT, "capture", "python", NULL);
  g_autofree char *installed = g_build_filename (TIDE_PKGDATADIR, "python", NULL);

  return tide_cli_find_part ("TIDEMARK_PYTHON_DIR", built, installed);
}

/* PYTHONPATH with the package first, the user's entries kept after it. */
static GStrv
python_environment (gboolean torch)
{
  g_autofree char *dir = find_python_dir ();
  const char *theirs = g_getenv ("PYTHONPATH");
  GStrv env = g_new0 (char *, 3);

  if (theirs != NULL && *theirs != '\0')
    env[0] = g_strdup_printf ("PYTHONPATH=%s:%s", dir, theirs);
  else
    env[0] = g_strdup_printf ("PYTHONPATH=%s", dir);
  env[1] = g_strdup (torch ? TIDE_ENV_TORCH "=1" : TIDE_ENV_TORCH "=0");
  return env;
}

/* CMD-YYYYMMDD-HHMMSS.tide, or with -2, -3 ... where that is taken. */
static char *
default_output (const char  *command,
                GError     **error)
{
  g_autofree char *base = g_path_get_basename (command);
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *stem = g_strdup_printf ("%s-%s", base, stamp);

  return tide_output_name_unique (stem, error);
}

/* Copy-on-write moves no RSS, so it is said in words: per process that
 * copied at least SUMMARY_GROWTH_BYTES, how much and from which of its
 * parent's blocks.  A worker that only reads copies the pages of the
 * reference counts it writes, a few pages of whatever objects it met:
 * `report --rss` lists those. */
static void
print_copy_on_write (TideTrace *trace)
{
  g_autoptr(GPtrArray) rows = tide_report_cow (trace, NULL);

  for (guint i = 0; rows != NULL && i < rows->len; i++)
    {
      const TideCowRow *row = g_ptr_array_index (rows, i);
      g_autofree char *line = NULL;

      if (row->copied_bytes < SUMMARY_GROWTH_BYTES)
        continue;
      line = tide_cow_row_describe (row);

      g_printerr ("tidemark: %s\n", line);
    }
}

/* The step and process whose memory grew most beyond its recorded blocks,
 * with what the classes say moved it. */
static void
print_largest_growth (GPtrArray *rows)
{
  g_autoptr(GArray) explanations = NULL;
  g_autofree char *line = NULL;
  const TideStepRow *r;
  g_autofree char *step = NULL;
  gint i;

  explanations = tide_rss_explain_steps (rows);
  i = tide_rss_find_largest_unexplained (rows, explanations, SUMMARY_GROWTH_BYTES);
  if (i < 0)
    return;
  r = g_ptr_array_index (rows, i);
  step = tide_step_row_describe (r);
  line = tide_rss_explanation_describe (&g_array_index (explanations, TideRssExplanation, i));
  g_printerr ("tidemark: largest growth beyond the heap: %s, %s (pid %" G_GINT64_FORMAT "): %s\n",
              step, r->process.role, r->process.pid, line);
}

/* Classes of resident memory that grow step over step, each with what to
 * do about it. */
static void
print_class_suspects (GPtrArray *classes)
{
  for (guint i = 0; i < classes->len && i < SUMMARY_SUSPECTS; i++)
    {
      TideClassSuspect *s = g_ptr_array_index (classes, i);
      g_autofree char *line = tide_class_suspect_describe (s);

      g_printerr ("tidemark: suspect: %s\ntidemark:   %s\n", line, s->hint);
    }
}

/* The suspect that grows fastest in @process_id, else in the job. */
static const TideGroup *
top_suspect_of (GPtrArray *suspects,
                gint64     process_id)
{
  for (guint i = 0; i < suspects->len; i++)
    if (((TideGroup *) g_ptr_array_index (suspects, i))->process.id == process_id)
      return g_ptr_array_index (suspects, i);
  return suspects->len > 0 ? g_ptr_array_index (suspects, 0) : NULL;
}

/* A line for each process that a signal killed or that exited with an
 * error, before anything else: a dead job is the first thing to say. */
static void
print_deaths (GPtrArray *summaries,
              GPtrArray *suspects)
{
  for (guint i = 0; i < summaries->len; i++)
    {
      const TideProcessSummary *s = g_ptr_array_index (summaries, i);
      g_autofree char *line = tide_process_summary_describe_death (s);
      const TideGroup *top = top_suspect_of (suspects, s->process->id);
      g_autofree char *where = NULL;
      g_autofree char *slope = NULL;
      g_autofree char *device = NULL;

      if (line == NULL)
        continue;
      if (top == NULL)
        {
          g_printerr ("tidemark: %s\n", line);
          continue;
        }
      where = top->frames->len ? tide_group_describe_headline_via (top) : g_strdup ("(no stack)");
      slope = tide_format_delta ((gint64) top->bytes_per_step);
      device = tide_format_device (top->device);
      g_printerr ("tidemark: %s; top suspect %s %s/step (%s)\n", line, where, slope, device);
    }
}

/* A process whose resident memory peaked between two readings: the
 * job's peak, summed from the readings, would not show it. */
static void
print_unread_peaks (GPtrArray *summaries)
{
  for (guint i = 0; i < summaries->len; i++)
    {
      g_autofree char *line =
        tide_process_summary_describe_unread_peak (g_ptr_array_index (summaries, i));

      if (line != NULL)
        g_printerr ("tidemark: %s\n", line);
    }
}

/* Where a device ran out of memory, or ran short and the program went on:
 * a dead job's cause comes before its suspects. */
static void
print_device_ooms (TideTrace *trace,
                   GPtrArray *suspects)
{
  g_autoptr(GPtrArray) ooms = tide_report_device_ooms (trace, suspects, NULL);

  for (guint i = 0; ooms != NULL && i < ooms->len; i++)
    {
      g_autofree char *line = tide_device_oom_describe (g_ptr_array_index (ooms, i));

      g_printerr ("tidemark: %s\n", line);
    }
}

static void
print_top_suspects (const char *path)
{
  g_autoptr(TideTrace) trace = tide_trace_open (path, NULL);
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) summaries = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GPtrArray) classes = NULL;

  if (trace == NULL)
    return;
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  /* The job's processes once, for their deaths and their peaks. */
  summaries = tide_report_processes (trace, NULL);
  if (suspects != NULL && summaries != NULL)
    print_deaths (summaries, suspects);
  if (suspects != NULL)
    print_device_ooms (trace, suspects);
  if (summaries != NULL)
    print_unread_peaks (summaries);
  print_copy_on_write (trace);
  /* The job's rows once, for the growth and the classes: a process
   * without steps has its heap read from its allocation rows. */
  rows = tide_report_job_steps (trace, NULL);
  if (rows != NULL)
    {
      print_largest_growth (rows);
      classes = tide_rss_class_suspects (rows);
    }
  if (suspects == NULL || classes == NULL)
    return;
  if (suspects->len == 0 && classes->len == 0)
    g_printerr ("tidemark: no leak suspects\n");
  for (guint i = 0; i < suspects->len && i < SUMMARY_SUSPECTS; i++)
    {
      TideGroup *g = g_ptr_array_index (suspects, i);
      g_autofree char *slope = tide_format_delta ((gint64) g->bytes_per_step);
      g_autofree char *where = g->frames->len ? tide_group_describe_headline_via (g)
                                              : g_strdup ("(no stack)");
      g_autofree char *device = tide_format_device (g->device);

      /* Host and device leaks of one stack differ only here. */
      g_printerr ("tidemark: suspect %u: %s/step since step %d in %s, %s (pid %" G_GINT64_FORMAT
                  ", %s)\n", i + 1, slope, g->growth_step, where, g->process.role,
                  g->process.pid, device);
    }
  print_class_suspects (classes);
  g_printerr ("tidemark: see `tidemark report %s --suspects`\n", path);
}

int
tide_cli_record (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *output = NULL;
  g_autofree char *preload = NULL;
  g_auto(GStrv) command = NULL;
  g_auto(GStrv) extra_env = NULL;
  g_autofree char *symbol_cache_dir = NULL;
  gint64 sample_bytes = 0;
  gboolean all = FALSE, torch = FALSE, quiet = FALSE, no_symbol_cache = FALSE;
  gboolean sync_steps = FALSE, force = FALSE;
  g_autofree char *output_name = NULL;
  gint poll_hz = 50;
  TideRecordOptions options = { 0 };
  int status;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output_name, "Trace file to write; %h host, "
      "%p pid, %r rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK)", "TRACE" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace the trace that -o names", NULL },
    { "sample-bytes", 0, 0, G_OPTION_ARG_INT64, &sample_bytes,
      "Mean bytes between sampled allocations (default 65536)", "N" },
    { "all", 0, 0, G_OPTION_ARG_NONE, &all, "Record every allocation exactly", NULL },
    { "torch", 0, 0, G_OPTION_ARG_NONE, &torch, "Hook PyTorch: steps and module scopes", NULL },
    { "poll-hz", 0, 0, G_OPTION_ARG_INT, &poll_hz, "RSS polls per second (default 50)", "HZ" },
    { "sync-steps", 0, 0, G_OPTION_ARG_NONE, &sync_steps,
      "Each step marker waits until the recorder has read the step's memory (exact for short "
      "steps, at a round trip per step)", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print no summary", NULL },
    { "no-symbol-cache", 0, 0, G_OPTION_ARG_NONE, &no_symbol_cache,
      "Resolve every frame afresh, and keep nothing for the next recording", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &command, NULL, "-- CMD [ARGS]" },
    { NULL }
  };

  context = g_option_context_new ("- record the memory of a program");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_strict_posix (context, TRUE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (command == NULL || command[0] == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "record needs a command: tidemark record -- CMD");
  if (all && sample_bytes != 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--all and --sample-bytes exclude each other");
  if (sample_bytes < 0 || poll_hz < 1 || poll_hz > 1000)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--sample-bytes must be positive and "
                                               "--poll-hz between 1 and 1000");
  preload = find_preload_library ();
  if (!g_file_test (preload, G_FILE_TEST_EXISTS))
    return tide_cli_fail (TIDE_EXIT_FAILURE, "cannot find %s (set TIDEMARK_PRELOAD)", preload);
  output = output_name == NULL ? default_output (command[0], &error)
                                : tide_output_name_resolve (output_name, force, &error);
  if (output == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  extra_env = python_environment (torch);
  if (!no_symbol_cache)
    symbol_cache_dir = tide_symbol_cache_default_dir ();

  options = (TideRecordOptions) {
    .argv = command, .output = output, .preload_path = preload,
    .sample_bytes = (guint64) sample_bytes, .all = all, .sync_steps = sync_steps,
    .poll_hz = (guint) poll_hz,
    .quiet = quiet, .extra_env = (const char *const *) extra_env,
    .symbol_cache_dir = symbol_cache_dir,
  };
  status = tide_record_run (&options, &error);
  if (status < 0)
    {
      tide_output_name_release (output);
      return tide_cli_fail (error->domain == G_IO_ERROR &&
                            error->code == G_IO_ERROR_NOT_FOUND ? 127 : TIDE_EXIT_FAILURE,
                            "%s", error->message);
    }
  if (!quiet)
    print_top_suspects (output);
  return status;
}
