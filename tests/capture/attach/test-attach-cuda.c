/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark attach` on a CUDA program: cuda-trainer on the stand-in CUDA
 * libraries (tests/cuda), held before main by attach-gate until attached.
 * The uprobes on libcudart and libcuda must give the same device rows as
 * the preload (tests/cuda/test-cuda-record.c), exact: device allocations
 * and copies are never sampled.
 *
 * Differences from the preload, by design: the device of an allocation is
 * the one cudaSetDevice last chose on the thread (0 before any call seen),
 * not the context's; copies with cudaMemcpyDefault and device-to-device
 * copies are not recorded; NVTX ranges are not scopes.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>

#include "tide-report.h"
#include "tide-test-util.h"
#include "tide-trace.h"

#include "cuda-trainer.h"

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = tide_test_make_dir ("tide-attach-cuda");
  f->path = g_build_filename (f->dir, "trace.tide", NULL);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->trace);
  tide_test_remove_dir (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

static char *
read_line (int fd)
{
  g_autoptr(GInputStream) raw = g_unix_input_stream_new (fd, FALSE);
  g_autoptr(GDataInputStream) in = g_data_input_stream_new (raw);
  g_autoptr(GError) error = NULL;
  char *line;

  /* One line only: a buffered reader must not swallow what follows. */
  g_buffered_input_stream_set_buffer_size (G_BUFFERED_INPUT_STREAM (in), 1);
  line = g_data_input_stream_read_line (in, NULL, NULL, &error);
  g_assert_no_error (error);
  return line;
}

static GSubprocess *
start_trainer (const char *mode)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                               G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) err = NULL;
  g_autofree char *line = NULL;
  GSubprocess *p;

  g_subprocess_launcher_setenv (launcher, "LD_PRELOAD", TIDE_ATTACH_GATE, TRUE);
  p = g_subprocess_launcher_spawn (launcher, &error, TIDE_CUDA_TRAINER, mode, NULL);
  g_assert_no_error (error);
  err = g_data_input_stream_new (g_subprocess_get_stderr_pipe (p));
  g_filter_input_stream_set_close_base_stream (G_FILTER_INPUT_STREAM (err), FALSE);
  line = g_data_input_stream_read_line (err, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "waiting");
  return p;
}

static GSubprocess *
start_attach (GSubprocess *trainer,
              const char  *trace)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  int fds[2];
  GSubprocess *p;

  g_assert_cmpint (pipe (fds), ==, 0);
  g_subprocess_launcher_take_fd (launcher, fds[1], 3);
  p = g_subprocess_launcher_spawn (launcher, &error, TIDE_TIDEMARK_EXE, "attach", "-p",
                                   g_subprocess_get_identifier (trainer), "-o", trace,
                                   "--ready-fd", "3", "--quiet", NULL);
  g_assert_no_error (error);
  /* Closes our copy of the write end: a failed attach reads as EOF. */
  g_clear_object (&launcher);
  line = read_line (fds[0]);
  close (fds[0]);
  g_assert_cmpstr (line, ==, "attached");
  return p;
}

static void
attach_and_train (Fixture    *f,
                  const char *mode)
{
  g_autoptr(GSubprocess) trainer = start_trainer (mode);
  g_autoptr(GSubprocess) attach = start_attach (trainer, f->path);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *expected = g_strdup_printf ("trained %d steps\n", STEPS);

  g_subprocess_communicate_utf8 (trainer, "go\n", NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (trainer), ==, 0);
  g_assert_cmpstr (out, ==, expected);
  g_subprocess_wait_check (attach, NULL, &error);
  g_assert_no_error (error);
  f->trace = tide_test_open_trace (f->path);
}

static TideGroup *
find_group (GPtrArray  *groups,
            const char *function,
            gint        device)
{
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      if (g->device == device && g_strcmp0 (tide_test_top_function (g), function) == 0)
        return g;
    }
  return NULL;
}

static gint64
query (Fixture    *f,
       const char *sql)
{
  return tide_test_query_int (f->trace, sql);
}

static void
check_group (GPtrArray  *stacks,
             const char *function,
             gint        device,
             gint64      bytes,
             gint64      count)
{
  TideGroup *g = find_group (stacks, function, device);

  if (g == NULL)
    g_error ("no retained group of %s on device %d", function, device);
  g_assert_cmpint (g->bytes, ==, bytes);
  g_assert_cmpint (g->count, ==, count);
}

/* Who holds device and pinned memory at the end, by stack, and the copies. */
static void
test_attach_cuda_trainer (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) stacks = NULL;

  if (!tide_test_can_attach ())
    return;
  attach_and_train (f, "leak");
  stacks = tide_report_retained (f->trace, 0, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  check_group (stacks, "init_layers", 0, LAYERS * LAYER_BYTES, LAYERS);
  check_group (stacks, "init_optimizer", 1, OPT_BYTES, 1);
  check_group (stacks, "leak_device_cache", 0, STEPS * LEAK_BYTES, STEPS);
  check_group (stacks, "init_staging", -1, STAGING_BYTES, 1);
  check_group (stacks, "leak_pinned_buffer", -1, (STEPS / 2) * PINNED_LEAK_BYTES, STEPS / 2);
  g_assert_null (find_group (stacks, "forward_activations", 0));
  g_assert_null (find_group (stacks, "driver_scratch", 0));
  g_assert_null (find_group (stacks, "backward", 0));

  /* Each call once: the runtime's calls into the driver are not counted
   * again. */
  g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = 4"), ==,
                   LAYERS + 1 + STEPS * 4);
  g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = 4"
                             " AND free_ns IS NULL"), ==, LAYERS + 1 + STEPS);
  g_assert_cmpint (query (f, "SELECT sum (size) FROM allocations WHERE kind = 4"
                             " AND free_ns IS NULL AND device = 0"),
                   ==, LAYERS * LAYER_BYTES + STEPS * LEAK_BYTES);
  g_assert_cmpint (query (f, "SELECT sum (size) FROM allocations WHERE kind = 5"
                             " AND free_ns IS NULL AND device = -1"),
                   ==, STAGING_BYTES + (STEPS / 2) * PINNED_LEAK_BYTES);
  g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = 5"), ==,
                   1 + STEPS / 2);
  g_assert_cmpint (query (f, "SELECT count (*) FROM transfers WHERE direction = 1"), ==,
                   2 * STEPS);
  g_assert_cmpint (query (f, "SELECT sum (bytes) FROM transfers WHERE direction = 1"), ==,
                   STEPS * (H2D_RT_BYTES + H2D_DRV_BYTES));
  g_assert_cmpint (query (f, "SELECT sum (bytes) FROM transfers WHERE direction = 2"), ==,
                   STEPS * D2H_BYTES);
  g_assert_cmpint (query (f, "SELECT count (*) FROM transfers WHERE direction = 3"
                             " OR device != 0"), ==, 0);
  g_assert_cmpint (query (f, "SELECT count (*) FROM steps"), ==, STEPS);
}

/* The same loop without its leaks: only the start-up buffers stay. */
static void
test_attach_cuda_control (Fixture       *f,
                          gconstpointer  data)
{
  if (!tide_test_can_attach ())
    return;
  attach_and_train (f, "control");
  g_assert_cmpint (query (f, "SELECT sum (size) FROM allocations WHERE kind = 4"
                             " AND free_ns IS NULL"), ==, LAYERS * LAYER_BYTES + OPT_BYTES);
  g_assert_cmpint (query (f, "SELECT count (*) FROM allocations WHERE kind = 5"
                             " AND free_ns IS NULL"), ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/attach/cuda/trainer", Fixture, NULL, fixture_setup, test_attach_cuda_trainer,
              fixture_teardown);
  g_test_add ("/attach/cuda/control", Fixture, NULL, fixture_setup, test_attach_cuda_control,
              fixture_teardown);
  return g_test_run ();
}
