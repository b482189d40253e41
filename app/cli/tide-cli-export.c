/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-cli.h"
#include "tide-diff-format.h"
#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-storage-error.h"
#include "tide-trace-diff.h"
#include "tide-trace.h"

#ifdef TIDE_HAVE_RENDER
#include <gio/gio.h>
#include <gmodule.h>

#include "tide-render.h"
#endif

static int
export_csv (TideTrace             *trace,
            const TideProcessSpec *spec,
            const char            *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GHashTable) ids = NULL;
  g_autoptr(GString) csv = g_string_new (NULL);

  rows = tide_report_steps (trace, &error);
  if (rows == NULL ||
      (spec != NULL && (ids = tide_report_process_ids (trace, spec, &error)) == NULL))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (ids != NULL)
    tide_report_keep_steps (rows, ids);
  tide_format_steps (csv, rows, TIDE_FORMAT_CSV);
  if (!g_file_set_contents (path, csv->str, csv->len, &error))
    return tide_cli_fail (TIDE_EXIT_FAILURE, "%s", error->message);
  return TIDE_EXIT_OK;
}

/* The comparison's step rows, as `tidemark diff TRACE COMPARED --steps
 * --format csv` writes them (and the app's Comparison as CSV). */
static int
export_compare_csv (TideTrace             *trace,
                    TideTrace             *compared,
                    const TideProcessSpec *spec,
                    const char            *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceDiff) diff = NULL;
  g_autoptr(GString) csv = g_string_new (NULL);
  gint64 process_id = 0;

  if (spec != NULL && (process_id = tide_report_pick_process (trace, spec, &error)) == 0)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if ((diff = tide_trace_diff_new_for_process (trace, process_id, compared, &error)) == NULL)
    return tide_cli_storage_failure (error);
  tide_format_diff (csv, diff, TIDE_DIFF_STEPS, TIDE_FORMAT_CSV);
  if (!g_file_set_contents (path, csv->str, csv->len, &error))
    return tide_cli_fail (TIDE_EXIT_FAILURE, "%s", error->message);
  return TIDE_EXIT_OK;
}

#ifdef TIDE_HAVE_RENDER
typedef gboolean (*RenderPngFunc) (TideTrace   *trace,
                                   gint64       process_id,
                                   const char  *path,
                                   int          width,
                                   int          height,
                                   GError     **error);
G_STATIC_ASSERT (__builtin_types_compatible_p (RenderPngFunc,
                                               __typeof__ (&tide_render_process_png)));
typedef gboolean (*RenderComparePngFunc) (TideTrace   *trace,
                                          gint64       process_id,
                                          TideTrace   *compared,
                                          const char  *path,
                                          int          width,
                                          int          height,
                                          GError     **error);
G_STATIC_ASSERT (__builtin_types_compatible_p (RenderComparePngFunc,
                                               __typeof__ (&tide_render_compare_png)));

/* The renderer is a module (ui/meson.build says why), loaded only here;
 * returns @name's address in it. */
static gpointer
load_renderer (const char  *name,
               GError     **error)
{
  g_autofree char *built = g_build_filename (TIDE_BUILD_ROOT, "ui", TIDE_PNG_MODULE_NAME, NULL);
  g_autofree char *installed = g_build_filename (TIDE_PKGLIBDIR, TIDE_PNG_MODULE_NAME, NULL);
  g_autofree char *path = tide_cli_find_part ("TIDEMARK_PNG_MODULE", built, installed);
  GModule *module = g_module_open (path, G_MODULE_BIND_LOCAL);
  gpointer render = NULL;

  if (module == NULL || !g_module_symbol (module, name, &render))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "cannot load PNG export: %s",
                   g_module_error ());
      return NULL;
    }
  g_module_make_resident (module);
  return render;
}
#endif

/* One process's lanes: the one @spec names, or by default the one the
 * window opens on, so that ranks' step bands never overlap; with
 * @compared, its counterpart's lanes dashed over them. */
static int
export_png (TideTrace             *trace,
            TideTrace             *compared,
            const TideProcessSpec *spec,
            const char            *path,
            int                    width,
            int                    height)
{
#ifdef TIDE_HAVE_RENDER
  g_autoptr(GError) error = NULL;
  gpointer render = load_renderer (compared ? "tide_render_compare_png"
                                            : "tide_render_process_png", &error);
  gint64 process_id;
  gboolean ok;

  if (render == NULL)
    return tide_cli_fail (TIDE_EXIT_FAILURE, "%s", error->message);
  process_id = tide_report_pick_process (trace, spec, &error);
  if (error != NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (compared != NULL)
    ok = ((RenderComparePngFunc) render) (trace, process_id, compared, path, width, height,
                                          &error);
  else
    ok = ((RenderPngFunc) render) (trace, process_id, path, width, height, &error);
  /* A bad size, or a query that fails on what the trace holds (as in
   * tide-cli-report.c), is bad input. */
  if (!ok)
    return tide_cli_fail ((error->domain == G_IO_ERROR &&
                           error->code == G_IO_ERROR_INVALID_ARGUMENT) ||
                          error->domain == TIDE_STORAGE_ERROR ? TIDE_EXIT_BAD_INPUT
                                                              : TIDE_EXIT_FAILURE,
                          "%s", error->message);
  return TIDE_EXIT_OK;
#else
  return tide_cli_fail (TIDE_EXIT_FAILURE, "this tidemark was built without PNG export "
                        "(it needs GTK 4 at build time)");
#endif
}

int
tide_cli_export (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(TideTrace) compared = NULL;
  g_auto(GStrv) files = NULL;
  g_autofree char *compare_path = NULL;
  g_autofree char *csv_path = NULL;
  g_autofree char *png_path = NULL;
  g_autofree char *process = NULL;
  TideProcessSpec spec;
  int width = 1600, height = 900;
  int status = TIDE_EXIT_OK;
  GOptionEntry entries[] = {
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path, "Write the steps table as CSV", "FILE" },
    { "png", 0, 0, G_OPTION_ARG_FILENAME, &png_path, "Draw the timeline as PNG", "FILE" },
    { "width", 0, 0, G_OPTION_ARG_INT, &width, "PNG width in pixels (1600)", "W" },
    { "height", 0, 0, G_OPTION_ARG_INT, &height, "PNG height in pixels (900)", "H" },
    { "process", 0, 0, G_OPTION_ARG_STRING, &process,
      "The process whose lanes the PNG draws below the job lane, and the CSV's rows: a pid, or "
      "rank:N (default: the one with the top leak suspect, else the one that grew most)",
      "PID|rank:N" },
    { "compare", 0, 0, G_OPTION_ARG_FILENAME, &compare_path,
      "Export the comparison with another run, as the app's Compare With… shows it: the PNG "
      "draws its lanes dashed over the trace's, step on step, and the CSV has the step rows of "
      "`tidemark diff TRACE OTHER --steps --format csv`", "OTHER" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "TRACE" },
    { NULL }
  };

  context = g_option_context_new ("- export a trace's steps table and timeline");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (files == NULL || files[0] == NULL || files[1] != NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "export needs exactly one trace file");
  if (csv_path == NULL && png_path == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "export needs --csv FILE or --png FILE");

  if (process != NULL && !tide_process_spec_parse (process, &spec))
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "--process takes a pid or rank:N, not '%s'",
                          process);

  trace = tide_trace_open (files[0], &error);
  if (trace == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (compare_path != NULL && (compared = tide_trace_open (compare_path, &error)) == NULL)
    return tide_cli_fail (TIDE_EXIT_BAD_INPUT, "%s", error->message);
  if (csv_path != NULL)
    status = compared ? export_compare_csv (trace, compared, process ? &spec : NULL, csv_path)
                      : export_csv (trace, process ? &spec : NULL, csv_path);
  if (status == TIDE_EXIT_OK && png_path != NULL)
    status = export_png (trace, compared, process ? &spec : NULL, png_path, width, height);
  return status;
}
