/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tidemark merge A.tide B.tide ... -o job.tide: one trace for a whole job.
 */
#include "config.h"

#include <gio/gio.h>
#include <stdio.h>

#include "tide-cli.h"
#include "tide-storage-error.h"
#include "tide-trace-merge.h"

typedef struct
{
  gint64   started_us;
  gboolean quiet;
  guint64  bytes_total;
} Progress;

static void
print_progress (guint        index,
                guint        n_inputs,
                const char  *path,
                guint64      bytes_done,
                guint64      bytes_total,
                gpointer     user_data)
{
  Progress *p = user_data;
  double seconds = (g_get_monotonic_time () - p->started_us) / 1e6;

  p->bytes_total = bytes_total;
  if (p->quiet)
    return;
  fprintf (stderr, "tidemark: merged %u/%u (%s): %.1f of %.1f MB, %.1f MB/s\n", index, n_inputs,
           path, bytes_done / 1e6, bytes_total / 1e6,
           seconds > 0 ? bytes_done / 1e6 / seconds : 0.0);
}

int
tide_cli_merge (int    argc,
                char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) files = NULL;
  g_autofree char *output = NULL;
  gboolean allow_incomplete = FALSE, force = FALSE, quiet = FALSE;
  Progress progress = { 0 };
  TideMergeOptions options = { 0 };
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The merged trace to write", "JOB" },
    { "allow-incomplete", 0, 0, G_OPTION_ARG_NONE, &allow_incomplete, "Merge traces whose "
      "recording did not finish, as they are", NULL },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace JOB if it exists", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print no progress", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "TRACE..." },
    { NULL }
  };

  context = g_option_context_new ("- merge the traces of a job's nodes into one");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (files == NULL || files[0] == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "merge needs traces: tidemark merge A.tide "
                                               "B.tide ... -o job.tide");
  if (output == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "merge needs -o JOB.tide");

  progress = (Progress) { g_get_monotonic_time (), quiet, 0 };
  options = (TideMergeOptions) {
    .allow_incomplete = allow_incomplete, .force = force,
    .progress = print_progress, .progress_data = &progress,
  };
  if (!tide_trace_merge ((const char * const *) files, output, &options, &error))
    return tide_cli_fail (error->domain == TIDE_STORAGE_ERROR ||
                          g_error_matches (error, G_IO_ERROR, G_IO_ERROR_EXISTS)
                          ? TIDE_EXIT_BAD_INPUT : TIDE_EXIT_FAILURE, "%s", error->message);
  /* The copies and then the job's summaries, which the lines above leave out. */
  if (!quiet)
    {
      double seconds = (g_get_monotonic_time () - progress.started_us) / 1e6;

      fprintf (stderr, "tidemark: wrote %s: %u traces, %.1f MB in %.1f s, %.1f MB/s\n", output,
               g_strv_length (files), progress.bytes_total / 1e6, seconds,
               seconds > 0 ? progress.bytes_total / 1e6 / seconds : 0.0);
    }
  return TIDE_EXIT_OK;
}
