/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-trace-merge.c: many traces into one, streaming.
 *
 * Each input is attached to the output database in turn and its rows are
 * copied by INSERT ... SELECT, which SQLite streams page by page: memory is
 * the page caches plus the frames and stack nodes seen so far, never a
 * table.  Ids move up by the output's largest id of their table, so ids
 * stay dense and an allocation range (first_id..last_id) stays a range.
 * Frames and stack nodes are deduplicated across inputs: a native frame by
 * its module's build-id and offset (the same code, whatever path each node
 * installed it under), any other frame by everything it says; a stack node
 * by its deduplicated parent and frame, a stack of schema 4 by its
 * deduplicated frames.  What the writer derives at the end
 * of a capture (timeline summaries, live-at-end, roles) is derived again
 * over the whole job by tide_analysis_build().
 */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "tide-analysis.h"
#include "tide-hash.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-merge.h"
#include "tide-trace.h"

#define MERGE_CACHE_KIB 16384

typedef struct
{
  char    *path;
  guint64  bytes;
  char    *host;
  char    *boot_id;
  gboolean has_offset;
  gint64   realtime_offset_ns;
  gboolean has_rank;
  gint64   launcher_rank;
  gint64   start_ns;
  gint64   end_ns;
  gint64   short_lived_ns;
  gint64   sample_bytes;
  gboolean all_mode;
  gboolean complete;
  gint64   shift_ns;
} MergeInput;

typedef struct
{
  sqlite3    *db;
  GPtrArray  *inputs;          /* MergeInput* */
  GHashTable *frames;          /* dedup key -> new frame id */
  GHashTable *nodes;           /* NodeKey -> new node id */
  GHashTable *stacks;          /* stacks.frames text -> new stack id */
  GHashTable *inline_done;     /* "module\x1foffset" of inline rows copied */
  gint64      next_frame_id;
  gint64      next_inline_id;
  gint64      next_node_id;    /* of stacks and stack nodes alike */
  gboolean    copy_ranges;     /* every input has the same short_lived_ns */
} Merge;

typedef struct
{
  gint64 parent;
  gint64 frame;
} NodeKey;

static void
merge_input_free (MergeInput *in)
{
  g_free (in->path);
  g_free (in->host);
  g_free (in->boot_id);
  g_free (in);
}

static guint
node_key_hash (gconstpointer p)
{
  const NodeKey *k = p;

  return (guint) tide_hash_ids ((guint64) k->parent, (guint64) k->frame, 0);
}

static gboolean
node_key_equal (gconstpointer a,
                gconstpointer b)
{
  const NodeKey *x = a, *y = b;

  return x->parent == y->parent && x->frame == y->frame;
}

/* A refusal or a failure of the merge itself: bad input, one line. */
static void
set_error (GError     **error,
           const char  *format,
           ...) G_GNUC_PRINTF (2, 3);

static void
set_error (GError     **error,
           const char  *format,
           ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_SQL, message);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MergeInput, merge_input_free)

static const char *
column_text (sqlite3_stmt *stmt,
             int           col)
{
  const char *text = (const char *) sqlite3_column_text (stmt, col);

  return text != NULL ? text : "";
}

/* ---- the inputs, checked before anything is written ------------------------------ */

static gboolean
meta_int (sqlite3    *db,
          const char *key,
          gint64     *value)
{
  g_autofree char *text = tide_sqlite_meta_text (db, key);

  *value = 0;
  return text != NULL && g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, value, NULL);
}

static gint
schema_version (sqlite3 *db)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "PRAGMA user_version", "", NULL);
  gint version = -1;

  if (stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW)
    version = sqlite3_column_int (stmt, 0);
  sqlite3_finalize (stmt);
  return version;
}

/* Opens @path through the trace reader, which rejects a damaged or
 * hostile file in one line, then reads what the merge needs of it. */
static MergeInput *
read_input (const char  *path,
            GError     **error)
{
  g_autoptr(TideTrace) trace = tide_trace_open (path, error);
  g_autoptr(MergeInput) in = NULL;
  sqlite3 *db = NULL;
  GStatBuf st;

  if (trace == NULL)
    return NULL;
  in = g_new0 (MergeInput, 1);
  in->path = g_strdup (path);
  in->bytes = g_stat (path, &st) == 0 ? (guint64) st.st_size : 0;
  in->complete = tide_trace_is_complete (trace) && tide_trace_describe_early_end (trace) == NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    {
      g_autofree char *message = tide_sqlite_dup_errmsg (db);

      set_error (error, "%s: cannot open: %s", path, message);
      sqlite3_close (db);
      return NULL;
    }
  if (schema_version (db) != TIDE_SCHEMA_VERSION)
    {
      gint version = schema_version (db);

      sqlite3_close (db);
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NEWER_SCHEMA,
                   "%s has schema version %d; merge joins traces of version %d only "
                   "(record them again with this tidemark)", path, version, TIDE_SCHEMA_VERSION);
      return NULL;
    }
  in->host = tide_sqlite_meta_text (db, "hostname");
  in->boot_id = tide_sqlite_meta_text (db, "boot_id");
  in->has_offset = meta_int (db, "realtime_offset_ns", &in->realtime_offset_ns);
  in->has_rank = meta_int (db, "launcher_rank", &in->launcher_rank);
  meta_int (db, "short_lived_ns", &in->short_lived_ns);
  meta_int (db, "sample_bytes", &in->sample_bytes);
  {
    gint64 all = 0;
    meta_int (db, "all_mode", &all);
    in->all_mode = all != 0;
  }
  in->start_ns = tide_trace_get_start_ns (trace);
  in->end_ns = tide_trace_get_end_ns (trace);
  sqlite3_close (db);
  return g_steal_pointer (&in);
}

static gboolean
same_file (const char *a,
           const char *b)
{
  GStatBuf x, y;

  return g_stat (a, &x) == 0 && g_stat (b, &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

/* A trace given twice, under one name or two, or a copy of one recording
 * (the same boot, host and start): its processes would count twice. */
static gboolean
check_distinct (GPtrArray  *inputs,
                GError    **error)
{
  for (guint i = 0; i < inputs->len; i++)
    for (guint j = 0; j < i; j++)
      {
        MergeInput *a = g_ptr_array_index (inputs, j), *b = g_ptr_array_index (inputs, i);

        if (same_file (a->path, b->path))
          {
            if (g_str_equal (a->path, b->path))
              set_error (error, "%s is given twice", a->path);
            else
              set_error (error, "%s and %s are the same trace", a->path, b->path);
            return FALSE;
          }
        if (a->boot_id != NULL && g_strcmp0 (a->boot_id, b->boot_id) == 0 &&
            g_strcmp0 (a->host, b->host) == 0 && a->start_ns == b->start_ns)
          {
            set_error (error, "%s and %s are copies of one recording", a->path, b->path);
            return FALSE;
          }
      }
  return TRUE;
}

static GPtrArray *
read_inputs (const char * const      *paths,
             const TideMergeOptions  *options,
             GError                 **error)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) merge_input_free);

  for (guint i = 0; paths[i] != NULL; i++)
    {
      MergeInput *in = read_input (paths[i], error);

      if (in == NULL)
        return NULL;
      g_ptr_array_add (inputs, in);
      if (!in->complete && !options->allow_incomplete)
        {
          set_error (error, "%s is unfinished (its recording did not end, or ended early); "
                            "--allow-incomplete merges it as it is", in->path);
          return NULL;
        }
    }
  if (!check_distinct (inputs, error))
    return NULL;
  return g_steal_pointer (&inputs);
}

/* ---- clocks --------------------------------------------------------------------- */

/* Onto the first input's clock: none between traces of one boot (one
 * CLOCK_MONOTONIC), else the difference of the measured real-time offsets.
 * An input that measured none (made by an older tidemark) is left where it
 * is; its skew shows by how much that was wrong. */
static void
compute_shifts (GPtrArray *inputs)
{
  MergeInput *ref = g_ptr_array_index (inputs, 0);

  for (guint i = 0; i < inputs->len; i++)
    {
      MergeInput *in = g_ptr_array_index (inputs, i);

      if (i == 0 || (in->boot_id != NULL && g_strcmp0 (in->boot_id, ref->boot_id) == 0))
        in->shift_ns = 0;
      else if (in->has_offset && ref->has_offset)
        in->shift_ns = in->realtime_offset_ns - ref->realtime_offset_ns;
      else
        in->shift_ns = 0;
    }
}

/* ---- the output ----------------------------------------------------------------- */

/* What a merged trace holds beyond tide_schema_create()'s tables. */
static const char * const merge_objects[] = {
  "long_lived_allocations", "merge_sources", "merge_processes", "process_ends",
  "alloc_failures", NULL
};

/* The ids of the input's stacks in the output: a temporary table, never
 * part of the trace. */
static const char stack_map_sql[] =
  "CREATE TEMP TABLE stack_map ("
  "  old INTEGER PRIMARY KEY,"
  "  new INTEGER NOT NULL"
  ");";

static gboolean
open_output (Merge       *merge,
             const char  *path,
             GError     **error)
{
  g_autofree char *cache = g_strdup_printf ("PRAGMA cache_size = -%d;", MERGE_CACHE_KIB);

  if (sqlite3_open_v2 (path, &merge->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
      != SQLITE_OK)
    {
      g_autofree char *message = tide_sqlite_dup_errmsg (merge->db);

      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO, "cannot create %s: %s",
                   path, message);
      return FALSE;
    }
  /* A merge that fails leaves no file (the caller removes it): no journal
   * is needed to undo one.  Temporary b-trees (the sorts of the index
   * builds) stay in files, so memory does not grow with the job. */
  return tide_sqlite_exec (merge->db, "PRAGMA page_size = 16384;"
                                      "PRAGMA journal_mode = OFF;"
                                      "PRAGMA synchronous = OFF;", error) &&
         tide_sqlite_exec (merge->db, cache, error) &&
         tide_schema_create (merge->db, error) &&
         tide_schema_ensure_all (merge->db, merge_objects, error) &&
         tide_sqlite_exec (merge->db, stack_map_sql, error);
}

/* The largest id of a table, 0 when it has none or cannot be read. */
static gint64
max_id (sqlite3    *db,
        const char *sql)
{
  gint64 value;

  tide_sqlite_query_int (db, sql, "", &value, NULL);
  return value;
}

/* ---- frames and stacks, deduplicated ---------------------------------------------- */

static char *
frame_key (sqlite3_stmt *stmt)
{
  int kind = sqlite3_column_int (stmt, 1);
  const char *build_id = (const char *) sqlite3_column_text (stmt, 7);

  if (kind == TIDE_FRAME_NATIVE && build_id != NULL)
    return g_strdup_printf ("b\x1f%s\x1f%" G_GINT64_FORMAT, build_id,
                            (gint64) sqlite3_column_int64 (stmt, 6));
  return g_strdup_printf ("k\x1f%d\x1f%s\x1f%s\x1f%d\x1f%s\x1f%" G_GINT64_FORMAT, kind,
                          column_text (stmt, 2), column_text (stmt, 3),
                          sqlite3_column_int (stmt, 4), column_text (stmt, 5),
                          (gint64) sqlite3_column_int64 (stmt, 6));
}

static gboolean
insert_frame (sqlite3_stmt *ins,
              sqlite3_stmt *row,
              gint64        id)
{
  sqlite3_bind_int64 (ins, 1, id);
  for (int col = 1; col <= 6; col++)
    sqlite3_bind_value (ins, col + 1, sqlite3_column_value (row, col));
  return sqlite3_step (ins) == SQLITE_DONE && sqlite3_reset (ins) == SQLITE_OK;
}

/* Inline rows belong to the native frame of their module and offset; a
 * second input with the same ones adds nothing. */
static gboolean
copy_inline_frame (Merge        *merge,
                   sqlite3_stmt *ins,
                   sqlite3_stmt *row,
                   GHashTable   *inline_here)
{
  g_autofree char *key = g_strdup_printf ("%s\x1f%" G_GINT64_FORMAT,
                                          column_text (row, 5),
                                          (gint64) sqlite3_column_int64 (row, 6));

  if (g_hash_table_contains (merge->inline_done, key))
    return TRUE;
  g_hash_table_add (inline_here, g_steal_pointer (&key));
  return insert_frame (ins, row, merge->next_inline_id++);
}

static gboolean
copy_frames (Merge       *merge,
             GHashTable  *frame_map,
             gboolean     has_modules,
             GError     **error)
{
  g_autofree char *sql = g_strdup_printf (
    "SELECT f.id, f.kind, f.function, f.file, f.line, f.module, f.module_offset, %s"
    " FROM src.frames f %s ORDER BY f.id",
    has_modules ? "m.build_id" : "NULL",
    has_modules ? "LEFT JOIN src.modules m ON m.path = f.module" : "");
  g_autoptr(GHashTable) inline_here = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                             NULL);
  sqlite3_stmt *row = tide_sqlite_prepare (merge->db, sql, "cannot read frames", error);
  sqlite3_stmt *ins = tide_sqlite_prepare (merge->db, "INSERT INTO frames (id, kind, function,"
                                           " file, line, module, module_offset)"
                                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                           "cannot write frames", error);
  gboolean ok = row != NULL && ins != NULL;
  int rc = SQLITE_DONE;

  while (ok && (rc = sqlite3_step (row)) == SQLITE_ROW)
    {
      gint64 old = sqlite3_column_int64 (row, 0);
      g_autofree char *key = NULL;
      gpointer found;

      if (sqlite3_column_int (row, 1) == TIDE_FRAME_INLINE)
        {
          ok = copy_inline_frame (merge, ins, row, inline_here);
          continue;
        }
      key = frame_key (row);
      found = g_hash_table_lookup (merge->frames, key);
      if (found == NULL)
        {
          gint64 id = merge->next_frame_id++;

          ok = insert_frame (ins, row, id);
          found = g_memdup2 (&id, sizeof id);
          g_hash_table_insert (merge->frames, g_steal_pointer (&key), found);
        }
      g_hash_table_insert (frame_map, g_memdup2 (&old, sizeof old), found);
    }
  if (ok && rc != SQLITE_DONE)
    ok = FALSE;
  if (!ok && (error == NULL || *error == NULL))
    tide_sqlite_set_error (error, merge->db, "cannot copy frames");
  sqlite3_finalize (row);
  sqlite3_finalize (ins);
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, inline_here);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      {
        g_hash_table_add (merge->inline_done, g_strdup (key));
      }
  }
  return ok && (!has_modules ||
                tide_sqlite_exec (merge->db, "INSERT OR IGNORE INTO modules (path, build_id)"
                                             " SELECT path, build_id FROM src.modules", error));
}

/* Notes in temp.stack_map that the input's stack (or stack node) @old is
 * the output's @new_id, for the rows copied after the stacks. */
static gboolean
write_stack_map (sqlite3_stmt *map,
                 gint64        old,
                 gint64        new_id)
{
  sqlite3_bind_int64 (map, 1, old);
  sqlite3_bind_int64 (map, 2, new_id);
  return sqlite3_step (map) == SQLITE_DONE && sqlite3_reset (map) == SQLITE_OK;
}

static gboolean
map_node (Merge         *merge,
          sqlite3_stmt  *ins,
          sqlite3_stmt  *map,
          GHashTable    *frame_map,
          GHashTable    *node_map,
          sqlite3_stmt  *row)
{
  gint64 old = sqlite3_column_int64 (row, 0);
  gint64 old_parent = sqlite3_column_int64 (row, 1);
  gint64 old_frame = sqlite3_column_int64 (row, 2);
  gint64 *parent = old_parent ? g_hash_table_lookup (node_map, &old_parent) : NULL;
  gint64 *frame = g_hash_table_lookup (frame_map, &old_frame);
  NodeKey key;
  gint64 *id;

  /* Callers come first in a trace the recorder wrote: anything else is a
   * damaged trace. */
  if ((old_parent != 0 && parent == NULL) || frame == NULL)
    return FALSE;
  key = (NodeKey) { parent ? *parent : 0, *frame };
  id = g_hash_table_lookup (merge->nodes, &key);
  if (id == NULL)
    {
      gint64 new_id = merge->next_node_id++;

      id = g_memdup2 (&new_id, sizeof new_id);
      g_hash_table_insert (merge->nodes, g_memdup2 (&key, sizeof key), id);
      sqlite3_bind_int64 (ins, 1, new_id);
      if (parent != NULL)
        sqlite3_bind_int64 (ins, 2, *parent);
      else
        sqlite3_bind_null (ins, 2);
      sqlite3_bind_int64 (ins, 3, *frame);
      sqlite3_bind_value (ins, 4, sqlite3_column_value (row, 3));
      if (sqlite3_step (ins) != SQLITE_DONE || sqlite3_reset (ins) != SQLITE_OK)
        return FALSE;
    }
  g_hash_table_insert (node_map, g_memdup2 (&old, sizeof old), id);
  return write_stack_map (map, old, *id);
}

static gboolean
copy_stacks (Merge       *merge,
             GHashTable  *frame_map,
             GError     **error)
{
  g_autoptr(GHashTable) node_map = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                          NULL);
  sqlite3_stmt *row = NULL, *ins = NULL, *map = NULL;
  gboolean ok;
  int rc = SQLITE_DONE;

  ok = tide_sqlite_exec (merge->db, "DELETE FROM temp.stack_map", error) &&
       (row = tide_sqlite_prepare (merge->db, "SELECT id, coalesce (parent_id, 0), frame_id,"
                                   " depth FROM src.stack_nodes ORDER BY id",
                                   "cannot read stacks", error)) != NULL &&
       (ins = tide_sqlite_prepare (merge->db, "INSERT INTO stack_nodes (id, parent_id, frame_id,"
                                   " depth) VALUES (?1, ?2, ?3, ?4)", "cannot write stacks",
                                   error)) != NULL &&
       (map = tide_sqlite_prepare (merge->db, "INSERT INTO temp.stack_map (old, new)"
                                   " VALUES (?1, ?2)", "cannot write stacks", error)) != NULL;
  while (ok && (rc = sqlite3_step (row)) == SQLITE_ROW)
    ok = map_node (merge, ins, map, frame_map, node_map, row);
  if (ok && rc != SQLITE_DONE)
    ok = FALSE;
  if (!ok && (error == NULL || *error == NULL))
    set_error (error, "the trace is damaged: a stack node before its caller, or without its "
                      "frame");
  sqlite3_finalize (row);
  sqlite3_finalize (ins);
  sqlite3_finalize (map);
  return ok;
}

/* The stack @old of the input, whose frames (the output's ids) are in
 * @frames: the output's stack of the same frames, written if it is new. */
static gboolean
map_stack (Merge        *merge,
           sqlite3_stmt *ins,
           sqlite3_stmt *map,
           gint64        old,
           GArray       *frames)
{
  char *text = tide_schema_stack_frames ((const gint64 *) (gpointer) frames->data, frames->len);
  gint64 *id = g_hash_table_lookup (merge->stacks, text);

  if (id == NULL)
    {
      gint64 new_id = merge->next_node_id++;

      id = g_memdup2 (&new_id, sizeof new_id);
      g_hash_table_insert (merge->stacks, text, id);
      sqlite3_bind_int64 (ins, 1, new_id);
      sqlite3_bind_text (ins, 2, text, -1, SQLITE_STATIC);
      if (sqlite3_step (ins) != SQLITE_DONE || sqlite3_reset (ins) != SQLITE_OK)
        return FALSE;
    }
  else
    g_free (text);
  return write_stack_map (map, old, *id);
}

/* The stacks of an input of schema 4, read a frame a row, in order. */
static gboolean
copy_frame_lists (Merge       *merge,
                  GHashTable  *frame_map,
                  GError     **error)
{
  g_autoptr(GArray) frames = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *row = NULL, *ins = NULL, *map = NULL;
  gint64 stack = 0;
  gboolean ok;
  int rc = SQLITE_DONE;

  ok = (row = tide_sqlite_prepare (merge->db, "SELECT s.id, j.value, j.type FROM src.stacks s,"
                                   " json_each (s.frames) j ORDER BY s.id, j.key",
                                   "cannot read stacks", error)) != NULL &&
       (ins = tide_sqlite_prepare (merge->db, "INSERT INTO stacks (id, frames) VALUES (?1, ?2)",
                                   "cannot write stacks", error)) != NULL &&
       (map = tide_sqlite_prepare (merge->db, "INSERT INTO temp.stack_map (old, new)"
                                   " VALUES (?1, ?2)", "cannot write stacks", error)) != NULL;
  while (ok && (rc = sqlite3_step (row)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (row, 0), old_frame = sqlite3_column_int64 (row, 1);
      gint64 *frame = g_hash_table_lookup (frame_map, &old_frame);

      if (id != stack && frames->len > 0)
        ok = map_stack (merge, ins, map, stack, frames);
      if (id != stack)
        g_array_set_size (frames, 0);
      stack = id;
      /* A frame that is not an integer, or names no frame, is damage. */
      if (frame == NULL || g_strcmp0 ((const char *) sqlite3_column_text (row, 2), "integer"))
        ok = FALSE;
      else
        g_array_append_val (frames, *frame);
    }
  if (ok && rc == SQLITE_DONE && frames->len > 0)
    ok = map_stack (merge, ins, map, stack, frames);
  if (ok && rc != SQLITE_DONE)
    ok = FALSE;
  if (!ok && (error == NULL || *error == NULL))
    set_error (error, "the trace is damaged: a stack that names no frame of its own");
  sqlite3_finalize (row);
  sqlite3_finalize (ins);
  sqlite3_finalize (map);
  return ok;
}

/* ---- the rows -------------------------------------------------------------------- */

typedef struct
{
  gint64 process;
  gint64 thread;
  gint64 scope;
  gint64 step;
  gint64 alloc;
  gint64 shift;
  gint64 source;
} Offsets;

#define STACK(col) "(SELECT new FROM temp.stack_map WHERE old = " col ")"

/* Every table but frames and stacks, with ids moved up by @o and times
 * moved by o->shift: :p process, :t thread, :c scope, :s step, :a
 * allocation, :x shift, :src the source. */
static const char * const copy_sql[] = {
  "INSERT INTO processes (id, pid, ppid, parent_id, exe, cmdline, rank, start_ns, end_ns,"
  " exit_status, sample_bytes, all_mode, dropped, worker, role)"
  " SELECT id + :p, pid, ppid, parent_id + :p, exe, cmdline, rank, start_ns + :x, end_ns + :x,"
  " exit_status, sample_bytes, all_mode, dropped, worker, role FROM src.processes ORDER BY id",
  "INSERT INTO merge_processes (process_id, source_id) SELECT id + :p, :src FROM src.processes",
  "INSERT INTO threads (id, process_id, tid, name)"
  " SELECT id + :t, process_id + :p, tid, name FROM src.threads ORDER BY id",
  "INSERT INTO mappings (process_id, start, end, load_bias, path, ts_ns)"
  " SELECT process_id + :p, start, end, load_bias, path, ts_ns + :x FROM src.mappings ORDER BY id",
  "INSERT INTO scopes (id, process_id, parent_id, name, path)"
  " SELECT id + :c, process_id + :p, parent_id + :c, name, path FROM src.scopes ORDER BY id",
  "INSERT INTO steps (id, process_id, number, label, start_ns, end_ns)"
  " SELECT id + :s, process_id + :p, number, label, start_ns + :x, end_ns + :x"
  " FROM src.steps ORDER BY id",
  "INSERT INTO allocations (id, process_id, thread_id, kind, device, address, size, weight,"
  " alloc_ns, free_ns, stack_id, scope_id)"
  " SELECT id + :a, process_id + :p, thread_id + :t, kind, device, address, size, weight,"
  " alloc_ns + :x, free_ns + :x, " STACK ("stack_id") ", scope_id + :c"
  " FROM src.allocations ORDER BY id",
  "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
  " SELECT process_id + :p, counter, device, ts_ns + :x, value FROM src.counters",
  "INSERT INTO transfers (process_id, direction, device, bytes, start_ns, duration_ns,"
  " stack_id, scope_id)"
  " SELECT process_id + :p, direction, device, bytes, start_ns + :x, duration_ns,"
  " " STACK ("stack_id") ", scope_id + :c FROM src.transfers ORDER BY id",
  "INSERT INTO step_residency (step_id, stack_id, scope_id, device, resident_bytes,"
  " resident_born_bytes)"
  " SELECT step_id + :s, " STACK ("stack_id") ", scope_id + :c, device, resident_bytes,"
  " resident_born_bytes FROM src.step_residency",
  "INSERT INTO step_residency_totals (step_id, resident_bytes, resident_born_bytes)"
  " SELECT step_id + :s, resident_bytes, resident_born_bytes FROM src.step_residency_totals",
  "INSERT INTO step_series (step_id, stack_id, scope_id, device, live_bytes, live_count)"
  " SELECT step_id + :s, " STACK ("stack_id") ", scope_id + :c, device, live_bytes, live_count"
  " FROM src.step_series",
  "INSERT INTO step_stats (step_id, rss_end, heap_live_end, mapped_live_end, device_live_end,"
  " retained_bytes, retained_count, resident_explained)"
  " SELECT step_id + :s, rss_end, heap_live_end, mapped_live_end, device_live_end,"
  " retained_bytes, retained_count, resident_explained FROM src.step_stats",
};

/* Only where every input kept them alike (tide-alloc-ranges.h). */
static const char * const copy_ranges_sql[] = {
  "INSERT INTO allocation_ranges (first_id, last_id, min_alloc_ns, max_alloc_ns)"
  " SELECT first_id + :a, last_id + :a, min_alloc_ns + :x, max_alloc_ns + :x"
  " FROM src.allocation_ranges ORDER BY first_id",
  "INSERT INTO long_lived_allocations (process_id, alloc_ns, id)"
  " SELECT process_id + :p, alloc_ns + :x, id + :a FROM src.long_lived_allocations",
};

static gboolean
run_copy (sqlite3        *db,
          const char     *sql,
          const Offsets  *o,
          GError        **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, "cannot copy the trace", error);
  struct { const char *name; gint64 value; } params[] = {
    { ":p", o->process }, { ":t", o->thread }, { ":c", o->scope }, { ":s", o->step },
    { ":a", o->alloc }, { ":x", o->shift }, { ":src", o->source },
  };

  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (params); i++)
    {
      int index = sqlite3_bind_parameter_index (stmt, params[i].name);

      if (index > 0)
        sqlite3_bind_int64 (stmt, index, params[i].value);
    }
  return tide_sqlite_run_once (db, stmt, "cannot copy the trace", error);
}

static gboolean
add_source_row (Merge            *merge,
                const MergeInput *in,
                gint64            source,
                GError          **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (merge->db,
    "INSERT INTO merge_sources (id, path, host, boot_id, launcher_rank, realtime_offset_ns,"
    " shift_ns, complete) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", "cannot write sources",
    error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, source);
  sqlite3_bind_text (stmt, 2, in->path, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 3, in->host, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 4, in->boot_id, -1, SQLITE_STATIC);
  if (in->has_rank)
    sqlite3_bind_int64 (stmt, 5, in->launcher_rank);
  if (in->has_offset)
    sqlite3_bind_int64 (stmt, 6, in->realtime_offset_ns);
  sqlite3_bind_int64 (stmt, 7, in->shift_ns);
  sqlite3_bind_int (stmt, 8, in->complete);
  return tide_sqlite_run_once (merge->db, stmt, "cannot write sources", error);
}

static gboolean
attach_input (Merge       *merge,
              const char  *path,
              GError     **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (merge->db, "ATTACH DATABASE ?1 AS src",
                                            "cannot read the trace", error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, path, -1, SQLITE_STATIC);
  if (!tide_sqlite_run_once (merge->db, stmt, path, error))
    return FALSE;
  /* A small cache for the input: it is read once, front to back. */
  return tide_sqlite_exec (merge->db, "PRAGMA src.cache_size = -2048;",
                           error);
}

static gboolean
copy_input (Merge            *merge,
            const MergeInput *in,
            gint64            source,
            GError          **error)
{
  g_autoptr(GHashTable) frame_map = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                           NULL);
  Offsets o = {
    .process = max_id (merge->db, "SELECT coalesce (max (id), 0) FROM processes"),
    .thread = max_id (merge->db, "SELECT coalesce (max (id), 0) FROM threads"),
    .scope = max_id (merge->db, "SELECT coalesce (max (id), 0) FROM scopes"),
    .step = max_id (merge->db, "SELECT coalesce (max (id), 0) FROM steps"),
    .alloc = max_id (merge->db, "SELECT coalesce (max (id), 0) FROM allocations"),
    .shift = in->shift_ns,
    .source = source,
  };
  gboolean ok;

  if (!attach_input (merge, in->path, error))
    return FALSE;
  ok = tide_sqlite_exec (merge->db, "BEGIN", error) &&
       add_source_row (merge, in, source, error) &&
       copy_frames (merge, frame_map, tide_sqlite_has (merge->db, "table", "modules") &&
                    max_id (merge->db, "SELECT count (*) FROM src.sqlite_schema"
                                       " WHERE name = 'modules'") > 0, error) &&
       copy_stacks (merge, frame_map, error) &&
       (max_id (merge->db, "SELECT count (*) FROM src.sqlite_schema WHERE type = 'table'"
                           " AND name = 'stacks'") == 0 ||
        copy_frame_lists (merge, frame_map, error));
  for (guint i = 0; ok && i < G_N_ELEMENTS (copy_sql); i++)
    ok = run_copy (merge->db, copy_sql[i], &o, error);
  for (guint i = 0; ok && merge->copy_ranges && i < G_N_ELEMENTS (copy_ranges_sql); i++)
    ok = run_copy (merge->db, copy_ranges_sql[i], &o, error);
  /* How its processes ended, where the input says (traces before it do not). */
  if (ok && max_id (merge->db, "SELECT count (*) FROM src.sqlite_schema WHERE name = 'process_ends'") > 0)
    ok = run_copy (merge->db, "INSERT INTO process_ends (process_id, kind, exit_code, signal,"
                              " core_dumped, oom, limit_bytes) SELECT process_id + :p, kind, exit_code,"
                              " signal, core_dumped, oom, limit_bytes FROM src.process_ends", &o, error);
  if (ok && max_id (merge->db, "SELECT count (*) FROM src.sqlite_schema WHERE name = 'alloc_failures'") > 0)
    ok = run_copy (merge->db, "INSERT INTO alloc_failures (process_id, ts_ns, api, error, device, bytes,"
                              " allocated_bytes, stack_id, scope_id, recovered)"
                              " SELECT process_id + :p, ts_ns + :x, api, error, device, bytes,"
                              " allocated_bytes, " STACK ("stack_id") ", scope_id + :c, recovered"
                              " FROM src.alloc_failures ORDER BY id", &o, error);
  ok = ok && tide_sqlite_exec (merge->db, "COMMIT", error);
  if (!ok)
    sqlite3_exec (merge->db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_exec (merge->db, "DETACH DATABASE src", NULL, NULL, NULL);
  return ok;
}

/* ---- after the copies -------------------------------------------------------------- */

static gint
compare_gint64 (gconstpointer a,
                gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

/* The median of (step end in @source) less (the same step's end in source
 * 1), over the first stepping process of each; FALSE when they share no
 * step number. */
static gboolean
source_skew (sqlite3 *db,
             gint64   source,
             gint64  *skew)
{
  static const char sql[] =
    "WITH firsts AS (SELECT m.source_id, min (s.process_id) AS process_id"
    "                FROM steps s JOIN merge_processes m ON m.process_id = s.process_id"
    "                GROUP BY m.source_id)"
    " SELECT b.end_ns - a.end_ns FROM steps a JOIN steps b ON a.number = b.number"
    " WHERE a.process_id = (SELECT process_id FROM firsts WHERE source_id = 1)"
    "   AND b.process_id = (SELECT process_id FROM firsts WHERE source_id = ?1)";
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, "", NULL);
  g_autoptr(GArray) diffs = g_array_new (FALSE, FALSE, sizeof (gint64));

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, source);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      gint64 d = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (diffs, d);
    }
  sqlite3_finalize (stmt);
  if (diffs->len == 0)
    return FALSE;
  g_array_sort (diffs, compare_gint64);
  *skew = g_array_index (diffs, gint64, diffs->len / 2);
  return TRUE;
}

static gboolean
store_skews (Merge   *merge,
             GError **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (merge->db, "UPDATE merge_sources SET skew_ns = ?2"
                                            " WHERE id = ?1", "cannot write sources", error);
  gboolean ok = stmt != NULL;

  for (guint i = 0; ok && i < merge->inputs->len; i++)
    {
      gint64 skew;

      if (!source_skew (merge->db, i + 1, &skew))
        continue;
      sqlite3_bind_int64 (stmt, 1, i + 1);
      sqlite3_bind_int64 (stmt, 2, skew);
      ok = sqlite3_step (stmt) == SQLITE_DONE && sqlite3_reset (stmt) == SQLITE_OK;
    }
  if (!ok && stmt != NULL)
    tide_sqlite_set_error (error, merge->db, "cannot write sources");
  sqlite3_finalize (stmt);
  return ok;
}

static gboolean
write_meta (Merge   *merge,
            GError **error)
{
  MergeInput *first = g_ptr_array_index (merge->inputs, 0);
  gint64 start = G_MAXINT64, end = G_MININT64, sample = 0;
  gboolean all = TRUE;
  sqlite3_stmt *stmt;
  g_autoptr(GString) joined = g_string_new (NULL);

  for (guint i = 0; i < merge->inputs->len; i++)
    {
      MergeInput *in = g_ptr_array_index (merge->inputs, i);

      start = MIN (start, in->start_ns + in->shift_ns);
      end = MAX (end, in->end_ns + in->shift_ns);
      /* The noisiest input's: a diff of merged traces then errs quiet. */
      sample = MAX (sample, in->all_mode ? 0 : in->sample_bytes);
      all = all && in->all_mode;
      g_string_append_printf (joined, "%s%s", i ? " " : "", in->path);
    }
  stmt = tide_sqlite_prepare (merge->db,
    "INSERT OR REPLACE INTO meta (key, value) VALUES"
    " ('tidemark_version', ?1), ('mode', 'merge'), ('command', ?2), ('start_ns', ?3),"
    " ('end_ns', ?4), ('sample_bytes', ?5), ('all_mode', ?6), ('short_lived_ns', ?7),"
    " ('merged_traces', ?8), ('complete', 0)", "cannot write meta", error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, PACKAGE_VERSION, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 2, joined->str, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 3, start);
  sqlite3_bind_int64 (stmt, 4, end);
  sqlite3_bind_int64 (stmt, 5, sample);
  sqlite3_bind_int (stmt, 6, all);
  sqlite3_bind_int64 (stmt, 7, merge->copy_ranges ? first->short_lived_ns : 0);
  sqlite3_bind_int (stmt, 8, merge->inputs->len);
  return tide_sqlite_run_once (merge->db, stmt, "cannot write meta", error);
}

static gboolean
finish_output (Merge   *merge,
               GError **error)
{
  return store_skews (merge, error) &&
         (merge->copy_ranges ||
          tide_sqlite_exec (merge->db, "DROP TABLE allocation_ranges;"
                                       "DROP TABLE long_lived_allocations;", error)) &&
         tide_analysis_build (merge->db, error) &&
         tide_sqlite_exec (merge->db, "INSERT OR REPLACE INTO meta (key, value)"
                                      " VALUES ('complete', 1);", error);
}

static gboolean
same_short_lived (GPtrArray *inputs)
{
  MergeInput *first = g_ptr_array_index (inputs, 0);

  for (guint i = 1; i < inputs->len; i++)
    if (((MergeInput *) g_ptr_array_index (inputs, i))->short_lived_ns != first->short_lived_ns)
      return FALSE;
  return first->short_lived_ns > 0;
}

static gboolean
merge_all (Merge                   *merge,
           const char              *partial,
           const TideMergeOptions  *options,
           GError                 **error)
{
  guint64 total = 0, done = 0;

  for (guint i = 0; i < merge->inputs->len; i++)
    total += ((MergeInput *) g_ptr_array_index (merge->inputs, i))->bytes;
  if (!open_output (merge, partial, error))
    return FALSE;
  merge->copy_ranges = same_short_lived (merge->inputs);
  compute_shifts (merge->inputs);
  if (!write_meta (merge, error))
    return FALSE;
  for (guint i = 0; i < merge->inputs->len; i++)
    {
      MergeInput *in = g_ptr_array_index (merge->inputs, i);

      if (!copy_input (merge, in, i + 1, error))
        {
          g_prefix_error (error, "%s: ", in->path);
          return FALSE;
        }
      done += in->bytes;
      if (options->progress != NULL)
        options->progress (i + 1, merge->inputs->len, in->path, done, total,
                           options->progress_data);
    }
  return finish_output (merge, error);
}

/**
 * tide_trace_merge:
 * @inputs: %NULL-terminated trace paths, the first one the clock of the result
 *
 * Writes @output, or nothing: a merge that fails removes what it wrote.
 * Refuses, in one line each: an input given twice, a damaged one, one of
 * another schema version, an unfinished one (unless allow_incomplete), and
 * an existing @output (unless force).
 */
gboolean
tide_trace_merge (const char * const      *inputs,
                  const char              *output,
                  const TideMergeOptions  *options,
                  GError                 **error)
{
  g_autoptr(GPtrArray) read = NULL;
  g_autofree char *partial = NULL;
  Merge merge = { 0 };
  gboolean ok;

  g_return_val_if_fail (inputs != NULL && inputs[0] != NULL && output != NULL, FALSE);

  for (guint i = 0; inputs[i] != NULL; i++)
    if (g_str_equal (inputs[i], output) || same_file (inputs[i], output))
      {
        set_error (error, "%s is an input; the merge writes a new trace", output);
        return FALSE;
      }
  if (!options->force && g_file_test (output, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS, "%s exists already; --force replaces it",
                   output);
      return FALSE;
    }
  if ((read = read_inputs (inputs, options, error)) == NULL)
    return FALSE;

  partial = g_strdup_printf ("%s.merging-%d", output, (int) getpid ());
  g_unlink (partial);
  merge = (Merge) {
    .inputs = read,
    .frames = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free),
    .nodes = g_hash_table_new_full (node_key_hash, node_key_equal, g_free, g_free),
    .stacks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free),
    .inline_done = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
    .next_frame_id = 1,
    .next_inline_id = TIDE_INLINE_FRAME_ID_BASE,
    .next_node_id = 1,
  };
  ok = merge_all (&merge, partial, options, error);
  if (merge.db != NULL && sqlite3_close (merge.db) != SQLITE_OK && ok)
    {
      set_error (error, "cannot close %s", partial);
      ok = FALSE;
    }
  g_hash_table_unref (merge.frames);
  g_hash_table_unref (merge.nodes);
  g_hash_table_unref (merge.stacks);
  g_hash_table_unref (merge.inline_done);
  if (ok && g_rename (partial, output) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "cannot write %s: %s",
                   output, g_strerror (errno));
      ok = FALSE;
    }
  if (!ok)
    g_unlink (partial);
  return ok;
}
