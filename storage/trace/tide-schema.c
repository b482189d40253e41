/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The trace schema (TIDE_SCHEMA_VERSION).  Times are CLOCK_MONOTONIC nanoseconds of the
 * machine that recorded; sizes are bytes.  Estimated quantities multiply a
 * row's size by its sampling weight (1 in --all mode).
 */
#include "config.h"

#include "tide-schema.h"

#include <string.h>


static const char schema_sql[] =
  "CREATE TABLE meta ("
  "  key TEXT PRIMARY KEY,"
  "  value ANY"
  ") STRICT;"

  /* One row per process image: an exec starts a new row with the same pid.
   * rank is the torch.distributed rank (a DataLoader worker's is its
   * parent's), worker the DataLoader worker index, role a TideProcessRole
   * given when the capture ends (tide-processes.c); NULL where unknown. */
  "CREATE TABLE processes ("
  "  id INTEGER PRIMARY KEY,"
  "  pid INTEGER NOT NULL,"
  "  ppid INTEGER NOT NULL,"
  "  parent_id INTEGER REFERENCES processes (id),"
  "  exe TEXT NOT NULL,"
  "  cmdline TEXT,"
  "  rank INTEGER,"
  "  start_ns INTEGER NOT NULL,"
  "  end_ns INTEGER,"
  "  exit_status INTEGER,"
  "  sample_bytes INTEGER NOT NULL,"
  "  all_mode INTEGER NOT NULL,"
  "  dropped INTEGER NOT NULL DEFAULT 0,"
  "  worker INTEGER,"
  "  role INTEGER"
  ") STRICT;"

  "CREATE TABLE threads ("
  "  id INTEGER PRIMARY KEY,"
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  tid INTEGER NOT NULL,"
  "  name TEXT"
  ") STRICT;"

  "CREATE TABLE mappings ("
  "  id INTEGER PRIMARY KEY,"
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  start INTEGER NOT NULL,"
  "  end INTEGER NOT NULL,"
  "  load_bias INTEGER NOT NULL,"
  "  path TEXT NOT NULL,"
  "  ts_ns INTEGER NOT NULL"
  ") STRICT;"

  /* Symbolized frames, shared by every process that maps the same file. */
  "CREATE TABLE frames ("
  "  id INTEGER PRIMARY KEY,"
  "  kind INTEGER NOT NULL,"
  "  function TEXT,"
  "  file TEXT,"
  "  line INTEGER NOT NULL DEFAULT 0,"
  "  module TEXT,"
  "  module_offset INTEGER NOT NULL DEFAULT 0"
  ") STRICT;"
  /* A native frame's inline levels, found by its module and offset; only
   * inline rows are indexed, so the recorder's inserts stay cheap. */
  "CREATE INDEX frames_inline ON frames (module_offset, module) WHERE kind = " TIDE_SQL_FRAME_INLINE ";"

  /* The GNU build-id of each module that frames name, where it has one:
   * what `tidemark merge` recognises the same code by when nodes install
   * it under other paths.  Traces made before it have no such table. */
  "CREATE TABLE modules ("
  "  path TEXT PRIMARY KEY,"
  "  build_id TEXT NOT NULL"
  ") STRICT;"

  /* The stacks: each a row, its frames' ids a JSON array, outermost first.
   * A recording writes a stack once, when a block or a transfer first names
   * it: a row per stack, where the tree below took a row per frame that no
   * stack before had under the same callers, most of a deep stack. */
  "CREATE TABLE stacks ("
  "  id INTEGER PRIMARY KEY,"
  "  frames TEXT NOT NULL"
  ") STRICT;"

  /* The stack tree of traces before schema 4, and of merges of them: a
   * node's parent is its caller, so a stack is the node of its innermost
   * frame and identical stacks share one node.  Its ids and those of
   * stacks never meet. */
  "CREATE TABLE stack_nodes ("
  "  id INTEGER PRIMARY KEY,"
  "  parent_id INTEGER REFERENCES stack_nodes (id),"
  "  frame_id INTEGER NOT NULL REFERENCES frames (id),"
  "  depth INTEGER NOT NULL"
  ") STRICT;"

  /* Scopes: module paths, NVTX ranges, user scopes; a tree per process. */
  "CREATE TABLE scopes ("
  "  id INTEGER PRIMARY KEY,"
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  parent_id INTEGER REFERENCES scopes (id),"
  "  name TEXT NOT NULL,"
  "  path TEXT NOT NULL"
  ") STRICT;"

  /* Step n of a process spans (start_ns, end_ns]: from the previous marker
   * (or the process start) to its own marker. */
  "CREATE TABLE steps ("
  "  id INTEGER PRIMARY KEY,"
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  number INTEGER NOT NULL,"
  "  label TEXT NOT NULL DEFAULT '',"
  "  start_ns INTEGER NOT NULL,"
  "  end_ns INTEGER NOT NULL,"
  "  UNIQUE (process_id, number)"
  ") STRICT;"

  /* One row per recorded allocation with its lifetime; free_ns is NULL when
   * the block was still live when its process ended or the trace stopped.
   * Every column is an INTEGER but weight.  Unlike every other table this
   * one is not STRICT and its integer columns have no declared type: it
   * takes a row per sample, hundreds of thousands a second, and SQLite
   * checks the types of a STRICT row, or applies the affinity of typed
   * columns, one column at a time, for every row.
   * The writer binds every value with its type, which the writer test
   * checks.  weight keeps REAL affinity, under which SQLite stores the
   * weight 1.0 of most rows in one byte instead of eight. */
  "CREATE TABLE allocations ("
  "  id INTEGER PRIMARY KEY,"
  "  process_id NOT NULL REFERENCES processes (id),"
  "  thread_id REFERENCES threads (id),"
  "  kind NOT NULL,"
  "  device NOT NULL DEFAULT -1,"
  "  address NOT NULL,"
  "  size NOT NULL,"
  "  weight REAL NOT NULL,"
  "  alloc_ns NOT NULL,"
  "  free_ns,"
  "  stack_id,"
  "  scope_id REFERENCES scopes (id)"
  ");"

  /* A block-range summary of allocations (tide-alloc-ranges.h): rows
   * first_id..last_id hold every short-lived row allocated in
   * [min_alloc_ns, max_alloc_ns] that lies in that run of ids. */
  "CREATE TABLE allocation_ranges ("
  "  first_id INTEGER PRIMARY KEY,"
  "  last_id INTEGER NOT NULL,"
  "  min_alloc_ns INTEGER NOT NULL,"
  "  max_alloc_ns INTEGER NOT NULL"
  ") STRICT;"

  "CREATE TABLE counter_kinds ("
  "  id INTEGER PRIMARY KEY,"
  "  name TEXT NOT NULL,"
  "  unit TEXT NOT NULL"
  ") STRICT;"

  "CREATE TABLE counters ("
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  counter INTEGER NOT NULL REFERENCES counter_kinds (id),"
  "  device INTEGER NOT NULL DEFAULT -1,"
  "  ts_ns INTEGER NOT NULL,"
  "  value INTEGER NOT NULL"
  ") STRICT;"

  "CREATE TABLE transfers ("
  "  id INTEGER PRIMARY KEY,"
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  direction INTEGER NOT NULL,"
  "  device INTEGER NOT NULL,"
  "  bytes INTEGER NOT NULL,"
  "  start_ns INTEGER NOT NULL,"
  "  duration_ns INTEGER NOT NULL,"
  "  stack_id INTEGER,"
  "  scope_id INTEGER REFERENCES scopes (id)"
  ") STRICT;"

  /* Resident bytes of recorded live blocks at each step end, measured by the
   * recorder from /proc/PID/pagemap, per stack and scope.  At a step that
   * has a row of step_residency_totals (schema 4), a group has a row only
   * where its resident bytes changed since the process's last measured
   * step (0 when its last block went) or where blocks born in the step are
   * resident: most groups keep their pages step after step, and a row for
   * each at every step end was most of a recording's rows.  Its resident
   * bytes at a step are then those of its latest row at or before it.  A
   * step without a total holds a row for every group. */
  "CREATE TABLE step_residency ("
  "  step_id INTEGER NOT NULL REFERENCES steps (id),"
  "  stack_id INTEGER,"
  "  scope_id INTEGER,"
  "  device INTEGER NOT NULL DEFAULT -1,"
  "  resident_bytes INTEGER NOT NULL,"
  "  resident_born_bytes INTEGER NOT NULL"
  ") STRICT;"

  /* What step_residency's groups held in all at a measured step end. */
  "CREATE TABLE step_residency_totals ("
  "  step_id INTEGER PRIMARY KEY REFERENCES steps (id),"
  "  resident_bytes INTEGER NOT NULL,"
  "  resident_born_bytes INTEGER NOT NULL"
  ") STRICT;"

  /* Copy-on-write in a fork's child (capture/core/tide-cow.c): the
   * bytes of the pages it copied that each of its parent's recorded blocks
   * cover, summed per stack, the largest few at each measurement; a NULL
   * stack_id holds the copied bytes that no recorded block covers.  Traces
   * written before this table have none. */
  "CREATE TABLE cow_sources ("
  "  process_id INTEGER NOT NULL REFERENCES processes (id),"
  "  ts_ns INTEGER NOT NULL,"
  "  parent_id INTEGER NOT NULL REFERENCES processes (id),"
  "  stack_id INTEGER,"
  "  bytes INTEGER NOT NULL"
  ") STRICT;"

  /* Built when the capture ends (tide-analysis.c). */
  "CREATE TABLE step_stats ("
  "  step_id INTEGER PRIMARY KEY REFERENCES steps (id),"
  "  rss_end INTEGER,"
  "  heap_live_end INTEGER NOT NULL,"
  "  mapped_live_end INTEGER NOT NULL,"
  "  device_live_end INTEGER NOT NULL,"
  "  retained_bytes INTEGER NOT NULL,"
  "  retained_count INTEGER NOT NULL,"
  "  resident_explained INTEGER"
  ") STRICT;"

  /* Live bytes per (stack, scope, device) at each step end, stored only for
   * the steps where the value changed. */
  "CREATE TABLE step_series ("
  "  step_id INTEGER NOT NULL REFERENCES steps (id),"
  "  stack_id INTEGER,"
  "  scope_id INTEGER,"
  "  device INTEGER NOT NULL,"
  "  live_bytes INTEGER NOT NULL,"
  "  live_count INTEGER NOT NULL"
  ") STRICT;"

  /* Level-of-detail summaries for the timeline: bucket b of level l spans
   * [b, b+1) * (lod_base_ns << (2*l)) from the trace start. */
  "CREATE TABLE counter_lod ("
  "  process_id INTEGER NOT NULL,"
  "  counter INTEGER NOT NULL,"
  "  device INTEGER NOT NULL,"
  "  level INTEGER NOT NULL,"
  "  bucket INTEGER NOT NULL,"
  "  min_value INTEGER NOT NULL,"
  "  max_value INTEGER NOT NULL,"
  "  last_value INTEGER NOT NULL,"
  "  PRIMARY KEY (process_id, counter, device, level, bucket)"
  ") STRICT, WITHOUT ROWID;";

/* The tables and indexes that come after the trace is created, each made
 * by tide_schema_ensure() when its maker needs it.  Declared here with the
 * tables above, so that this file knows every object a trace may hold.
 * "IF NOT EXISTS" is not stored in sqlite_schema: a trace holds the same
 * text whichever maker ran first. */
static const struct
{
  const char *name;
  const char *sql;
} later_objects[] = {
  /* Kept up by a recording's writer as rows arrive (tide-trace-writer.c),
   * rather than sorted at finish, after the target has ended; a trace
   * written by other means gets counters_by_time and residency_by_step at
   * finish.  Rows come in the order of both (a step's residency comes at
   * its end), so each insert appends to the index.
   * long_lived_allocations indexes the long-lived rows, and
   * allocation_ranges the rest (tide-alloc-ranges.h). */
  { "counters_by_time",
    "CREATE INDEX IF NOT EXISTS counters_by_time ON counters (process_id, counter, ts_ns);" },
  { "residency_by_step",
    "CREATE INDEX IF NOT EXISTS residency_by_step ON step_residency (step_id);" },
  { "long_lived_allocations",
    "CREATE TABLE IF NOT EXISTS long_lived_allocations ("
    "  process_id INTEGER NOT NULL,"
    "  alloc_ns INTEGER NOT NULL,"
    "  id INTEGER NOT NULL,"
    "  PRIMARY KEY (process_id, alloc_ns, id)"
    ") STRICT, WITHOUT ROWID;" },

  /* How each process ended (tide-process-end.h), written by the recorder
   * as each one ends.  A trace from before it has no such table: its
   * processes end for no known cause.  exit_code is -1 unless it exited,
   * signal 0 unless one killed it; limit_bytes is 0 when unknown. */
  { "process_ends",
    "CREATE TABLE IF NOT EXISTS process_ends ("
    "  process_id INTEGER PRIMARY KEY,"
    "  kind INTEGER NOT NULL,"
    "  exit_code INTEGER NOT NULL,"
    "  signal INTEGER NOT NULL,"
    "  core_dumped INTEGER NOT NULL,"
    "  oom INTEGER NOT NULL,"
    "  limit_bytes INTEGER NOT NULL"
    ") STRICT;" },

  /* Device and pinned allocations that failed for want of memory
   * (tide-alloc-failures.h), written by the recorder as they happen.  api
   * names the function ("cudaMalloc"), error is its own return code,
   * device -1 is pinned host memory; allocated_bytes is what the process's
   * recorded blocks held on that device then; recovered turns 1 when a
   * later allocation on the device succeeds in the same process. */
  { "alloc_failures",
    "CREATE TABLE IF NOT EXISTS alloc_failures ("
    "  id INTEGER PRIMARY KEY,"
    "  process_id INTEGER NOT NULL,"
    "  ts_ns INTEGER NOT NULL,"
    "  api TEXT NOT NULL,"
    "  error INTEGER NOT NULL,"
    "  device INTEGER NOT NULL,"
    "  bytes INTEGER NOT NULL,"
    "  allocated_bytes INTEGER NOT NULL,"
    "  stack_id INTEGER,"
    "  scope_id INTEGER,"
    "  recovered INTEGER NOT NULL DEFAULT 0"
    ") STRICT;" },

  /* Built when the capture ends (tide-analysis.c). */
  { "series_by_step", "CREATE INDEX IF NOT EXISTS series_by_step ON step_series (step_id);" },
  { "transfers_by_time",
    "CREATE INDEX IF NOT EXISTS transfers_by_time ON transfers (process_id, start_ns);" },
  /* For the retained-by-step queries in a trace whose writer kept no
   * allocation_ranges. */
  { "allocations_by_alloc",
    "CREATE INDEX IF NOT EXISTS allocations_by_alloc ON allocations (process_id, alloc_ns);" },
  /* Ranges are found through their largest alloc_ns (tide-alloc-ranges.h). */
  { "allocation_ranges_by_max",
    "CREATE INDEX IF NOT EXISTS allocation_ranges_by_max ON allocation_ranges (max_alloc_ns);" },
  /* The blocks still live when the trace ended, summed per group. */
  { "live_at_end",
    "CREATE TABLE IF NOT EXISTS live_at_end ("
    "  process_id INTEGER NOT NULL,"
    "  stack_id INTEGER,"
    "  scope_id INTEGER,"
    "  device INTEGER NOT NULL,"
    "  bytes REAL NOT NULL,"
    "  count REAL NOT NULL"
    ") STRICT;" },
  { "live_at_end_by_process",
    "CREATE INDEX IF NOT EXISTS live_at_end_by_process ON live_at_end (process_id);" },

  /* A merged trace's sources, one per input trace (tide-trace-merge.c),
   * and which of them each process came from. */
  { "merge_sources",
    "CREATE TABLE IF NOT EXISTS merge_sources ("
    "  id INTEGER PRIMARY KEY,"
    "  path TEXT NOT NULL,"
    "  host TEXT,"
    "  boot_id TEXT,"
    "  launcher_rank INTEGER,"
    "  realtime_offset_ns INTEGER,"
    "  shift_ns INTEGER NOT NULL,"
    "  skew_ns INTEGER,"
    "  complete INTEGER NOT NULL"
    ") STRICT;" },
  { "merge_processes",
    "CREATE TABLE IF NOT EXISTS merge_processes ("
    "  process_id INTEGER PRIMARY KEY,"
    "  source_id INTEGER NOT NULL REFERENCES merge_sources (id)"
    ") STRICT;" },
};

static const char *
later_object_sql (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (later_objects); i++)
    if (g_str_equal (later_objects[i].name, name))
      return later_objects[i].sql;
  return NULL;
}

/* Whether a table or index named @name is one of the trace's: made by
 * tide_schema_create() or tide_schema_ensure(). */
gboolean
tide_schema_declares (const char *name)
{
  g_autofree char *needle = g_strdup_printf ("CREATE TABLE %s (", name);
  g_autofree char *index = g_strdup_printf ("CREATE INDEX %s ON", name);

  return later_object_sql (name) != NULL || strstr (schema_sql, needle) != NULL ||
         strstr (schema_sql, index) != NULL;
}

/**
 * tide_schema_ensure:
 * @name: a table or index declared above (later_objects)
 *
 * Creates @name unless @db has it already.
 */
gboolean
tide_schema_ensure (sqlite3     *db,
                    const char  *name,
                    GError     **error)
{
  const char *sql = later_object_sql (name);

  g_return_val_if_fail (sql != NULL, FALSE);
  return tide_sqlite_exec (db, sql, error);
}

/* tide_schema_ensure() of each of @names, a %NULL-terminated list: what
 * a trace's maker needs beyond tide_schema_create(). */
gboolean
tide_schema_ensure_all (sqlite3            *db,
                        const char * const *names,
                        GError            **error)
{
  for (guint i = 0; names[i] != NULL; i++)
    if (!tide_schema_ensure (db, names[i], error))
      return FALSE;
  return TRUE;
}

/* The counters' names, each beside its enum value: counter_kinds is
 * filled from here, so no number is written twice.  Every counter is in
 * bytes. */
static const struct
{
  TideCounter id;
  const char *name;
} counter_kinds[] = {
  { TIDE_COUNTER_RSS, "rss" },
  { TIDE_COUNTER_RSS_SHARED, "rss_shared" },
  { TIDE_COUNTER_HEAP_LIVE, "heap_live" },
  { TIDE_COUNTER_MAPPED, "mapped" },
  { TIDE_COUNTER_PINNED, "pinned" },
  { TIDE_COUNTER_DEVICE_USED, "device_used" },
  { TIDE_COUNTER_DEVICE_TOTAL, "device_total" },
  { TIDE_COUNTER_DEVICE_PROCESS, "device_process" },
  { TIDE_COUNTER_DEVICE_ALLOCATED, "device_allocated" },
  { TIDE_COUNTER_TORCH_ALLOCATED, "torch_allocated" },
  { TIDE_COUNTER_TORCH_RESERVED, "torch_reserved" },
  { TIDE_COUNTER_PSS, "pss" },
  { TIDE_COUNTER_RSS_ANON, "rss_anon" },
  { TIDE_COUNTER_RSS_FILE, "rss_file" },
  { TIDE_COUNTER_RSS_SHMEM, "rss_shmem" },
  { TIDE_COUNTER_USS, "uss" },
  { TIDE_COUNTER_RSS_SHARED_PAGES, "rss_shared_pages" },
  { TIDE_COUNTER_ALLOC_FREE, "alloc_free" },
  { TIDE_COUNTER_COW_BYTES, "cow_bytes" },
  { TIDE_COUNTER_JEMALLOC_FREE, "jemalloc_free" },
  { TIDE_COUNTER_TCMALLOC_FREE, "tcmalloc_free" },
  { TIDE_COUNTER_COW_LEFT_BYTES, "cow_left_bytes" },
  { TIDE_COUNTER_PY_ARENAS, "py_arenas" },
  { TIDE_COUNTER_PY_ARENA_FREE, "py_arena_free" },
  { TIDE_COUNTER_PY_UNHOOKED, "py_unhooked" },
  { TIDE_COUNTER_THREAD_STACKS, "thread_stacks" },
  { TIDE_COUNTER_LIB_DATA, "lib_data" },
  { TIDE_COUNTER_PRELOAD_OWN, "preload_own" },
  { TIDE_COUNTER_PY_ARENA_ABSENT, "py_arena_absent" },
  { TIDE_COUNTER_ALLOC_FREE_ABSENT, "alloc_free_absent" },
  { TIDE_COUNTER_INHERITED_FREED, "inherited_freed" },
  { TIDE_COUNTER_RSS_PEAK, "rss_peak" },
};

/* The rows of counter_kinds, in the transaction that creates it. */
static gboolean
fill_counter_kinds (sqlite3  *db,
                    GError  **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "INSERT INTO counter_kinds (id, name, unit)"
                                                " VALUES (?1, ?2, 'bytes')",
                                            "the trace", error);
  int rc = SQLITE_DONE;

  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (counter_kinds) && rc == SQLITE_DONE; i++)
    {
      sqlite3_bind_int (stmt, 1, counter_kinds[i].id);
      sqlite3_bind_text (stmt, 2, counter_kinds[i].name, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      sqlite3_reset (stmt);
    }
  return tide_sqlite_finish (db, stmt, rc, "the trace", error);
}

gboolean
tide_schema_create (sqlite3  *db,
                    GError  **error)
{
  g_autofree char *pragmas = NULL;

  if (!tide_sqlite_exec (db, "BEGIN", error))
    return FALSE;
  pragmas = g_strdup_printf ("PRAGMA application_id = %d; PRAGMA user_version = %d;",
                             TIDE_APPLICATION_ID, TIDE_SCHEMA_VERSION);
  if (!tide_sqlite_exec (db, schema_sql, error) || !fill_counter_kinds (db, error) ||
      !tide_sqlite_exec (db, pragmas, error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return tide_sqlite_exec (db, "COMMIT", error);
}

/**
 * tide_schema_stack_frames:
 * @frame_ids: (array length=n_frames): a stack's frames, outermost first
 *
 * Returns: (transfer full): the text of its stacks.frames column
 */
char *
tide_schema_stack_frames (const gint64 *frame_ids,
                          guint         n_frames)
{
  GString *text = g_string_sized_new (8 * n_frames + 2);

  g_string_append_c (text, '[');
  for (guint i = 0; i < n_frames; i++)
    {
      /* By hand: the recorder writes every frame of every new stack here,
       * and printf's parsing of its format was a part of that to see. */
      char digits[24];
      guint64 magnitude = frame_ids[i] < 0 ? -(guint64) frame_ids[i] : (guint64) frame_ids[i];
      gsize n = 0;

      do
        digits[n++] = (char) ('0' + magnitude % 10);
      while ((magnitude /= 10) != 0);
      if (frame_ids[i] < 0)
        digits[n++] = '-';
      if (i > 0)
        g_string_append_c (text, ',');
      while (n > 0)
        g_string_append_c (text, digits[--n]);
    }
  g_string_append_c (text, ']');
  return g_string_free (text, FALSE);
}
