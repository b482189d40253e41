/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-gen-trace: writes a synthetic trace of a given size, for the
 * benchmarks.  Rows go straight into SQLite in one transaction with the
 * journal off (this is a scratch file), then the summaries are built by
 * the same tide_analysis_build() a recording ends with.
 *
 *   tide-gen-trace -o big.tide --allocations 10000000 --counters 1000000
 *
 * Shape: one process, --steps steps over --duration seconds; 64 call
 * stacks; every allocation is freed within its step except those of one
 * stack that leaks from step 10 on; counters RSS, live heap, mapped and
 * cuda:0 allocated share the samples evenly; one transfer per step.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-analysis.h"
#include "tide-schema.h"

#define N_STACKS   64
#define LEAK_STACK 7

typedef struct
{
  gint64 n_allocations;
  gint64 n_counters;
  gint   n_steps;
  double duration_s;
  char  *host;        /* meta hostname, for merges of several; NULL: none */
} Shape;

static gboolean
exec_sql (sqlite3    *db,
          const char *sql)
{
  g_autoptr(GError) error = NULL;

  if (!tide_sqlite_exec (db, sql, &error))
    {
      g_printerr ("tide-gen-trace: %s\n", error->message);
      return FALSE;
    }
  return TRUE;
}

static sqlite3_stmt *
prepare (sqlite3    *db,
         const char *sql)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_printerr ("tide-gen-trace: %s\n", sqlite3_errmsg (db));
  return stmt;
}

static gboolean
run (sqlite3_stmt *stmt)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  return rc == SQLITE_DONE;
}

static gboolean
write_frames_and_stacks (sqlite3 *db)
{
  g_autoptr(GString) sql = g_string_new ("INSERT INTO frames (id, kind, function, file, line,"
                                         " module) VALUES (1, 1, 'main', 'train.c', 1, 'train')");

  for (int i = 0; i < N_STACKS; i++)
    g_string_append_printf (sql, ", (%d, 1, 'site_%d', 'train.c', %d, 'train')", i + 2, i,
                            100 + i);
  g_string_append (sql, "; INSERT INTO stacks (id, frames) VALUES (1, '[1]')");
  for (int i = 0; i < N_STACKS; i++)
    g_string_append_printf (sql, ", (%d, '[1,%d]')", i + 2, i + 2);
  return exec_sql (db, sql->str);
}

static gboolean
write_steps (sqlite3     *db,
             const Shape *shape,
             gint64       step_ns)
{
  sqlite3_stmt *step = prepare (db, "INSERT INTO steps (id, process_id, number, start_ns,"
                                    " end_ns) VALUES (?1, 1, ?1, ?2, ?3)");
  sqlite3_stmt *xfer = prepare (db, "INSERT INTO transfers (process_id, direction, device,"
                                    " bytes, start_ns, duration_ns) VALUES (1, ?1, 0, ?2, ?3, 1000)");
  gboolean ok = step != NULL && xfer != NULL;

  for (gint k = 1; ok && k <= shape->n_steps; k++)
    {
      sqlite3_bind_int (step, 1, k);
      sqlite3_bind_int64 (step, 2, (k - 1) * step_ns);
      sqlite3_bind_int64 (step, 3, k * step_ns);
      sqlite3_bind_int (xfer, 1, 1 + k % 2);
      sqlite3_bind_int64 (xfer, 2, (gint64) (1 + k % 7) << 20);
      sqlite3_bind_int64 (xfer, 3, (k - 1) * step_ns + step_ns / 2);
      ok = run (step) && run (xfer);
    }
  sqlite3_finalize (step);
  sqlite3_finalize (xfer);
  return ok;
}

static gboolean
write_allocations (sqlite3     *db,
                   const Shape *shape,
                   gint64       step_ns,
                   GRand       *rand)
{
  sqlite3_stmt *ins = prepare (db, "INSERT INTO allocations (id, process_id, kind, device,"
                                   " address, size, weight, alloc_ns, free_ns, stack_id)"
                                   " VALUES (?1, 1, 1, -1, ?2, ?3, 1.0, ?4, ?5, ?6)");
  gint64 per_step = MAX (shape->n_allocations / shape->n_steps, 1);
  gboolean ok = ins != NULL;

  for (gint64 i = 0; ok && i < shape->n_allocations; i++)
    {
      gint64 k = MIN (i / per_step, shape->n_steps - 1);
      gint64 t = k * step_ns + (i % per_step) * (step_ns / (per_step + 1));
      gint stack = 2 + (gint) (i % N_STACKS);
      gboolean leak = stack == 2 + LEAK_STACK && k >= 10 && i % (N_STACKS * 8) == LEAK_STACK;

      sqlite3_bind_int64 (ins, 1, i + 1);
      sqlite3_bind_int64 (ins, 2, 0x100000 + i * 64);
      sqlite3_bind_int64 (ins, 3, 16 + g_rand_int_range (rand, 0, 65536));
      sqlite3_bind_int64 (ins, 4, t);
      if (leak)
        sqlite3_bind_null (ins, 5);
      else
        sqlite3_bind_int64 (ins, 5, MIN (t + step_ns / 4, (k + 1) * step_ns - 1));
      sqlite3_bind_int (ins, 6, stack);
      ok = run (ins);
    }
  sqlite3_finalize (ins);
  return ok;
}

static gboolean
write_counters (sqlite3     *db,
                const Shape *shape,
                gint64       end_ns,
                GRand       *rand)
{
  static const int series[][2] = {
    { TIDE_COUNTER_RSS, -1 }, { TIDE_COUNTER_HEAP_LIVE, -1 }, { TIDE_COUNTER_MAPPED, -1 },
    { TIDE_COUNTER_DEVICE_USED, 0 },
  };
  sqlite3_stmt *ins = prepare (db, "INSERT INTO counters (process_id, counter, device, ts_ns,"
                                   " value) VALUES (1, ?1, ?2, ?3, ?4)");
  gint64 per_series = shape->n_counters / G_N_ELEMENTS (series);
  gboolean ok = ins != NULL;

  for (guint s = 0; ok && s < G_N_ELEMENTS (series); s++)
    for (gint64 i = 0; ok && i < per_series; i++)
      {
        gint64 t = i * end_ns / per_series;
        /* A slow climb with noise: about what a leaking job looks like. */
        gint64 value = ((gint64) (s + 1) << 30) + t / 1000 + g_rand_int_range (rand, 0, 1 << 24);

        sqlite3_bind_int (ins, 1, series[s][0]);
        sqlite3_bind_int (ins, 2, series[s][1]);
        sqlite3_bind_int64 (ins, 3, t);
        sqlite3_bind_int64 (ins, 4, value);
        ok = run (ins);
      }
  sqlite3_finalize (ins);
  return ok;
}

static gboolean
generate (sqlite3     *db,
          const Shape *shape)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  g_autoptr(GError) error = NULL;
  gint64 end_ns = (gint64) (shape->duration_s * 1e9);
  gint64 step_ns = end_ns / shape->n_steps;
  g_autofree char *meta = g_strdup_printf (
    "INSERT INTO meta VALUES ('start_ns', 0), ('end_ns', %" G_GINT64_FORMAT "), ('complete', 0);"
    "INSERT INTO processes (id, pid, ppid, exe, start_ns, end_ns, sample_bytes, all_mode)"
    " VALUES (1, 1000, 1, '/usr/bin/python3', 0, %" G_GINT64_FORMAT ", 0, 1);", end_ns, end_ns);
  g_autofree char *host = NULL;
  gint64 t0 = g_get_monotonic_time ();

  if (shape->host != NULL)
    {
      char *quoted = sqlite3_mprintf ("INSERT INTO meta VALUES ('hostname', %Q);", shape->host);

      host = g_strdup (quoted);
      sqlite3_free (quoted);
    }
  if (!exec_sql (db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;") ||
      !tide_schema_create (db, &error) ||
      !exec_sql (db, "BEGIN") || !exec_sql (db, meta) ||
      (host != NULL && !exec_sql (db, host)) || !write_frames_and_stacks (db) ||
      !write_steps (db, shape, step_ns) || !write_allocations (db, shape, step_ns, rand) ||
      !write_counters (db, shape, end_ns, rand) || !exec_sql (db, "COMMIT"))
    {
      if (error != NULL)
        g_printerr ("tide-gen-trace: %s\n", error->message);
      return FALSE;
    }
  g_print ("rows written in %.1f s\n", (g_get_monotonic_time () - t0) / 1e6);
  t0 = g_get_monotonic_time ();
  if (!tide_analysis_build (db, &error))
    {
      g_printerr ("tide-gen-trace: %s\n", error->message);
      return FALSE;
    }
  g_print ("summaries built in %.1f s\n", (g_get_monotonic_time () - t0) / 1e6);
  return exec_sql (db, "UPDATE meta SET value = 1 WHERE key = 'complete'");
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new ("- write a synthetic trace");
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  Shape shape = { 10000000, 1000000, 1000, 1000.0, NULL };
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &path, "Trace to write", "FILE" },
    { "allocations", 0, 0, G_OPTION_ARG_INT64, &shape.n_allocations, "Allocation rows", "N" },
    { "counters", 0, 0, G_OPTION_ARG_INT64, &shape.n_counters, "Counter samples", "M" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &shape.n_steps, "Steps", "S" },
    { "duration", 0, 0, G_OPTION_ARG_DOUBLE, &shape.duration_s, "Seconds", "S" },
    { "host", 0, 0, G_OPTION_ARG_STRING, &shape.host, "Host name to record", "NAME" },
    { NULL }
  };
  sqlite3 *db = NULL;
  gboolean ok;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("tide-gen-trace: %s\n", error->message);
      return 2;
    }
  if (path == NULL || shape.n_steps < 1 || shape.n_allocations < 0 || shape.n_counters < 4 ||
      shape.duration_s <= 0)
    {
      g_printerr ("tide-gen-trace: needs -o FILE, at least one step and four counter samples\n");
      return 2;
    }
  g_unlink (path);
  if (sqlite3_open (path, &db) != SQLITE_OK)
    {
      g_printerr ("tide-gen-trace: cannot create %s: %s\n", path, sqlite3_errmsg (db));
      sqlite3_close (db);
      return 1;
    }
  ok = generate (db, &shape);
  sqlite3_close (db);
  g_free (shape.host);
  return ok ? 0 : 1;
}
