/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tidemark attach -p PID [-o trace.tide] [--duration S]: record a process
 * that is already running, with eBPF, without restarting it.
 */
#include "config.h"

#include <gio/gio.h>

#include "tide-attach.h"
#include "tide-cli.h"
#include "tide-output-name.h"
#include "tide-symbol-cache.h"

/* attach-PID-YYYYMMDD-HHMMSS.tide, or with -2, -3 ... where that is taken. */
static char *
default_output (int      pid,
                GError **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *stem = g_strdup_printf ("attach-%d-%s", pid, stamp);

  return tide_output_name_unique (stem, error);
}

static gboolean
parse_uprobes (const char *value,
               gboolean   *malloc_out,
               GError    **error)
{
  if (value == NULL)
    return TRUE;
  if (g_strcmp0 (value, "malloc") == 0)
    {
      *malloc_out = TRUE;
      return TRUE;
    }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "--uprobes takes \"malloc\", not \"%s\"", value);
  return FALSE;
}

int
tide_cli_attach (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *output = NULL;
  g_autofree char *output_name = NULL;
  g_autofree char *step_symbol = NULL;
  g_autofree char *uprobes = NULL;
  g_autofree char *symbol_cache_dir = NULL;
  gint pid = 0, sample_pages = 0, step_interval = 0, ready_fd = -1;
  gdouble duration = 0;
  gboolean verbose = FALSE, quiet = FALSE, uprobes_malloc = FALSE, no_symbol_cache = FALSE;
  gboolean force = FALSE;
  TideAttachOptions options;
  GOptionEntry entries[] = {
    { "pid", 'p', 0, G_OPTION_ARG_INT, &pid, "Process to attach to", "PID" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output_name, "Trace file to write; %h host, "
      "%p pid, %r rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK)", "TRACE" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Replace the trace that -o names", NULL },
    { "duration", 0, 0, G_OPTION_ARG_DOUBLE, &duration,
      "Detach after S seconds (default: when the process exits or on Ctrl+C)", "S" },
    { "sample-pages", 0, 0, G_OPTION_ARG_INT, &sample_pages,
      "Record the stack of 1 page in N (default 16; 1: every page)", "N" },
    { "step-symbol", 0, 0, G_OPTION_ARG_STRING, &step_symbol,
      "A function of the target whose calls end steps (default: tidemark_step, and "
      "a PyTorch job's optimizer steps)", "NAME" },
    { "step-interval", 0, 0, G_OPTION_ARG_INT, &step_interval,
      "End a step every MS milliseconds instead", "MS" },
    { "uprobes", 0, 0, G_OPTION_ARG_STRING, &uprobes,
      "\"malloc\": also record malloc and free (slows the target a lot)", "malloc" },
    { "ready-fd", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &ready_fd, NULL, "FD" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Show libbpf's messages", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print no summary", NULL },
    { "no-symbol-cache", 0, 0, G_OPTION_ARG_NONE, &no_symbol_cache,
      "Resolve every frame afresh, and keep nothing for the next recording", NULL },
    { NULL }
  };

  context = g_option_context_new ("- record a running process with eBPF");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) ||
      !parse_uprobes (uprobes, &uprobes_malloc, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (argc > 1)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "attach takes no arguments besides its options: "
                                               "'%s'", argv[1]);
  if (pid <= 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "attach needs a process: tidemark attach -p PID");
  if (duration < 0 || sample_pages < 0 || step_interval < 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT,
                          "--duration, --sample-pages and --step-interval must be positive");
  if (step_symbol != NULL && step_interval > 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--step-symbol and --step-interval exclude "
                                               "each other");
  output = output_name == NULL ? default_output (pid, &error)
                                : tide_output_name_resolve (output_name, force, &error);
  if (output == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (!no_symbol_cache)
    symbol_cache_dir = tide_symbol_cache_default_dir ();

  options = (TideAttachOptions) {
    .pid = pid, .output = output, .duration_s = duration, .sample_pages = (guint) sample_pages,
    .step_symbol = step_symbol, .step_interval_ms = (guint) step_interval,
    .uprobes_malloc = uprobes_malloc, .verbose = verbose, .quiet = quiet, .ready_fd = ready_fd,
    .symbol_cache_dir = symbol_cache_dir,
  };
  if (tide_attach_run (&options, &error) < 0)
    {
      /* It may have failed before it wrote anything. */
      tide_output_name_release (output);
      return tide_cli_fail (TIDE_EXIT_FAILURE, "%s", error->message);
    }
  return TIDE_EXIT_OK;
}
