/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Device memory end to end: `tidemark record --all` on programs that use the
 * stand-in CUDA runtime and driver, read back through the report queries.
 * Every number below is exact: device allocations and copies are never
 * sampled.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include "tide-report.h"
#include "tide-schema.h"
#include "tide-timeline-lanes.h"
#include "tide-test-util.h"
#include "tide-trace-private.h"
#include "tide-trace.h"

#include "cuda-trainer.h"

#define PA_KEEP_BYTES (700 * KiB)
#define PA_TEMP_BYTES (40 * KiB)
#define PA_COPY_BYTES (24 * KiB)
#define PA_MAP_BYTES  (2048 * KiB)

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static void
record (Fixture     *f,
        const char  *program,
        const char  *arg)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->path, "--",
                         program, arg, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("tidemark record failed: %s%s", out, err);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = tide_test_make_dir ("tide-cuda");
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "trace.tide", NULL);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_clear_object (&f->trace);
  for (guint i = 0; i < 3; i++)
    {
      static const char *suffixes[] = { "", "-wal", "-shm" };
      g_autofree char *name = g_strconcat (f->path, suffixes[i], NULL);
      g_remove (name);
    }
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

static gint64
query_int (Fixture    *f,
           const char *sql)
{
  return tide_test_query_int (f->trace, sql);
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

static TideGroup *
find_scope_group (GPtrArray  *groups,
                  const char *path,
                  gint        device)
{
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      if (g->device == device && g_strcmp0 (g->scope_path, path) == 0)
        return g;
    }
  return NULL;
}

static const TideStepDevice *
step_device (TideStepRow *row,
             gint         device)
{
  for (guint i = 0; i < row->devices->len; i++)
    if (g_array_index (row->devices, TideStepDevice, i).device == device)
      return &g_array_index (row->devices, TideStepDevice, i);
  return NULL;
}

/* Device bytes and copies of each step, per device. */
static void
test_trainer_steps (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = NULL;

  record (f, TIDE_CUDA_TRAINER, "leak");
  rows = tide_report_steps (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, STEPS);
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (rows, i);
      gint64 step = row->number;
      const TideStepDevice *d0 = step_device (row, 0), *d1 = step_device (row, 1);

      g_assert_cmpint (step, ==, i + 1);
      g_assert_cmpuint (row->devices->len, ==, 2);
      g_assert_nonnull (d0);
      g_assert_nonnull (d1);
      g_assert_cmpint (d0->end_bytes, ==, LAYERS * LAYER_BYTES + step * LEAK_BYTES);
      g_assert_cmpint (d0->delta_bytes, ==, step == 1 ? LAYERS * LAYER_BYTES + LEAK_BYTES
                                                      : LEAK_BYTES);
      g_assert_cmpint (d1->end_bytes, ==, OPT_BYTES);
      g_assert_cmpint (d1->delta_bytes, ==, step == 1 ? OPT_BYTES : 0);
      g_assert_cmpint (row->device_end, ==, d0->end_bytes + d1->end_bytes);
      g_assert_cmpint (row->h2d_bytes, ==, H2D_RT_BYTES + H2D_DRV_BYTES);
      g_assert_cmpint (row->d2h_bytes, ==, D2H_BYTES);
    }

  /* Each call once: the runtime reaches the driver through our driver
   * hooks, which must not record it again. */
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"), ==,
                   LAYERS + 1 + STEPS * 4);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 5"), ==,
                   1 + STEPS / 2);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"
                                 " AND free_ns IS NULL"), ==, LAYERS + 1 + STEPS);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM transfers WHERE direction = 1"), ==,
                   2 * STEPS);
  g_assert_cmpint (query_int (f, "SELECT sum (bytes) FROM transfers WHERE direction = 2"), ==,
                   STEPS * D2H_BYTES);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM transfers WHERE direction = 3"
                                 " OR device != 0"), ==, 0);
}

/* NVTX ranges are scopes: "forward" holds the device leak, "backward" the
 * pinned one. */
static void
check_nvtx_scopes (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) scopes = NULL;
  TideGroup *g;

  scopes = tide_report_retained (f->trace, 0, TIDE_GROUP_BY_SCOPE, &error);
  g_assert_no_error (error);
  g = find_scope_group (scopes, "forward", 0);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, STEPS * LEAK_BYTES);
  g = find_scope_group (scopes, "backward", -1);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, (STEPS / 2) * PINNED_LEAK_BYTES);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations a JOIN scopes s"
                                 " ON s.id = a.scope_id WHERE a.kind = 4 AND s.path = 'forward'"),
                   ==, STEPS * 3);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM transfers t JOIN scopes s"
                                 " ON s.id = t.scope_id WHERE t.direction = 2"
                                 " AND s.path = 'backward'"), ==, STEPS);
}

/* Who holds the device memory when the trace ends, by stack and by scope. */
static void
test_trainer_retained (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) stacks = NULL;
  TideGroup *g;

  record (f, TIDE_CUDA_TRAINER, "leak");
  stacks = tide_report_retained (f->trace, 0, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);

  g = find_group (stacks, "init_layers", 0);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, LAYERS * LAYER_BYTES);
  g_assert_cmpint (g->count, ==, LAYERS);
  g = find_group (stacks, "init_optimizer", 1);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, OPT_BYTES);
  g = find_group (stacks, "leak_device_cache", 0);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, STEPS * LEAK_BYTES);
  g_assert_cmpint (g->count, ==, STEPS);
  g = find_group (stacks, "init_staging", -1);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, STAGING_BYTES);
  g = find_group (stacks, "leak_pinned_buffer", -1);
  g_assert_nonnull (g);
  g_assert_cmpint (g->bytes, ==, (STEPS / 2) * PINNED_LEAK_BYTES);
  g_assert_null (find_group (stacks, "forward_activations", 0));
  g_assert_null (find_group (stacks, "driver_scratch", 0));
  g_assert_null (find_group (stacks, "backward", 0));

  check_nvtx_scopes (f);
}

static void
test_trainer_suspects (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  TideGroup *g;

  record (f, TIDE_CUDA_TRAINER, "leak");
  suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g = find_group (suspects, "leak_device_cache", 0);
  g_assert_nonnull (g);
  g_assert_cmpfloat_with_epsilon (g->bytes_per_step, LEAK_BYTES, 1.0);
  for (guint i = 0; i < suspects->len; i++)
    {
      TideGroup *s = g_ptr_array_index (suspects, i);
      if (s->device >= 0)
        g_assert_cmpstr (tide_test_top_function (s), ==, "leak_device_cache");
    }
}

/* The same loop without its leaks: nothing on a device grows. */
static void
test_trainer_control (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) rows = NULL;

  record (f, TIDE_CUDA_TRAINER, "control");
  suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < suspects->len; i++)
    {
      TideGroup *s = g_ptr_array_index (suspects, i);
      g_assert_cmpint (s->device, <, 0);
      g_assert_cmpstr (tide_test_top_function (s), !=, "init_staging");
    }
  rows = tide_report_steps (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, STEPS);
  for (guint i = 1; i < rows->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (rows, i);
      g_assert_cmpint (step_device (row, 0)->delta_bytes, ==, 0);
      g_assert_cmpint (step_device (row, 0)->end_bytes, ==, LAYERS * LAYER_BYTES);
    }
}

/* The most each device held at once, the report's peak and the device
 * lane's: within a step, the activations and the gradients are live
 * together on cuda:0, then freed before the step ends; the recorder's
 * polls (every 20 ms) never meet them, in a loop of a few milliseconds.
 * Both read the layers alone before. */
static void
test_trainer_peak (Fixture       *f,
                   gconstpointer  data)
{
  const gint64 peak0 = LAYERS * LAYER_BYTES + ACT_BYTES + GRAD_BYTES;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) peaks = NULL;
  g_autoptr(TideLaneData) lane = NULL;
  TideTimeWindow window = { 0, 0, 200 };
  gint64 lane_peak = 0;

  record (f, TIDE_CUDA_TRAINER, "control");
  peaks = tide_report_device_peaks (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (peaks->len, ==, 2);
  g_assert_cmpint (g_array_index (peaks, TideDevicePeak, 0).device, ==, 0);
  g_assert_cmpint (g_array_index (peaks, TideDevicePeak, 0).bytes, ==, peak0);
  g_assert_cmpint (g_array_index (peaks, TideDevicePeak, 1).device, ==, 1);
  g_assert_cmpint (g_array_index (peaks, TideDevicePeak, 1).bytes, ==, OPT_BYTES);

  window.end_ns = tide_trace_get_end_ns (f->trace) - tide_trace_get_start_ns (f->trace) + 1;
  lane = tide_timeline_data_query_lane (f->trace, NULL,
                                        query_int (f, "SELECT min (id) FROM processes"),
                                        TIDE_COUNTER_DEVICE_ALLOCATED, 0, &window, &error);
  g_assert_no_error (error);
  for (guint c = 0; c < lane->n_columns; c++)
    if (lane->has[c])
      lane_peak = MAX (lane_peak, lane->max[c]);
  g_assert_cmpint (lane_peak, ==, peak0);
}

#ifdef TIDE_CUDA_TRAINER_NVTX3
/* The same loop with NVIDIA's header-only NVTX 3 in place of the stand-in
 * NVTX library: its ranges reach the preload the same way. */
static void
test_trainer_nvtx3 (Fixture       *f,
                    gconstpointer  data)
{
  record (f, TIDE_CUDA_TRAINER_NVTX3, "leak");
  check_nvtx_scopes (f);
}
#endif

/* A program that reaches the driver only through entry points. */
static void
test_proc_address (Fixture       *f,
                   gconstpointer  data)
{
  record (f, TIDE_CUDA_PROC_ADDRESS, NULL);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"), ==, 4);
  g_assert_cmpint (query_int (f, "SELECT sum (size) FROM allocations WHERE kind = 4"
                                 " AND free_ns IS NULL AND device = 0"), ==, PA_KEEP_BYTES);
  g_assert_cmpint (query_int (f, "SELECT sum (size) FROM allocations WHERE kind = 4"
                                 " AND free_ns IS NULL AND device = 1"), ==, PA_MAP_BYTES);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"
                                 " AND free_ns IS NOT NULL AND size IN (40960, 2097152)"), ==, 2);
  g_assert_cmpint (query_int (f, "SELECT sum (bytes) FROM transfers WHERE direction = 1"), ==,
                   PA_COPY_BYTES);
}

/* The driver reached only through dlopen + dlsym on its own handle, as the
 * real runtime does: both allocations are caught, with their sizes. */
static void
test_private_handle (Fixture       *f,
                     gconstpointer  data)
{
  record (f, TIDE_CUDA_PRIVATE_HANDLE, NULL);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"), ==, 2);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"
                                 " AND size = 300 * 1024"), ==, 1);
  g_assert_cmpint (query_int (f, "SELECT count (*) FROM allocations WHERE kind = 4"
                                 " AND size = 500 * 1024"), ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/device/trainer/steps", test_trainer_steps);
  ADD ("/device/trainer/retained", test_trainer_retained);
  ADD ("/device/trainer/suspects", test_trainer_suspects);
  ADD ("/device/trainer/control", test_trainer_control);
  ADD ("/device/trainer/peak", test_trainer_peak);
#ifdef TIDE_CUDA_TRAINER_NVTX3
  ADD ("/device/trainer/nvtx3", test_trainer_nvtx3);
#endif
  ADD ("/device/proc-address", test_proc_address);
  ADD ("/device/private-handle", test_private_handle);
  return g_test_run ();
}
