/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A device that runs out of memory, end to end: `tidemark record` of
 * cuda-oom on a stand-in device of OOM_DEVICE_MIB.  In `die` mode the
 * program's cudaMalloc fails in step 8 and it exits 1; in `retry` mode its
 * cuMemAlloc fails in step 8, it frees its buckets, asks again and goes
 * on; in `pinned` mode its page-locked memory runs out in step 6.  Each mode is recorded once, and its sub-tests read that recording.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sys/wait.h>

#include "tide-device-oom.h"
#include "tide-test-util.h"

#include "cuda-trainer.h"

#define MIB (G_GINT64_CONSTANT (1) << 20)
#define OOM_SOURCE "tests/cuda/cuda-oom.c"

typedef struct
{
  TideTestRecording rec;
  int               exit_code;
} OomRecording;

static OomRecording die_run;
static OomRecording retry_run;
static OomRecording pinned_run;

static void
record (OomRecording *run,
        const char   *mode)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "-o", NULL, "--", TIDE_CUDA_OOM, mode,
                         NULL };
  g_auto(GStrv) env = g_environ_setenv (g_get_environ (), "TIDE_STANDIN_DEVICE_MIB",
                                        G_STRINGIFY (OOM_DEVICE_MIB), TRUE);
  env = g_environ_setenv (env, "TIDE_STANDIN_PINNED_MIB", G_STRINGIFY (OOM_PINNED_MIB), TRUE);
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (run->rec.trace != NULL)
    return;
  tide_test_recording_init (&run->rec, "tide-cuda-oom");
  argv[3] = run->rec.path;
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &run->rec.out,
                &run->rec.err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  run->exit_code = WEXITSTATUS (status);
  run->rec.trace = tide_test_open_trace (run->rec.path);
}

static char *
report (OomRecording *run,
        const char   *what,
        const char   *format)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", run->rec.path, what, format, NULL };

  return tide_test_spawn_ok (argv);
}

static gint
source_line (const char *text)
{
  return tide_test_source_line (OOM_SOURCE, text);
}

/* The record summary of @run holds @line whole. */
static void
assert_summary_has (OomRecording *run,
                    const char   *line)
{
  if (strstr (run->rec.err, line) == NULL)
    g_error ("no line\n%sin the summary:\n%s", line, run->rec.err);
}

static gint64
main_pid (OomRecording *run)
{
  return tide_test_query_int (run->rec.trace, "SELECT pid FROM processes ORDER BY id LIMIT 1");
}

/* The failed request is in the trace, as it was asked for. */
static void
test_die_trace (void)
{
  record (&die_run, "die");
  /* The program's own status comes through. */
  g_assert_cmpint (die_run.exit_code, ==, 1);
  g_assert_cmpint (tide_test_query_int (die_run.rec.trace, "SELECT count (*) FROM alloc_failures"),
                   ==, 1);
  g_assert_cmpint (tide_test_query_int (die_run.rec.trace,
                                        "SELECT count (*) FROM alloc_failures WHERE api = 'cudaMalloc'"
                                        " AND error = 2 AND device = 0 AND recovered = 0"),
                   ==, 1);
  g_assert_cmpint (tide_test_query_int (die_run.rec.trace, "SELECT bytes FROM alloc_failures"),
                   ==, OOM_ACT_BYTES);
  g_assert_cmpint (tide_test_query_int (die_run.rec.trace,
                                        "SELECT allocated_bytes FROM alloc_failures"),
                   ==, OOM_WEIGHT_BYTES + OOM_FAIL_STEP * OOM_BUCKET_BYTES);
}

/* The summary names the device, the step, the request and the leak that
 * filled the device. */
static void
test_die_summary (void)
{
  g_autofree char *expected = NULL;

  record (&die_run, "die");
  expected = g_strdup_printf ("tidemark: cuda:0 ran out of memory at step %d in cuda-oom die (pid %"
                              G_GINT64_FORMAT "): a 16.00 MiB cudaMalloc at cuda-oom.c:%d "
                              "forward_activations, with 88.00 MiB allocated, 64.00 MiB of it kept "
                              "by cuda-oom.c:%d keep_bucket (+8.00 MiB/step)\n",
                              OOM_FAIL_STEP, main_pid (&die_run),
                              source_line ("cudaMalloc (&act, OOM_ACT_BYTES)"),
                              source_line ("cudaMalloc (&buckets[n_buckets++]"));
  assert_summary_has (&die_run, expected);
  /* Each figure says where the memory is.  The device's peak is step 7's
   * activations on top of its 24 + 7 * 8 MiB, freed within the step:
   * more than the 88 MiB it held when it ran out, which a device counter
   * read at polls gave. */
  assert_summary_has (&die_run, " on the host, cuda:0 peak 96.00 MiB\n");
  /* Its suspect says which memory it is. */
  g_assert_nonnull (strstr (die_run.rec.err, "keep_bucket, cuda-oom die (pid"));
  g_assert_nonnull (strstr (die_run.rec.err, ", cuda:0)\n"));
}

static void
test_die_processes (void)
{
  g_autofree char *text = NULL;
  g_autofree char *json = NULL;
  g_autofree char *csv = NULL;
  g_autofree char *cell = NULL;
  g_autofree char *expected = NULL;

  record (&die_run, "die");
  text = report (&die_run, "--processes", "--format=text");
  g_assert_nonnull (strstr (text, "exit 1 (cuda:0 OOM) step 8 "));
  g_assert_nonnull (strstr (text, "\ncuda:0 ran out of memory at step 8 in cuda-oom die (pid"));
  csv = report (&die_run, "--processes", "--format=csv");
  cell = tide_test_csv_cell (csv, 1, "device_oom");
  g_assert_cmpstr (cell, ==, "cuda:0");
  json = report (&die_run, "--processes", "--format=json");
  expected = g_strdup_printf ("\"device_ooms\":[{\"device\":\"cuda:0\",\"failed\":1,\"fatal\":true,"
                              "\"api\":\"cudaMalloc\",\"bytes\":%d,\"allocated_bytes\":%d,",
                              OOM_ACT_BYTES, OOM_WEIGHT_BYTES + OOM_FAIL_STEP * OOM_BUCKET_BYTES);
  g_assert_nonnull (strstr (json, expected));
  g_assert_nonnull (strstr (json, "\"step\":8,\"function\":\"forward_activations\""));
  g_clear_pointer (&expected, g_free);
  expected = g_strdup_printf ("\"kept_bytes\":%d,\"kept_by\":\"cuda-oom.c:%d keep_bucket\"}]",
                              OOM_FAIL_STEP * OOM_BUCKET_BYTES,
                              source_line ("cudaMalloc (&buckets[n_buckets++]"));
  g_assert_nonnull (strstr (json, expected));
}

/* A failure that the program survives is counted, and is no death. */
static void
test_retry (void)
{
  g_autofree char *expected = NULL;
  g_autofree char *text = NULL;

  record (&retry_run, "retry");
  g_assert_cmpint (retry_run.exit_code, ==, 0);
  g_assert_cmpint (tide_test_query_int (retry_run.rec.trace,
                                        "SELECT count (*) FROM alloc_failures WHERE api = 'cuMemAlloc'"
                                        " AND device = 0 AND recovered = 1"),
                   ==, 1);
  g_assert_cmpint (tide_test_query_int (retry_run.rec.trace, "SELECT count (*) FROM alloc_failures"),
                   ==, 1);
  expected = g_strdup_printf ("tidemark: cuda:0 ran short 1 time in cuda-oom retry (pid %" G_GINT64_FORMAT
                              "), and the program went on: the largest, a 16.00 MiB cuMemAlloc in "
                              "step %d at cuda-oom.c:%d forward_driver, with 88.00 MiB allocated\n",
                              main_pid (&retry_run), OOM_FAIL_STEP,
                              source_line ("if (cuMemAlloc_v2 (&act, OOM_ACT_BYTES) =="));
  assert_summary_has (&retry_run, expected);
  g_assert_null (strstr (retry_run.rec.err, "ran out of memory"));
  text = report (&retry_run, "--processes", "--format=text");
  g_assert_nonnull (strstr (text, " exit 0 "));
  g_assert_null (strstr (text, "OOM"));
}

/* Page-locked host memory that runs out: named as such, with no device. */
static void
test_pinned (void)
{
  g_autofree char *expected = NULL;

  record (&pinned_run, "pinned");
  g_assert_cmpint (pinned_run.exit_code, ==, 1);
  g_assert_cmpint (tide_test_query_int (pinned_run.rec.trace,
                                        "SELECT count (*) FROM alloc_failures WHERE api = 'cudaMallocHost'"
                                        " AND device = -1 AND recovered = 0"),
                   ==, 1);
  expected = g_strdup_printf ("tidemark: pinned host memory ran out at step %d in cuda-oom pinned (pid %"
                              G_GINT64_FORMAT "): a 8.00 MiB cudaMallocHost at cuda-oom.c:%d "
                              "keep_pinned, with 40.00 MiB allocated\n",
                              OOM_PINNED_MIB / 8 + 1, main_pid (&pinned_run),
                              source_line ("cudaMallocHost (&pinned[n_pinned]"));
  assert_summary_has (&pinned_run, expected);
}

/* A merged trace keeps each input's failures, on its own processes. */
static void
test_merge (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-cuda-oom-merge");
  g_autofree char *merged = g_build_filename (dir, "merged.tide", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "merge", "-q", NULL, NULL, "-o", merged, NULL };
  g_autofree char *out = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) ooms = NULL;
  g_autoptr(GError) error = NULL;

  record (&die_run, "die");
  record (&retry_run, "retry");
  argv[3] = die_run.rec.path;
  argv[4] = retry_run.rec.path;
  out = tide_test_spawn_ok (argv);
  trace = tide_test_open_trace (merged);
  ooms = tide_report_device_ooms (trace, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ooms->len, ==, 2);
  g_assert_true (((TideDeviceOom *) g_ptr_array_index (ooms, 0))->fatal);
  g_assert_cmpstr (((TideDeviceOom *) g_ptr_array_index (ooms, 0))->api, ==, "cudaMalloc");
  g_assert_false (((TideDeviceOom *) g_ptr_array_index (ooms, 1))->fatal);
  g_assert_cmpstr (((TideDeviceOom *) g_ptr_array_index (ooms, 1))->api, ==, "cuMemAlloc");
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

/* Every value read back is untrusted: a hostile row is read as far as it
 * makes sense, and never printed raw. */
static void
test_hostile_rows (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-cuda-oom-hostile");
  g_autofree char *copy = g_build_filename (dir, "hostile.tide", NULL);
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) ooms = NULL;
  g_autoptr(GError) error = NULL;
  const TideDeviceOom *oom;

  record (&die_run, "die");
  g_assert_true (g_file_get_contents (die_run.rec.path, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (copy, contents, len, NULL));
  tide_test_exec_sql (copy, "UPDATE alloc_failures SET api = char (27) || '[2Jx', bytes = -5,"
                            " allocated_bytes = -1, stack_id = 999999999;"
                            "INSERT INTO alloc_failures (process_id, ts_ns, api, error, device, bytes,"
                            " allocated_bytes) VALUES (1, 0, 'cudaMalloc', 2, 70000, 1, 1),"
                            " (424242, 0, 'cudaMalloc', 2, 0, 1, 1);");
  trace = tide_test_open_trace (copy);
  ooms = tide_report_device_ooms (trace, NULL, &error);
  g_assert_no_error (error);
  /* The device out of range is dropped; the unknown process is kept, as
   * survived: it is not known to have died. */
  g_assert_cmpuint (ooms->len, ==, 2);
  oom = g_ptr_array_index (ooms, 0);
  g_assert_true (oom->fatal);
  g_assert_cmpstr (oom->api, ==, "?");
  g_assert_cmpint (oom->bytes, ==, 0);
  g_assert_cmpint (oom->allocated_bytes, ==, 0);
  g_assert_cmpuint (oom->frames->len, ==, 0);
  g_assert_false (((TideDeviceOom *) g_ptr_array_index (ooms, 1))->fatal);
  g_assert_cmpstr (((TideDeviceOom *) g_ptr_array_index (ooms, 1))->process.role, ==, "?");
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

int
main (int    argc,
      char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/device/oom/die/trace", test_die_trace);
  g_test_add_func ("/device/oom/die/summary", test_die_summary);
  g_test_add_func ("/device/oom/die/processes", test_die_processes);
  g_test_add_func ("/device/oom/retry", test_retry);
  g_test_add_func ("/device/oom/pinned", test_pinned);
  g_test_add_func ("/device/oom/merge", test_merge);
  g_test_add_func ("/device/oom/hostile-rows", test_hostile_rows);
  status = g_test_run ();
  tide_test_recording_clear (&die_run.rec);
  tide_test_recording_clear (&retry_run.rec);
  tide_test_recording_clear (&pinned_run.rec);
  return status;
}
