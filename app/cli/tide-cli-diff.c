/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tidemark diff BEFORE AFTER: did the fix work?
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tide-cli.h"
#include "tide-diff-format.h"
#include "tide-storage-error.h"
#include "tide-trace-diff.h"

/* --process SPEC names the process in both runs; SPEC,SPEC one in each
 * (pids differ from run to run). */
static gboolean
parse_process_pair (const char      *text,
                    TideProcessSpec *before,
                    TideProcessSpec *after)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", 3);

  if (parts[0] == NULL || (parts[1] != NULL && parts[2] != NULL))
    return FALSE;
  return tide_process_spec_parse (parts[0], before) &&
         tide_process_spec_parse (parts[1] ? parts[1] : parts[0], after);
}

static gboolean
choose_parts (gboolean       steps,
              gboolean       suspects,
              gboolean       retained,
              TideFormat     format,
              TideDiffParts *parts)
{
  *parts = (steps ? TIDE_DIFF_STEPS : 0) | (suspects ? TIDE_DIFF_SUSPECTS : 0) |
           (retained ? TIDE_DIFF_RETAINED : 0);
  if (*parts == 0)
    *parts = format == TIDE_FORMAT_CSV ? TIDE_DIFF_STEPS : TIDE_DIFF_ALL;
  return format != TIDE_FORMAT_CSV || steps + suspects + retained <= 1;
}

int
tide_cli_diff (int    argc,
               char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) before = NULL;
  g_autoptr(TideTrace) after = NULL;
  g_autoptr(TideTraceDiff) diff = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(GStrv) files = NULL;
  g_autofree char *format_name = NULL;
  g_autofree char *by_name = NULL;
  g_autofree char *process = NULL;
  gint rank = -1;
  gboolean steps = FALSE, suspects = FALSE, retained = FALSE, fail_on_new = FALSE;
  TideProcessSpec before_spec, after_spec;
  gboolean has_spec = FALSE;
  TideFormat format = TIDE_FORMAT_TEXT;
  TideGroupBy by = TIDE_GROUP_BY_STACK;
  TideDiffParts parts;
  GOptionEntry entries[] = {
    { "steps", 0, 0, G_OPTION_ARG_NONE, &steps, "Per step: RSS, heap, device and retained "
      "change in each run, and the difference", NULL },
    { "suspects", 0, 0, G_OPTION_ARG_NONE, &suspects, "Leak suspects gone, new and changed",
      NULL },
    { "retained", 0, 0, G_OPTION_ARG_NONE, &retained, "What each run held at its end, by stack "
      "or scope", NULL },
    { "by", 0, 0, G_OPTION_ARG_STRING, &by_name, "Group suspects and retained bytes by stack "
      "(default) or scope", "stack|scope" },
    { "process", 0, 0, G_OPTION_ARG_STRING, &process, "The process to compare: a pid or rank:N "
      "in both runs, or one for each run separated by a comma", "SPEC[,SPEC]" },
    { "rank", 0, 0, G_OPTION_ARG_INT, &rank, "The same as --process rank:N", "N" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_name, "text (default), csv or json",
      "FORMAT" },
    { "fail-on-new-suspects", 0, 0, G_OPTION_ARG_NONE, &fail_on_new, "Exit with status 3 when "
      "AFTER has a leak suspect that BEFORE lacks", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "BEFORE AFTER" },
    { NULL }
  };

  context = g_option_context_new ("- compare two traces step by step");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (files == NULL || g_strv_length (files) != 2)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "diff needs two trace files: BEFORE AFTER");
  if (format_name != NULL && !tide_format_parse (format_name, &format))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "unknown format '%s' (text, csv or json)",
                          format_name);
  if (by_name != NULL && !g_str_equal (by_name, "stack") && !g_str_equal (by_name, "scope"))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "unknown grouping '%s' (stack or scope)", by_name);
  if (g_strcmp0 (by_name, "scope") == 0)
    by = TIDE_GROUP_BY_SCOPE;
  if (!choose_parts (steps, suspects, retained, format, &parts))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "csv takes one of --steps, --suspects and "
                                               "--retained at a time");
  if (process != NULL && rank >= 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--process and --rank exclude each other");
  if (process != NULL && !(has_spec = parse_process_pair (process, &before_spec, &after_spec)))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--process takes a pid or rank:N, or two "
                                               "separated by a comma, not '%s'", process);
  if (rank >= 0)
    {
      has_spec = TRUE;
      before_spec = after_spec = (TideProcessSpec) { .pid = 0, .dist_rank = rank };
    }

  if ((before = tide_trace_open (files[0], &error)) == NULL ||
      (after = tide_trace_open (files[1], &error)) == NULL)
    return tide_cli_storage_failure (error);
  diff = tide_trace_diff_new (before, after, has_spec ? &before_spec : NULL,
                              has_spec ? &after_spec : NULL, by, &error);
  if (diff == NULL)
    return tide_cli_storage_failure (error);
  if (!diff->same_program)
    fprintf (stderr, "tidemark: note: %s and %s record different programs; their steps are "
                     "compared by %s all the same\n", files[0], files[1],
             diff->align == TIDE_DIFF_ALIGN_LABEL ? "label" : "number");
  tide_format_diff (out, diff, parts, format);
  fputs (out->str, stdout);
  if (fail_on_new && tide_trace_diff_count (diff, TIDE_SUSPECT_NEW) > 0)
    return TIDE_EXIT_NEW_SUSPECTS;
  return TIDE_EXIT_OK;
}
