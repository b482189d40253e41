/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tidemark: record, report and export memory traces of training jobs.
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "tide-cli.h"
#include "tide-storage-error.h"

static const char usage[] =
  "Usage:\n"
  "  tidemark record [-o trace.tide] [--sample-bytes N | --all] [--torch] -- CMD [ARGS]\n"
  "  tidemark attach -p PID [-o trace.tide] [--duration S] [--step-symbol NAME |\n"
  "                  --step-interval MS] [--uprobes malloc]\n"
  "  tidemark report trace.tide [--steps | --suspects | --retained [--step N] [--by stack|scope]]\n"
  "                             [--format text|csv|json]\n"
  "  tidemark export trace.tide [--png out.png [--width W --height H]] [--csv out.csv]\n"
  "  tidemark diff BEFORE.tide AFTER.tide [--steps | --suspects | --retained] [--by stack|scope]\n"
  "                [--process SPEC[,SPEC] | --rank N] [--format text|csv|json]\n"
  "                [--fail-on-new-suspects]\n"
  "  tidemark merge A.tide B.tide ... -o job.tide [--allow-incomplete] [--force]\n"
  "\n"
  "Run `tidemark COMMAND --help` for the options of one command.\n";

int
tide_cli_fail (int         status,
               const char *format,
               ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  fprintf (stderr, "tidemark: %s\n", message);
  return status;
}

/* A trace that cannot be read is bad input: a query that fails on a
 * trace that opened fails on what the file holds (a damaged page, a table
 * that is not there), since the queries are the tested ones. */
int
tide_cli_storage_failure (GError *error)
{
  return tide_cli_fail (error->domain == TIDE_STORAGE_ERROR ? TIDE_EXIT_BAD_INPUT
                                                            : TIDE_EXIT_FAILURE,
                        "%s", error->message);
}

/* @override from the environment, else @built_path when this tidemark runs
 * from its build tree, else @installed_path. */
char *
tide_cli_find_part (const char *override_var,
                    const char *built_path,
                    const char *installed_path)
{
  const char *override = g_getenv (override_var);
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

  if (override != NULL && *override != '\0')
    return g_strdup (override);
  if (self != NULL && g_str_has_prefix (self, TIDE_BUILD_ROOT "/") &&
      g_file_test (built_path, G_FILE_TEST_EXISTS))
    return g_strdup (built_path);
  return g_strdup (installed_path);
}

int
main (int    argc,
      char **argv)
{
  setlocale (LC_ALL, "");

  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      fputs (usage, argc < 2 ? stderr : stdout);
      return argc < 2 ? TIDE_EXIT_BAD_INPUT : TIDE_EXIT_OK;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("tidemark %s\n", PACKAGE_VERSION);
      return TIDE_EXIT_OK;
    }
  /* `tidemark record --help` says "Usage: tidemark record ...". */
  {
    g_autofree char *prgname = g_strdup_printf ("tidemark %s", argv[1]);
    g_set_prgname (prgname);
  }
  if (strcmp (argv[1], "record") == 0)
    return tide_cli_record (argc - 1, argv + 1);
  if (strcmp (argv[1], "report") == 0)
    return tide_cli_report (argc - 1, argv + 1);
  if (strcmp (argv[1], "export") == 0)
    return tide_cli_export (argc - 1, argv + 1);
  if (strcmp (argv[1], "diff") == 0)
    return tide_cli_diff (argc - 1, argv + 1);
  if (strcmp (argv[1], "merge") == 0)
    return tide_cli_merge (argc - 1, argv + 1);
#ifdef TIDE_HAVE_ATTACH
  if (strcmp (argv[1], "attach") == 0)
    return tide_cli_attach (argc - 1, argv + 1);
#endif

  fputs (usage, stderr);
  return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "unknown command '%s'", argv[1]);
}
