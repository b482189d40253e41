/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record` end to end (test-record.c): the export command, and the drawing it
 * leaves out of a recording.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TIDE_HAVE_RENDER
#include "tide-test-png.h"
#endif

#include "preload-target.h"
#include "tide-plumbing.h"
#include "tide-report.h"
#include "tide-process-end.h"
#include "tide-schema.h"
#include "tide-test-record.h"
#include "tide-test-util.h"
#include "tide-trace.h"

/* ---- the export command ------------------------------------------------------ */

/* What a recording maps: the recorder is the parent of the target's shell. */
static void
test_record_maps_no_drawing (Fixture       *f,
                             gconstpointer  data)
{
  g_auto(Run) run = { 0 };

  record (f, NULL, "/bin/sh", "-c", "cat /proc/$PPID/maps", &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "/libsqlite3.so"));
  /* PNG export's cairo and pango are a module that only export loads. */
  g_assert_null (strstr (run.out, "/libcairo"));
  g_assert_null (strstr (run.out, "/libpango"));
}

#ifdef TIDE_HAVE_RENDER
static void
test_export_png_csv (Fixture       *f,
                     gconstpointer  data)
{
  g_autofree char *png = g_build_filename (f->dir, "timeline.png", NULL);
  g_autofree char *csv = g_build_filename (f->dir, "steps.csv", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", png, "--width", "640",
                         "--height", "360", "--csv", csv, NULL };
  g_auto(Run) recorded = { 0 };
  g_auto(Run) exported = { 0 };
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  cairo_surface_t *image;

  record (f, "--all", "leaky-steps", NULL, NULL, &recorded);
  g_assert_cmpint (recorded.status, ==, 0);
  run_argv (argv, &exported);
  g_assert_cmpint (exported.status, ==, 0);
  g_assert_cmpstr (exported.err, ==, "");

  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 10 + 1);  /* header, steps, "" */
  /* Each step names its process: pid, role and distributed rank. */
  g_assert_true (g_str_has_prefix (lines[0], "pid,role,dist_rank,steps_pid,step,label,start_ns,"));

  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (cairo_image_surface_get_width (image), ==, 640);
  g_assert_cmpint (cairo_image_surface_get_height (image), ==, 360);
  /* The RSS lane's line and fill, and the leak steps' bands (tide-render.h). */
  g_assert_cmpuint (tide_test_count_pixels (image, 0x1c71d8), >, 0);
  g_assert_cmpuint (tide_test_count_pixels (image, 0xc6dcf5), >, 0);
  g_assert_cmpuint (tide_test_count_pixels (image, 0xfbe0e1), >, 0);
  g_assert_cmpuint (tide_test_count_pixels (image, 0xe01b24), >, 0);
  cairo_surface_destroy (image);
}

/* tidemark export TRACE --png PNG [--process P]: the PNG's bytes, and the
 * number of its pixels in the light palette's leak band colour. */
static char *
export_process_png (Fixture    *f,
                    const char *process,
                    gsize      *len,
                    guint      *leak_pixels)
{
  g_autofree char *png = g_build_filename (f->dir, "ranks.png", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", png, "--width", "400",
                         "--height", "300", process ? "--process" : NULL, process, NULL };
  g_auto(Run) exported = { 0 };
  cairo_surface_t *image;
  char *bytes = NULL;

  run_argv (argv, &exported);
  g_assert_cmpstr (exported.err, ==, "");
  g_assert_cmpint (exported.status, ==, 0);
  g_assert_true (g_file_get_contents (png, &bytes, len, NULL));
  image = cairo_image_surface_create_from_png (png);
  *leak_pixels = tide_test_count_pixels (image, 0xfbe0e1);
  cairo_surface_destroy (image);
  return bytes;
}

/* A two-rank trace exports one process's lanes and step bands: rank 0's
 * have no leak band, rank 1's do, and by default it is rank 1, which has
 * the top suspect.  The CSV narrows to the process and names it. */
static void
test_export_ranks (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *csv = g_build_filename (f->dir, "ranks.csv", NULL);
  const char *csv_argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--csv", csv,
                             "--process", "501", NULL };
  const char *missing_argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--csv", csv,
                                 "--process", "rank:5", NULL };
  g_auto(Run) csv_run = { 0 };
  g_auto(Run) missing = { 0 };
  g_autofree char *rank0 = NULL, *rank1 = NULL, *chosen = NULL, *text = NULL;
  g_auto(GStrv) lines = NULL;
  gsize len0, len1, len_chosen;
  guint leak0, leak1, leak_chosen;

  tide_test_write_two_ranks (f->trace);
  rank0 = export_process_png (f, "rank:0", &len0, &leak0);
  rank1 = export_process_png (f, "rank:1", &len1, &leak1);
  chosen = export_process_png (f, NULL, &len_chosen, &leak_chosen);
  g_assert_cmpuint (leak0, ==, 0);
  g_assert_cmpuint (leak1, >, 0);
  g_assert_cmpmem (chosen, len_chosen, rank1, len1);

  run_argv (csv_argv, &csv_run);
  g_assert_cmpint (csv_run.status, ==, 0);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 10 + 1);
  g_assert_true (g_str_has_prefix (lines[1], "501,rank 1,1,501,1,,0,1000000,"));

  run_argv (missing_argv, &missing);
  g_assert_cmpint (missing.status, ==, 2);
  g_assert_true (g_str_has_suffix (missing.err, "has no process with rank 5\n"));
}

/* report --processes and --process through the command line. */
static void
test_report_processes (Fixture       *f,
                       gconstpointer  data)
{
  const char *list_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--processes",
                              "--format", "csv", NULL };
  const char *steps_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--steps",
                               "--process", "rank:1", NULL };
  const char *bad_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--process", "abc", NULL };
  g_auto(Run) list = { 0 };
  g_auto(Run) steps = { 0 };
  g_auto(Run) bad = { 0 };

  tide_test_write_two_ranks (f->trace);
  run_argv (list_argv, &list);
  g_assert_cmpint (list.status, ==, 0);
  g_assert_cmpstr (list.out, ==,
                   "pid,parent_pid,role,dist_rank,peak_rss_bytes,peak_rss_read_bytes,"
                   "rss_growth_bytes,steps,suspects,end,exit_code,signal,signal_name,"
                   "core_dumped,oom_killed,oom_scope,oom_limit_bytes,end_step,device_oom,command\n"
                   "500,,rank 0,0,115343360,115343360,9437184,10,0,exited,0,,,0,0,,,,,train --ddp\n"
                   "501,,rank 1,1,115343360,115343360,9437184,10,1,exited,0,,,0,0,,,,,train --ddp\n");
  run_argv (steps_argv, &steps);
  g_assert_cmpint (steps.status, ==, 0);
  g_assert_true (g_str_has_prefix (steps.out, "Steps of rank 1 (pid 501)\n"));
  run_argv (bad_argv, &bad);
  g_assert_cmpint (bad.status, ==, 2);
  g_assert_cmpstr (bad.err, ==, "tidemark: --process takes a pid or rank:N, not 'abc'\n");
}

static void
test_export_renderer_missing (Fixture       *f,
                              gconstpointer  data)
{
  g_autofree char *png = g_build_filename (f->dir, "timeline.png", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", png, NULL };
  g_auto(Run) recorded = { 0 };
  g_auto(Run) exported = { 0 };

  record (f, NULL, "leaky-steps", NULL, NULL, &recorded);
  g_assert_cmpint (recorded.status, ==, 0);
  g_setenv ("TIDEMARK_PNG_MODULE", "/nonexistent/tidemark-png.so", TRUE);
  run_argv (argv, &exported);
  g_unsetenv ("TIDEMARK_PNG_MODULE");
  g_assert_cmpint (exported.status, ==, 1);
  g_assert_cmpstr (exported.err, ==, "tidemark: cannot load PNG export: "
                   "/nonexistent/tidemark-png.so: cannot open shared object file: "
                   "No such file or directory\n");
  g_assert_false (g_file_test (png, G_FILE_TEST_EXISTS));
}
#endif

void
add_record_export_tests (void)
{
  RECORD_TEST_ADD ("/record/maps-no-drawing", NULL, test_record_maps_no_drawing);
#ifdef TIDE_HAVE_RENDER
  RECORD_TEST_ADD ("/export/png-csv", NULL, test_export_png_csv);
  RECORD_TEST_ADD ("/export/ranks", NULL, test_export_ranks);
  RECORD_TEST_ADD ("/report/processes", NULL, test_report_processes);
  RECORD_TEST_ADD ("/export/renderer-missing", NULL, test_export_renderer_missing);
#endif
}
