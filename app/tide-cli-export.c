/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-cli.h"
#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-storage-error.h"
#include "tide-trace.h"

int
tide_cli_export (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GString) csv = g_string_new (NULL);
  g_auto(GStrv) files = NULL;
  g_autofree char *csv_path = NULL;
  GOptionEntry entries[] = {
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path, "Write the steps table as CSV", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "TRACE" },
    { NULL }
  };

  context = g_option_context_new ("TRACE - export a trace's tables");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (files == NULL || files[0] == NULL || files[1] != NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "export needs exactly one trace file");
  if (csv_path == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "export needs --csv FILE");

  trace = tide_trace_open (files[0], &error);
  if (trace == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  rows = tide_report_steps (trace, &error);
  if (rows == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  tide_format_steps (csv, rows, TIDE_FORMAT_CSV);
  if (!g_file_set_contents (csv_path, csv->str, csv->len, &error))
    return tide_cli_fail (TIDE_EXIT_FAILURE, "%s", error->message);
  return TIDE_EXIT_OK;
}
