/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A suspect is named by the user's own line, not by a library's, end to
 * end on real PyTorch and CPython:
 *   - linear-leak.py keeps logits that torch's stock nn.Linear made for
 *     the model: the headline is the model's forward line, via torch's;
 *     --own-code on torch's path brings back torch's line;
 *   - package-leak.py drives leakpkg, a package installed here into a
 *     temporary site-packages, whose own thread keeps buffers: no frame of
 *     the script is on those stacks, and the headline is the package's
 *     line, named with its package.
 * Each program is recorded once; the sub-tests read its trace.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "tide-plumbing.h"
#include "tide-schema.h"
#include "tide-test-util.h"

#define PYTHON         "/usr/bin/python3"
#define STEPS          12
#define LOGITS_BYTES   (16 * 1000 * 4)
#define PACKAGE_BYTES  64000

static TideTestRecording linear_run;
static TideTestRecording package_run;

static const char package_source[] =
  "import queue\n"
  "import threading\n"
  "\n"
  "\n"
  "class Prefetcher:\n"
  "    def __init__(self):\n"
  "        self.kept = []\n"
  "        self.requests = queue.Queue()\n"
  "        self.done = queue.Queue()\n"
  "        self.thread = threading.Thread(target=self._fill, daemon=True)\n"
  "        self.thread.start()\n"
  "\n"
  "    def _fill(self):\n"
  "        while self.requests.get():\n"
  "            self.kept.append(bytearray(64000))  # PKG-LINE\n"
  "            self.done.put(True)\n"
  "\n"
  "    def fetch(self):\n"
  "        self.requests.put(True)\n"
  "        self.done.get()\n"
  "\n"
  "    def stop(self):\n"
  "        self.requests.put(False)\n"
  "        self.thread.join()\n";

#define PACKAGE_LINE 15   /* the line of package_source with PKG-LINE */

static void
record (TideTestRecording  *run,
        const char         *mode,
        const char         *sampling,
        const char         *script,
        const char * const *env_add)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, script, NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", mode, sampling, "-o", NULL, "--", PYTHON,
                         path, G_STRINGIFY (STEPS), NULL };
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  int status = 0;

  argv[5] = run->path;
  for (guint i = 0; env_add != NULL && env_add[i] != NULL; i += 2)
    env = g_environ_setenv (env, env_add[i], env_add[i + 1], TRUE);
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &run->out, &run->err,
                &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("recording %s failed: %s", script, run->err);
  g_assert_cmpstr (run->out, ==, "done " G_STRINGIFY (STEPS) "\n");
  run->trace = tide_test_open_trace (run->path);
}

static void
record_linear (void)
{
  if (linear_run.trace != NULL)
    return;
  tide_test_recording_init (&linear_run, "tide-py-library");
  /* The logits are 62.5 KiB: sampled every 4 KiB on average, each is
   * recorded at a weight within a millionth of 1. */
  record (&linear_run, "--torch", "--sample-bytes=4096", "linear-leak.py", NULL);
}

static void
record_package (void)
{
  g_autofree char *site = NULL;
  g_autofree char *package = NULL;
  g_autofree char *init = NULL;
  g_autofree char *cache = NULL;

  if (package_run.trace != NULL)
    return;
  tide_test_recording_init (&package_run, "tide-py-package");
  site = g_build_filename (package_run.dir, "site-packages", NULL);
  package = g_build_filename (site, "leakpkg", NULL);
  init = g_build_filename (package, "__init__.py", NULL);
  cache = g_build_filename (package, "cache.py", NULL);
  g_assert_cmpint (g_mkdir_with_parents (package, 0755), ==, 0);
  g_assert_true (g_file_set_contents (init, "", -1, NULL));
  g_assert_true (g_file_set_contents (cache, package_source, -1, NULL));
  record (&package_run, "--all", "--poll-hz=50", "package-leak.py",
          (const char *[]) { "PYTHONPATH", site, NULL });
}

static gint
script_line (const char *script,
             const char *mark)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, script, NULL);

  return tide_test_source_line (path, mark);
}

/* The suspect whose stack holds a Python frame of @function. */
static TideGroup *
find_suspect (GPtrArray  *suspects,
              const char *function)
{
  for (guint i = 0; i < suspects->len; i++)
    {
      TideGroup *g = g_ptr_array_index (suspects, i);

      for (guint k = 0; k < g->frames->len; k++)
        {
          TideFrame *frame = g_ptr_array_index (g->frames, k);

          if (frame->kind == TIDE_FRAME_PYTHON && g_strcmp0 (frame->function, function) == 0)
            return g;
        }
    }
  return NULL;
}

static char *
report (TideTestRecording *run,
        const char        *extra)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", run->path, "--suspects", extra, NULL };

  return tide_test_spawn_ok (argv);
}

/* The model's own line names the leak, with torch's line beside it; its
 * module scope and its bytes are exact. */
static void
test_linear_headline (void)
{
  g_autoptr(GPtrArray) suspects = NULL;
  g_autofree char *headline = NULL;
  g_autofree char *via = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *text = NULL;
  TideGroup *top;

  record_linear ();
  suspects = tide_report_suspects (linear_run.trace, TIDE_GROUP_BY_STACK, NULL);
  top = find_suspect (suspects, "Linear.forward");
  g_assert_nonnull (top);
  g_assert_true (top == g_ptr_array_index (suspects, 0));
  expected = g_strdup_printf ("linear-leak.py:%d LM.forward",
                              script_line ("linear-leak.py", "# LOGITS-LINE"));
  headline = tide_group_describe_headline (top);
  g_assert_cmpstr (headline, ==, expected);
  via = tide_group_describe_headline_via (top);
  g_clear_pointer (&expected, g_free);
  expected = g_strdup_printf ("linear-leak.py:%d LM.forward (via torch/nn/modules/linear.py:114 "
                              "Linear.forward)", script_line ("linear-leak.py", "# LOGITS-LINE"));
  g_assert_cmpstr (via, ==, expected);
  g_assert_cmpstr (top->scope_path, ==, "LM.head");
  g_assert_cmpfloat_with_epsilon (top->bytes_per_step, LOGITS_BYTES, 1.0);

  summary = g_strdup_printf ("tidemark: suspect 1: +62.50 KiB/step since step %d in %s, ",
                             top->growth_step, expected);
  if (strstr (linear_run.err, summary) == NULL)
    g_error ("no line\n%s\nin the summary:\n%s", summary, linear_run.err);
  text = report (&linear_run, NULL);
  g_assert_nonnull (strstr (text, "\n  1. linear-leak.py:"));
  g_assert_nonnull (strstr (text, " LM.forward (via torch/nn/modules/linear.py:114 "
                                  "Linear.forward)\n"));
}

/* JSON keeps every frame, each with its library flag. */
static void
test_linear_json (void)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", NULL, "--suspects", "--format", "json",
                         NULL };
  g_autofree char *json = NULL;

  record_linear ();
  argv[2] = linear_run.path;
  json = tide_test_spawn_ok (argv);
  g_assert_true (g_regex_match_simple ("\\{\"function\":\"Linear.forward\",\"file\":\"[^\"]*"
                                       "/torch/nn/modules/linear.py\",\"line\":114,[^}]*"
                                       "\"kind\":\"python\",\"plumbing\":false,\"library\":true\\}",
                                       json, 0, 0));
  g_assert_true (g_regex_match_simple ("\\{\"function\":\"LM.forward\",[^}]*"
                                       "\"kind\":\"python\",\"plumbing\":false,\"library\":false\\}",
                                       json, 0, 0));
  g_assert_true (g_regex_match_simple ("\"headline\":\\{\"text\":\"linear-leak.py:[0-9]+ LM.forward\""
                                       ",\"frame\":[0-9]+,\"kind\":\"python\",\"function\":"
                                       "\"LM.forward\",[^}]*,\"via_frame\":[0-9]+\\}", json, 0, 0));
}

/* For people who work on torch: their own path names the stack again. */
static void
test_linear_own_code (void)
{
  g_autofree char *text = NULL;

  record_linear ();
  text = report (&linear_run, "--own-code=*/torch/nn/*");
  g_assert_nonnull (strstr (text, "\n  1. torch/nn/modules/linear.py:114 Linear.forward\n"));
}

/* diff pairs the suspect by its new name. */
static void
test_linear_diff (void)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "diff", NULL, NULL, "--suspects", NULL };
  g_autofree char *out = NULL;
  g_autofree char *row = NULL;

  record_linear ();
  argv[2] = argv[3] = linear_run.path;
  out = tide_test_spawn_ok (argv);
  row = g_strdup_printf (" linear-leak.py:%d LM.forward",
                         script_line ("linear-leak.py", "# LOGITS-LINE"));
  g_assert_nonnull (strstr (out, row));
  g_assert_null (strstr (out, " linear.py:114"));
}

/* A leak made where no frame of the user's is: the package's own line,
 * with its package. */
static void
test_package_headline (void)
{
  g_autoptr(GPtrArray) suspects = NULL;
  g_autofree char *headline = NULL;
  g_autofree char *via = NULL;
  g_autofree char *expected = g_strdup_printf ("leakpkg/cache.py:%d Prefetcher._fill",
                                               PACKAGE_LINE);
  TideGroup *top;

  record_package ();
  suspects = tide_report_suspects (package_run.trace, TIDE_GROUP_BY_STACK, NULL);
  top = find_suspect (suspects, "Prefetcher._fill");
  g_assert_nonnull (top);
  headline = tide_group_describe_headline (top);
  g_assert_cmpstr (headline, ==, expected);
  /* Nothing of the user's to go through. */
  via = tide_group_describe_headline_via (top);
  g_assert_cmpstr (via, ==, expected);
  g_assert_cmpfloat_with_epsilon (top->bytes_per_step, PACKAGE_BYTES, 1024);
  g_assert_nonnull (strstr (package_run.err, expected));
}

int
main (int    argc,
      char **argv)
{
  int status;

  if (!tide_test_python_imports (PYTHON, "torch"))
    {
      g_print ("1..0 # SKIP " PYTHON " cannot import torch (install python3-torch)\n");
      return 77;
    }
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/python/library/linear-headline", test_linear_headline);
  g_test_add_func ("/python/library/linear-json", test_linear_json);
  g_test_add_func ("/python/library/linear-own-code", test_linear_own_code);
  g_test_add_func ("/python/library/linear-diff", test_linear_diff);
  g_test_add_func ("/python/library/package-headline", test_package_headline);
  status = g_test_run ();
  tide_test_recording_clear (&linear_run);
  tide_test_recording_clear (&package_run);
  return status;
}
