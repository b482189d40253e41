/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Timeline queries.  A view of W columns over [begin, end) reads the
 * coarsest LOD level whose buckets are no wider than one column, so each
 * lane costs about W..4W primary-key rows whatever the trace size; the raw
 * counters table is never scanned.  Zoomed in past the finest level, one
 * bucket spans several columns and is repeated across them.
 *
 * Gaps between buckets are carried forward (a counter keeps its value until
 * the next sample), but never past the lane's last sample, so a trace still
 * being written does not draw into the future.  "All processes" sums the
 * carried values of every process column by column; min and max are then
 * the sums of the per-process extremes, an envelope rather than the exact
 * extremes of the sum.
 */
#include "config.h"

#include "tide-timeline-data.h"

#include <math.h>
#include <string.h>

#include "tide-analysis.h"
#include "tide-report.h"
#include "tide-saturate.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-private.h"

static const struct
{
  gint        counter;
  const char *name;
} host_lanes[] = {
  { TIDE_COUNTER_RSS,       "Host RSS" },
  { TIDE_COUNTER_HEAP_LIVE, "Live heap" },
  { TIDE_COUNTER_MAPPED,    "Mapped" },
  { TIDE_COUNTER_PINNED,    "Pinned" },
};

typedef struct
{
  sqlite3 *db;
  gint64   offset_ns;    /* LOD origin minus trace start */
  gint64   begin_ns;
  gint64   end_ns;
  guint    n;
  gint     level;
  gint64   bucket_ns;
  gint64   limit_ns;     /* the trace's end: values are carried up to it */
  TideTimelineCache *cache; /* nullable */
} Query;

/* The LOD rows of one lane and level, kept in memory in chunks of
 * CHUNK_BUCKETS consecutive buckets: a view reads fewer than 4 buckets a
 * column, so a frame needs at most a few chunks, and panning or zooming
 * back over a read part costs no query.  Each chunk also keeps what lies
 * outside it (the value in force at its start, whether rows follow it), so
 * a view's edges need no query either. */
#define CHUNK_BUCKETS 2048

typedef struct
{
  gint64 process_id;
  gint64 index;        /* first bucket / CHUNK_BUCKETS */
  gint   counter;
  gint   device;
  gint   level;
} ChunkKey;

typedef struct
{
  ChunkKey key;
  guint    n;
  gint64  *bucket;     /* sorted */
  gint64  *min;
  gint64  *max;
  gint64  *last;
  gboolean has_before; /* a row before the chunk ... */
  gint64   before;     /* ... its last value */
  gboolean has_after;  /* a row after the chunk */
  guint64  used;       /* LRU tick */
} Chunk;

typedef struct
{
  gint counter;
  gint device;
  char *name;
} LaneSpec;

struct _TideTimelineCache
{
  TideTrace  *trace;       /* what the chunks were read from */
  GHashTable *chunks;      /* ChunkKey* -> Chunk* */
  gsize       bytes;
  gsize       max_bytes;
  guint64     tick;
  guint64     queries;     /* SQLite statements run for chunks */
  gint64      offset_ns;
  gint64      lanes_process_id;
  GArray     *lanes;       /* LaneSpec of lanes_process_id, or NULL */
  GArray     *process_ids; /* what lanes_process_id stands for */
};

static sqlite3_stmt *
prepare (sqlite3     *db,
         const char  *sql,
         GError     **error)
{
  return tide_sqlite_prepare (db, sql, "cannot query the timeline", error);
}

static gboolean
finish (sqlite3       *db,
        sqlite3_stmt  *stmt,
        int            rc,
        GError       **error)
{
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    {
      tide_sqlite_set_error (error, db, "cannot query the timeline");
      return FALSE;
    }
  return TRUE;
}

gint
tide_timeline_data_pick_level (gint64 column_ns)
{
  gint level = 0;

  while (level + 1 < TIDE_LOD_LEVELS &&
         ((gint64) TIDE_LOD_BASE_NS << (2 * (level + 1))) <= column_ns)
    level++;
  return level;
}

void
tide_lane_data_free (TideLaneData *lane)
{
  if (lane == NULL)
    return;
  g_free (lane->name);
  g_free (lane->min);
  g_free (lane->max);
  g_free (lane->last);
  g_free (lane->has);
  g_free (lane);
}

void
tide_timeline_data_free (TideTimelineData *data)
{
  if (data == NULL)
    return;
  g_ptr_array_unref (data->lanes);
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    tide_lane_data_free (data->rss_classes[i]);
  g_free (data);
}

static TideLaneData *
lane_new (gint        counter,
          gint        device,
          const char *name,
          guint       n)
{
  TideLaneData *lane = g_new0 (TideLaneData, 1);

  lane->counter = counter;
  lane->device = device;
  lane->name = g_strdup (name);
  lane->n_columns = n;
  lane->min = g_new0 (gint64, n);
  lane->max = g_new0 (gint64, n);
  lane->last = g_new0 (gint64, n);
  lane->has = g_new0 (guint8, n);
  return lane;
}

/* Column of a time, clamped to the view. */
static gint64
column_of (const Query *q,
           gint64       t)
{
  gint64 span = MAX (q->end_ns - q->begin_ns, 1);
  double c = (double) (t - q->begin_ns) * q->n / span;

  return (gint64) CLAMP (c, -1.0, (double) q->n);
}

static void
merge_bucket (TideLaneData *lane,
              const Query  *q,
              gint64        bucket,
              const gint64  v[3])
{
  gint64 t0 = bucket * q->bucket_ns + q->offset_ns;
  gint64 c0 = MAX (column_of (q, t0), 0);
  gint64 c1 = MIN (column_of (q, t0 + q->bucket_ns - 1), (gint64) q->n - 1);

  for (gint64 c = c0; c <= c1; c++)
    {
      if (!lane->has[c])
        {
          lane->min[c] = v[0];
          lane->max[c] = v[1];
          lane->has[c] = 1;
        }
      lane->min[c] = MIN (lane->min[c], v[0]);
      lane->max[c] = MAX (lane->max[c], v[1]);
      lane->last[c] = v[2];
    }
}

/* The last value before the view, and whether samples follow it. */
static gboolean
lane_edges (const Query   *q,
            gint64         process_id,
            TideLaneData  *lane,
            gint64         lo,
            gint64         hi,
            gboolean      *after,
            GError       **error)
{
  sqlite3_stmt *stmt;
  int rc;

  stmt = prepare (q->db,
                  "SELECT (SELECT last_value FROM counter_lod WHERE process_id = ?1"
                  "   AND counter = ?2 AND device = ?3 AND level = ?4 AND bucket < ?5"
                  "   ORDER BY bucket DESC LIMIT 1),"
                  " EXISTS (SELECT 1 FROM counter_lod WHERE process_id = ?1"
                  "   AND counter = ?2 AND device = ?3 AND level = ?4 AND bucket > ?6)", error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int (stmt, 2, lane->counter);
  sqlite3_bind_int (stmt, 3, lane->device);
  sqlite3_bind_int (stmt, 4, q->level);
  sqlite3_bind_int64 (stmt, 5, lo);
  sqlite3_bind_int64 (stmt, 6, hi);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      lane->has_before = sqlite3_column_type (stmt, 0) != SQLITE_NULL;
      lane->before = sqlite3_column_int64 (stmt, 0);
      *after = sqlite3_column_int (stmt, 1) != 0;
    }
  return finish (q->db, stmt, rc, error);
}

/* Fills gaps with the value in force, up to the last sample or the end of
 * the trace, whichever is later. */
static void
lane_carry (const Query  *q,
            TideLaneData *lane,
            gboolean      after)
{
  gint64 end = lane->n_columns;
  gboolean known = lane->has_before;
  gint64 value = lane->before;

  if (!after)
    {
      while (end > 0 && !lane->has[end - 1])
        end--;
      end = MAX (end, MIN (column_of (q, q->limit_ns - 1) + 1, (gint64) lane->n_columns));
    }
  for (gint64 c = 0; c < end; c++)
    {
      if (lane->has[c])
        {
          known = TRUE;
          value = lane->last[c];
        }
      else if (known)
        {
          lane->min[c] = lane->max[c] = lane->last[c] = value;
          lane->has[c] = 1;
        }
    }
}

static guint
chunk_key_hash (gconstpointer p)
{
  const ChunkKey *k = p;

  /* Unsigned arithmetic: device is -1 for host lanes. */
  return (guint) ((guint64) k->process_id * 2654435761u) ^ (guint) ((guint64) k->index * 40503u) ^
         ((guint) k->counter << 20) ^ ((guint) k->device << 8) ^ (guint) k->level;
}

static gboolean
chunk_key_equal (gconstpointer a,
                 gconstpointer b)
{
  const ChunkKey *x = a, *y = b;

  /* Field by field: the struct's padding is not initialised. */
  return x->process_id == y->process_id && x->index == y->index && x->counter == y->counter &&
         x->device == y->device && x->level == y->level;
}

static gsize
chunk_bytes (const Chunk *chunk)
{
  return sizeof *chunk + (gsize) chunk->n * 4 * sizeof (gint64);
}

static void
chunk_free (Chunk *chunk)
{
  g_free (chunk->bucket);
  g_free (chunk->min);
  g_free (chunk->max);
  g_free (chunk->last);
  g_free (chunk);
}

static void
lane_spec_clear (gpointer p)
{
  g_free (((LaneSpec *) p)->name);
}

static void
lane_specs_free (GArray *lanes)
{
  g_array_unref (lanes);
}

/**
 * tide_timeline_cache_new:
 * @max_bytes: the most memory its LOD rows may take
 *
 * Keeps the LOD rows that tide_timeline_data_query_cached() reads, for the
 * views of one trace; the least recently used chunks go first.
 */
TideTimelineCache *
tide_timeline_cache_new (gsize max_bytes)
{
  TideTimelineCache *cache = g_new0 (TideTimelineCache, 1);

  cache->chunks = g_hash_table_new_full (chunk_key_hash, chunk_key_equal, NULL,
                                         (GDestroyNotify) chunk_free);
  cache->max_bytes = max_bytes;
  return cache;
}

static void
cache_clear (TideTimelineCache *cache)
{
  g_hash_table_remove_all (cache->chunks);
  g_clear_pointer (&cache->lanes, lane_specs_free);
  g_clear_pointer (&cache->process_ids, g_array_unref);
  g_clear_object (&cache->trace);
  cache->bytes = 0;
}

void
tide_timeline_cache_free (TideTimelineCache *cache)
{
  if (cache == NULL)
    return;
  cache_clear (cache);
  g_hash_table_unref (cache->chunks);
  g_free (cache);
}

gsize
tide_timeline_cache_get_bytes (const TideTimelineCache *cache)
{
  return cache->bytes;
}

guint64
tide_timeline_cache_get_queries (const TideTimelineCache *cache)
{
  return cache->queries;
}

static void
cache_evict (TideTimelineCache *cache,
             const Chunk       *keep)
{
  while (cache->bytes > cache->max_bytes)
    {
      GHashTableIter iter;
      Chunk *chunk, *oldest = NULL;

      g_hash_table_iter_init (&iter, cache->chunks);
      while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &chunk))
        if (chunk != keep && (oldest == NULL || chunk->used < oldest->used))
          oldest = chunk;
      if (oldest == NULL)
        return;
      cache->bytes -= chunk_bytes (oldest);
      g_hash_table_remove (cache->chunks, &oldest->key);
    }
}

static void
chunk_append (Chunk        *chunk,
              sqlite3_stmt *stmt,
              guint        *allocated)
{
  if (chunk->n == *allocated)
    {
      *allocated = MAX (64, *allocated * 2);
      chunk->bucket = g_renew (gint64, chunk->bucket, *allocated);
      chunk->min = g_renew (gint64, chunk->min, *allocated);
      chunk->max = g_renew (gint64, chunk->max, *allocated);
      chunk->last = g_renew (gint64, chunk->last, *allocated);
    }
  chunk->bucket[chunk->n] = sqlite3_column_int64 (stmt, 0);
  chunk->min[chunk->n] = sqlite3_column_int64 (stmt, 1);
  chunk->max[chunk->n] = sqlite3_column_int64 (stmt, 2);
  chunk->last[chunk->n] = sqlite3_column_int64 (stmt, 3);
  chunk->n++;
}

/* One chunk's rows and edges: two primary-key range reads. */
static Chunk *
chunk_read (const Query     *q,
            const ChunkKey  *key,
            GError         **error)
{
  g_autoptr(GPtrArray) hold = g_ptr_array_new_with_free_func ((GDestroyNotify) chunk_free);
  Chunk *chunk = g_new0 (Chunk, 1);
  TideLaneData probe = { .counter = key->counter, .device = key->device };
  Query edges = *q;
  guint allocated = 0;
  sqlite3_stmt *stmt;
  int rc;

  g_ptr_array_add (hold, chunk);
  chunk->key = *key;
  edges.level = key->level;
  if (!lane_edges (&edges, key->process_id, &probe, key->index * CHUNK_BUCKETS,
                   (key->index + 1) * CHUNK_BUCKETS - 1, &chunk->has_after, error))
    return NULL;
  chunk->has_before = probe.has_before;
  chunk->before = probe.before;
  stmt = prepare (q->db,
                  "SELECT bucket, min_value, max_value, last_value FROM counter_lod"
                  " WHERE process_id = ?1 AND counter = ?2 AND device = ?3 AND level = ?4"
                  " AND bucket BETWEEN ?5 AND ?6 ORDER BY bucket", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, key->process_id);
  sqlite3_bind_int (stmt, 2, key->counter);
  sqlite3_bind_int (stmt, 3, key->device);
  sqlite3_bind_int (stmt, 4, key->level);
  sqlite3_bind_int64 (stmt, 5, key->index * CHUNK_BUCKETS);
  sqlite3_bind_int64 (stmt, 6, (key->index + 1) * CHUNK_BUCKETS - 1);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    chunk_append (chunk, stmt, &allocated);
  if (!finish (q->db, stmt, rc, error))
    return NULL;
  q->cache->queries += 2;
  return g_ptr_array_steal_index (hold, 0);
}

static const Chunk *
chunk_get (const Query  *q,
           gint64        process_id,
           gint          counter,
           gint          device,
           gint64        index,
           GError      **error)
{
  ChunkKey key = { process_id, index, counter, device, q->level };
  TideTimelineCache *cache = q->cache;
  Chunk *chunk = g_hash_table_lookup (cache->chunks, &key);

  if (chunk == NULL)
    {
      if ((chunk = chunk_read (q, &key, error)) == NULL)
        return NULL;
      g_hash_table_insert (cache->chunks, &chunk->key, chunk);
      cache->bytes += chunk_bytes (chunk);
      cache_evict (cache, chunk);
    }
  chunk->used = ++cache->tick;
  return chunk;
}

/* First row of @chunk at or after @bucket. */
static guint
chunk_search (const Chunk *chunk,
              gint64       bucket)
{
  guint lo = 0, hi = chunk->n;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (chunk->bucket[mid] < bucket)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* lane_read()'s work from the cached chunks of buckets [lo, hi]. */
static gboolean
lane_read_cached (const Query   *q,
                  gint64         process_id,
                  TideLaneData  *lane,
                  gint64         lo,
                  gint64         hi,
                  gboolean      *after,
                  GError       **error)
{
  gint64 first = MAX (lo, 0) / CHUNK_BUCKETS, last = MAX (hi, 0) / CHUNK_BUCKETS;
  const Chunk *chunk;
  guint i;

  if ((chunk = chunk_get (q, process_id, lane->counter, lane->device, first, error)) == NULL)
    return FALSE;
  i = chunk_search (chunk, lo);
  lane->has_before = i > 0 || chunk->has_before;
  lane->before = i > 0 ? chunk->last[i - 1] : chunk->before;
  for (gint64 index = first; index <= last; index++)
    {
      if (index > first &&
          (chunk = chunk_get (q, process_id, lane->counter, lane->device, index, error)) == NULL)
        return FALSE;
      for (i = index == first ? i : 0; i < chunk->n && chunk->bucket[i] <= hi; i++)
        {
          gint64 v[3] = { chunk->min[i], chunk->max[i], chunk->last[i] };
          merge_bucket (lane, q, chunk->bucket[i], v);
        }
    }
  *after = i < chunk->n || chunk->has_after;
  return TRUE;
}

/* One process's lane, read from its LOD level and carried forward. */
static TideLaneData *
lane_read (const Query   *q,
           gint64         process_id,
           gint           counter,
           gint           device,
           GError       **error)
{
  g_autoptr(GPtrArray) hold = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_lane_data_free);
  TideLaneData *lane = lane_new (counter, device, NULL, q->n);
  gint64 lo = (q->begin_ns - q->offset_ns) / q->bucket_ns;
  gint64 hi = (q->end_ns - q->offset_ns) / q->bucket_ns;
  gboolean after = FALSE;
  sqlite3_stmt *stmt;
  int rc;

  g_ptr_array_add (hold, lane);
  if (q->begin_ns - q->offset_ns < 0)
    lo = -1;
  if (q->cache != NULL)
    {
      if (!lane_read_cached (q, process_id, lane, lo, hi, &after, error))
        return NULL;
      lane_carry (q, lane, after);
      return g_ptr_array_steal_index (hold, 0);
    }
  if (!lane_edges (q, process_id, lane, lo, hi, &after, error))
    return NULL;
  stmt = prepare (q->db,
                  "SELECT bucket, min_value, max_value, last_value FROM counter_lod"
                  " WHERE process_id = ?1 AND counter = ?2 AND device = ?3 AND level = ?4"
                  " AND bucket BETWEEN ?5 AND ?6 ORDER BY bucket", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int (stmt, 2, counter);
  sqlite3_bind_int (stmt, 3, device);
  sqlite3_bind_int (stmt, 4, q->level);
  sqlite3_bind_int64 (stmt, 5, lo);
  sqlite3_bind_int64 (stmt, 6, hi);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 v[3] = { sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
                      sqlite3_column_int64 (stmt, 3) };
      merge_bucket (lane, q, sqlite3_column_int64 (stmt, 0), v);
    }
  if (!finish (q->db, stmt, rc, error))
    return NULL;
  lane_carry (q, lane, after);
  return g_ptr_array_steal_index (hold, 0);
}

static void
lane_add (TideLaneData       *sum,
          const TideLaneData *part)
{
  if (part->has_before)
    sum->before = tide_sat_add (sum->before, part->before);
  sum->has_before |= part->has_before;
  for (guint c = 0; c < sum->n_columns; c++)
    if (part->has[c])
      {
        sum->min[c] = tide_sat_add (sum->min[c], part->min[c]);
        sum->max[c] = tide_sat_add (sum->max[c], part->max[c]);
        sum->last[c] = tide_sat_add (sum->last[c], part->last[c]);
        sum->has[c] = 1;
      }
}

static void
lane_set_peak (TideLaneData *lane)
{
  lane->peak = lane->has_before ? lane->before : 0;
  for (guint c = 0; c < lane->n_columns; c++)
    if (lane->has[c])
      lane->peak = MAX (lane->peak, lane->max[c]);
}

static GArray *
load_process_ids (sqlite3     *db,
                  gint64       process_id,
                  GError     **error)
{
  g_autoptr(GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *stmt;
  int rc;

  if (process_id != 0)
    {
      g_array_append_val (ids, process_id);
      return g_steal_pointer (&ids);
    }
  stmt = prepare (db, "SELECT id FROM processes ORDER BY id", error);
  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (ids, id);
    }
  if (!finish (db, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&ids);
}

/* The (counter, device) pair after @pair, in two primary-key seeks: the
 * next device of this counter, else the first device of the next counter.
 * (A row-value comparison would seek on the counter only and then scan.) */
static int
next_pair (sqlite3_stmt *same_counter,
           sqlite3_stmt *next_counter,
           gint64        process_id,
           gint          pair[2])
{
  int rc;

  sqlite3_reset (same_counter);
  sqlite3_bind_int64 (same_counter, 1, process_id);
  sqlite3_bind_int (same_counter, 2, pair[0]);
  sqlite3_bind_int (same_counter, 3, pair[1]);
  if ((rc = sqlite3_step (same_counter)) == SQLITE_ROW)
    {
      pair[1] = sqlite3_column_int (same_counter, 0);
      return rc;
    }
  if (rc != SQLITE_DONE)
    return rc;
  sqlite3_reset (next_counter);
  sqlite3_bind_int64 (next_counter, 1, process_id);
  sqlite3_bind_int (next_counter, 2, pair[0]);
  if ((rc = sqlite3_step (next_counter)) == SQLITE_ROW)
    {
      pair[0] = sqlite3_column_int (next_counter, 0);
      pair[1] = sqlite3_column_int (next_counter, 1);
    }
  return rc;
}

static void
add_pair (GArray     *pairs,
          const gint  pair[2])
{
  for (guint j = 0; j < pairs->len; j++)
    if (memcmp (&g_array_index (pairs, gint, 2 * j), pair, 2 * sizeof (gint)) == 0)
      return;
  g_array_append_vals (pairs, pair, 1);
}

/* Appends the device (counter, device) pairs to @pairs without scanning. */
static gboolean
probe_device_pairs (const Query  *q,
                    GArray       *process_ids,
                    GArray       *pairs,
                    GError      **error)
{
  sqlite3_stmt *same = NULL, *next = NULL;
  int rc = SQLITE_DONE;

  same = prepare (q->db, "SELECT device FROM counter_lod WHERE process_id = ?1 AND counter = ?2"
                         " AND device > ?3 ORDER BY device LIMIT 1", error);
  if (same != NULL)
    next = prepare (q->db, "SELECT counter, device FROM counter_lod WHERE process_id = ?1"
                           " AND counter > ?2 ORDER BY counter, device LIMIT 1", error);
  if (next == NULL)
    {
      sqlite3_finalize (same);
      return FALSE;
    }
  for (guint i = 0; i < process_ids->len && rc == SQLITE_DONE; i++)
    {
      gint pair[2] = { G_MININT, G_MININT };
      gint before[2];

      /* Each seek must move forward: in a damaged file (rows out of key
       * order, a counter that is text) it may not, and would never end. */
      while (memcpy (before, pair, sizeof pair),
             (rc = next_pair (same, next, g_array_index (process_ids, gint64, i), pair)) ==
             SQLITE_ROW)
        {
          if (pair[0] < before[0] || (pair[0] == before[0] && pair[1] <= before[1]))
            {
              sqlite3_finalize (same);
              sqlite3_finalize (next);
              g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_DAMAGED,
                           "the trace is damaged: its timeline summary (counter_lod) is out "
                           "of order");
              return FALSE;
            }
          if (pair[1] >= 0)
            add_pair (pairs, pair);
        }
    }
  sqlite3_finalize (same);
  return finish (q->db, next, rc, error);
}

static char *
counter_kind_name (sqlite3 *db,
                   gint     counter)
{
  sqlite3_stmt *stmt = NULL;
  char *kind = NULL;

  if (sqlite3_prepare_v2 (db, "SELECT name FROM counter_kinds WHERE id = ?1", -1, &stmt,
                          NULL) == SQLITE_OK)
    {
      sqlite3_bind_int (stmt, 1, counter);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        kind = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
    }
  sqlite3_finalize (stmt);
  return kind;
}

/* "cuda:0 used", "cuda:0 torch reserved": the counter's name without its
 * "device_" prefix.  NULL for counters that are not a lane: the device's
 * size is a constant, not memory in use. */
static char *
device_lane_name (sqlite3 *db,
                  gint     counter,
                  gint     device)
{
  g_autofree char *kind = counter_kind_name (db, counter);
  const char *label;

  if (kind == NULL)
    return g_strdup_printf ("cuda:%d counter %d", device, counter);
  if (g_str_equal (kind, "device_total"))
    return NULL;
  label = g_str_has_prefix (kind, "device_") ? kind + strlen ("device_") : kind;
  return g_strdelimit (g_strdup_printf ("cuda:%d %s", device, label), "_", ' ');
}

/* Reads one lane over all the processes; NULL with no error: no data. */
static TideLaneData *
lane_query (const Query   *q,
            GArray        *process_ids,
            gint           counter,
            gint           device,
            const char    *name,
            GError       **error)
{
  TideLaneData *sum = lane_new (counter, device, name, q->n);
  gboolean any = FALSE;

  for (guint i = 0; i < process_ids->len; i++)
    {
      TideLaneData *part = lane_read (q, g_array_index (process_ids, gint64, i), counter,
                                      device, error);
      if (part == NULL)
        {
          tide_lane_data_free (sum);
          return NULL;
        }
      for (guint c = 0; c < q->n && !any; c++)
        any = part->has[c];
      any |= part->has_before;
      lane_add (sum, part);
      tide_lane_data_free (part);
    }
  if (!any)
    {
      tide_lane_data_free (sum);
      return NULL;
    }
  lane_set_peak (sum);
  return sum;
}

static gint64
lod_origin (sqlite3 *db)
{
  /* The origin tide-analysis.c used for the buckets. */
  return tide_sqlite_meta_int (db, "start_ns");
}

/* The lanes a view may have: the host lanes, then each device counter
 * that is memory in use, named. */
static GArray *
lane_specs_load (const Query  *q,
                 GArray       *process_ids,
                 GError      **error)
{
  g_autoptr(GArray) pairs = g_array_new (FALSE, FALSE, 2 * sizeof (gint));
  GArray *specs = g_array_new (FALSE, FALSE, sizeof (LaneSpec));

  g_array_set_clear_func (specs, lane_spec_clear);
  for (guint i = 0; i < G_N_ELEMENTS (host_lanes); i++)
    {
      LaneSpec spec = { host_lanes[i].counter, -1, g_strdup (host_lanes[i].name) };
      g_array_append_val (specs, spec);
    }
  if (!probe_device_pairs (q, process_ids, pairs, error))
    {
      lane_specs_free (specs);
      return NULL;
    }
  for (guint i = 0; i < pairs->len; i++)
    {
      const gint *pair = &g_array_index (pairs, gint, 2 * i);
      LaneSpec spec = { pair[0], pair[1], device_lane_name (q->db, pair[0], pair[1]) };

      if (spec.name != NULL)
        g_array_append_val (specs, spec);
    }
  return specs;
}

static gboolean
add_lanes (const Query       *q,
           GArray            *process_ids,
           GArray            *specs,
           TideTimelineData  *data,
           GError           **error)
{
  for (guint i = 0; i < specs->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      const LaneSpec *spec = &g_array_index (specs, LaneSpec, i);
      TideLaneData *lane = lane_query (q, process_ids, spec->counter, spec->device, spec->name,
                                       &local_error);

      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (lane != NULL)
        g_ptr_array_add (data->lanes, lane);
    }
  return TRUE;
}

/* The class counters that split the RSS lane, when the trace has them. */
static gboolean
add_rss_classes (const Query       *q,
                 GArray            *process_ids,
                 TideTimelineData  *data,
                 GError           **error)
{
  static const gint counters[TIDE_RSS_N_CLASSES] = {
    [TIDE_RSS_CLASS_FILE] = TIDE_COUNTER_RSS_FILE,
    [TIDE_RSS_CLASS_SHMEM] = TIDE_COUNTER_RSS_SHMEM,
    [TIDE_RSS_CLASS_ANON] = TIDE_COUNTER_RSS_ANON,
    [TIDE_RSS_CLASS_ALLOC_FREE] = TIDE_COUNTER_ALLOC_FREE,
  };

  if (tide_timeline_data_find_lane (data, TIDE_COUNTER_RSS, -1) == NULL)
    return TRUE;
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    {
      g_autoptr(GError) local_error = NULL;

      data->rss_classes[i] = lane_query (q, process_ids, counters[i], -1, NULL, &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }
  return TRUE;
}

/* What a query reads besides the LOD rows, from @cache when it has it. */
/* The rows of a cache are another trace's once @trace is not its own. */
static void
cache_bind (TideTimelineCache *cache,
            TideTrace         *trace)
{
  if (cache->trace == trace)
    return;
  cache_clear (cache);
  cache->trace = g_object_ref (trace);
}

static GArray *
query_lanes (Query       *q,
             TideTrace   *trace,
             gint64       process_id,
             GArray     **process_ids,
             GError     **error)
{
  TideTimelineCache *cache = q->cache;
  GArray *specs;

  if (cache != NULL && cache->trace == trace && cache->lanes != NULL &&
      cache->lanes_process_id == process_id)
    {
      q->offset_ns = cache->offset_ns;
      *process_ids = g_array_ref (cache->process_ids);
      return g_array_ref (cache->lanes);
    }
  q->offset_ns = lod_origin (q->db) - tide_trace_get_start_ns (trace);
  if ((*process_ids = load_process_ids (q->db, process_id, error)) == NULL ||
      (specs = lane_specs_load (q, *process_ids, error)) == NULL)
    return NULL;
  if (cache != NULL)
    {
      cache_bind (cache, trace);
      g_clear_pointer (&cache->lanes, lane_specs_free);
      g_clear_pointer (&cache->process_ids, g_array_unref);
      cache->lanes = g_array_ref (specs);
      cache->process_ids = g_array_ref (*process_ids);
      cache->lanes_process_id = process_id;
      cache->offset_ns = q->offset_ns;
    }
  return specs;
}

static void
query_init (Query             *q,
            TideTrace         *trace,
            TideTimelineCache *cache,
            gint64             begin_ns,
            gint64             end_ns,
            guint              n_columns)
{
  q->db = _tide_trace_get_db (trace);
  q->cache = cache != NULL && tide_trace_is_complete (trace) ? cache : NULL;
  q->begin_ns = begin_ns;
  q->end_ns = end_ns;
  q->n = n_columns;
  q->level = tide_timeline_data_pick_level ((end_ns - begin_ns) / n_columns);
  q->bucket_ns = (gint64) TIDE_LOD_BASE_NS << (2 * q->level);
  q->limit_ns = tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace);
}

/**
 * tide_timeline_data_query_lane:
 * @cache: (nullable): rows kept from earlier queries, as for
 *   tide_timeline_data_query_cached()
 * @process_id: a processes.id
 * @counter: any TideCounter, a host lane's or not
 *
 * One counter of one process over [begin_ns, end_ns) in @n_columns, as
 * tide_timeline_data_query() reads a lane.
 *
 * Returns: (transfer full) (nullable): the lane, or %NULL when the process
 *   has no such counter (with @error unset) or on error
 */
TideLaneData *
tide_timeline_data_query_lane (TideTrace         *trace,
                               TideTimelineCache *cache,
                               gint64             process_id,
                               gint               counter,
                               gint               device,
                               gint64             begin_ns,
                               gint64             end_ns,
                               guint              n_columns,
                               GError           **error)
{
  g_autoptr(GArray) process_ids = NULL;
  Query q;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  g_return_val_if_fail (n_columns > 0 && end_ns > begin_ns && process_id > 0, NULL);

  query_init (&q, trace, cache, begin_ns, end_ns, n_columns);
  if (q.cache != NULL)
    cache_bind (q.cache, trace);
  q.offset_ns = lod_origin (q.db) - tide_trace_get_start_ns (trace);
  if ((process_ids = load_process_ids (q.db, process_id, error)) == NULL)
    return NULL;
  return lane_query (&q, process_ids, counter, device, NULL, error);
}

/**
 * tide_timeline_data_query:
 * @process_id: a processes.id, or 0 for all processes summed
 * @begin_ns: (in): view start, from the trace start
 * @end_ns: view end (exclusive), greater than @begin_ns
 * @n_columns: pixel columns, at least 1
 *
 * Returns: (transfer full) (nullable): the lanes that have data
 */
TideTimelineData *
tide_timeline_data_query (TideTrace  *trace,
                          gint64      process_id,
                          gint64      begin_ns,
                          gint64      end_ns,
                          guint       n_columns,
                          GError    **error)
{
  return tide_timeline_data_query_cached (trace, NULL, process_id, begin_ns, end_ns, n_columns,
                                          error);
}

/**
 * tide_timeline_data_query_cached:
 * @cache: (nullable): rows kept from earlier queries; used only for a
 *   complete trace, whose summaries no longer change
 *
 * tide_timeline_data_query() that reads the LOD rows through @cache: the
 * same result, with no query for the rows already read.
 */
TideTimelineData *
tide_timeline_data_query_cached (TideTrace          *trace,
                                 TideTimelineCache  *cache,
                                 gint64              process_id,
                                 gint64              begin_ns,
                                 gint64              end_ns,
                                 guint               n_columns,
                                 GError            **error)
{
  g_autoptr(TideTimelineData) data = NULL;
  g_autoptr(GArray) process_ids = NULL;
  g_autoptr(GArray) specs = NULL;
  Query q;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  g_return_val_if_fail (n_columns > 0 && end_ns > begin_ns, NULL);

  query_init (&q, trace, cache, begin_ns, end_ns, n_columns);
  data = g_new0 (TideTimelineData, 1);
  data->begin_ns = begin_ns;
  data->end_ns = end_ns;
  data->n_columns = n_columns;
  data->level = q.level;
  data->bucket_ns = q.bucket_ns;
  data->lanes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_lane_data_free);

  if ((specs = query_lanes (&q, trace, process_id, &process_ids, error)) == NULL ||
      !add_lanes (&q, process_ids, specs, data, error) ||
      !add_rss_classes (&q, process_ids, data, error))
    return NULL;
  return g_steal_pointer (&data);
}

const TideLaneData *
tide_timeline_data_find_lane (const TideTimelineData *data,
                              gint                    counter,
                              gint                    device)
{
  for (guint i = 0; data != NULL && i < data->lanes->len; i++)
    {
      const TideLaneData *lane = g_ptr_array_index (data->lanes, i);
      if (lane->counter == counter && lane->device == device)
        return lane;
    }
  return NULL;
}

gboolean
tide_lane_data_value_at (const TideLaneData *lane,
                         guint               column,
                         gint64             *value)
{
  if (lane == NULL || column >= lane->n_columns || !lane->has[column])
    return FALSE;
  *value = lane->last[column];
  return TRUE;
}

/**
 * tide_timeline_data_rss_split:
 * @rss: the RSS lane's value at @column
 * @split: (out): the part of @rss in each class, adding up to @rss
 *
 * Splits the RSS at @column in the proportions of its classes there.  The
 * classes are read less often than the RSS, and from another file, so they
 * are scaled to the RSS that the lane draws: the stack fills the curve
 * exactly.  The allocator's free bytes are taken out of anon, never more
 * than it holds.
 *
 * Returns: whether the classes are known at @column
 */
gboolean
tide_timeline_data_rss_split (const TideTimelineData *data,
                              guint                   column,
                              gint64                  rss,
                              gint64                  split[TIDE_RSS_N_CLASSES])
{
  gint64 raw[TIDE_RSS_N_CLASSES] = { 0 };
  double total = 0, done = 0;
  gint64 given = 0;

  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    if (tide_lane_data_value_at (data->rss_classes[i], column, &raw[i]))
      raw[i] = MAX (raw[i], 0);
    else if (i != TIDE_RSS_CLASS_ALLOC_FREE)
      return FALSE;
  raw[TIDE_RSS_CLASS_ALLOC_FREE] = MIN (raw[TIDE_RSS_CLASS_ALLOC_FREE], raw[TIDE_RSS_CLASS_ANON]);
  raw[TIDE_RSS_CLASS_ANON] -= raw[TIDE_RSS_CLASS_ALLOC_FREE];
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    total += (double) raw[i];
  if (total <= 0 || rss <= 0)
    return FALSE;
  /* Cumulative rounding, so that the parts add up to @rss exactly. */
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    {
      gint64 upto;

      done += (double) raw[i];
      upto = (gint64) llround ((double) rss * (done / total));
      split[i] = upto - given;
      given = upto;
    }
  return TRUE;
}

/* ---- steps and transfers ------------------------------------------------- */

/* A step is a leak step when some leak suspect of its process has started
 * growing by then and the step kept bytes: the bands of the steps that
 * grow the leak stand out, the steps before it do not. */
static GHashTable *
load_growth_starts (TideTrace  *trace,
                    GError    **error)
{
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, error);
  GHashTable *starts;

  if (suspects == NULL)
    return NULL;
  starts = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < suspects->len; i++)
    {
      const TideGroup *g = g_ptr_array_index (suspects, i);
      gpointer old = g_hash_table_lookup (starts, &g->process_id);

      if (g->growth_step <= 0)
        continue;
      if (old == NULL || GPOINTER_TO_INT (old) > g->growth_step)
        g_hash_table_insert (starts, g_memdup2 (&g->process_id, sizeof (gint64)),
                             GINT_TO_POINTER (g->growth_step));
    }
  return starts;
}

/**
 * tide_timeline_steps:
 * @process_id: a processes.id, or 0 for every process
 *
 * Returns: (transfer full) (element-type TideStepSpan): steps ordered by start
 */
GArray *
tide_timeline_steps (TideTrace  *trace,
                     gint64      process_id,
                     GError    **error)
{
  g_autoptr(GArray) spans = g_array_new (FALSE, FALSE, sizeof (TideStepSpan));
  g_autoptr(GHashTable) starts = NULL;
  sqlite3 *db;
  sqlite3_stmt *stmt;
  gint64 t0;
  int rc;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  db = _tide_trace_get_db (trace);
  t0 = tide_trace_get_start_ns (trace);
  if ((starts = load_growth_starts (trace, error)) == NULL)
    return NULL;
  stmt = prepare (db,
                  "SELECT s.process_id, s.number, s.start_ns, s.end_ns,"
                  "  coalesce (st.retained_bytes, 0)"
                  " FROM steps s LEFT JOIN step_stats st ON st.step_id = s.id"
                  " WHERE ?1 = 0 OR s.process_id = ?1 ORDER BY s.start_ns, s.process_id", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideStepSpan span = {
        .process_id = sqlite3_column_int64 (stmt, 0),
        .number = sqlite3_column_int (stmt, 1),
        .start_ns = sqlite3_column_int64 (stmt, 2) - t0,
        .end_ns = sqlite3_column_int64 (stmt, 3) - t0,
        .retained_bytes = sqlite3_column_int64 (stmt, 4),
      };
      gint start = GPOINTER_TO_INT (g_hash_table_lookup (starts, &span.process_id));

      span.leak = start > 0 && span.number >= start && span.retained_bytes > 0;
      g_array_append_val (spans, span);
    }
  if (!finish (db, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&spans);
}

/* step_series holds a (stack, scope, device) value only in the steps where
 * it changed: each scope's value is carried forward and the group's value
 * is their sum. */
static void
series_apply (GHashTable   *last,
              sqlite3_stmt *stmt,
              gint64       *sum)
{
  gint64 scope = sqlite3_column_int64 (stmt, 2);
  gint64 value = sqlite3_column_int64 (stmt, 3);
  gpointer old = NULL;

  if (g_hash_table_lookup_extended (last, &scope, NULL, &old))
    *sum = tide_sat_sub (*sum, *(gint64 *) old);
  *sum = tide_sat_add (*sum, value);
  g_hash_table_insert (last, g_memdup2 (&scope, sizeof scope), g_memdup2 (&value, sizeof value));
}

/**
 * tide_timeline_group_series:
 * @stack_id: the group's stack, or 0 for a group by scope
 * @scope_id: with @stack_id 0, the group's scope (0: no scope)
 *
 * The live bytes of one tide_report_suspects() group at every step end of
 * @process_id, as step_series records them.
 *
 * Returns: (transfer full) (element-type TideSeriesPoint): by step number
 */
GArray *
tide_timeline_group_series (TideTrace  *trace,
                            gint64      process_id,
                            gint64      stack_id,
                            gint64      scope_id,
                            gint        device,
                            GError    **error)
{
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (TideSeriesPoint));
  g_autoptr(GHashTable) last = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  TideSeriesPoint point = { 0 };
  sqlite3_stmt *stmt;
  gint64 t0, sum = 0;
  int rc;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  t0 = tide_trace_get_start_ns (trace);
  stmt = prepare (_tide_trace_get_db (trace),
                  "SELECT s.number, s.end_ns, coalesce (ss.scope_id, 0), ss.live_bytes, s.start_ns"
                  " FROM steps s LEFT JOIN step_series ss ON ss.step_id = s.id"
                  "  AND ss.device = ?4 AND (CASE WHEN ?2 != 0 THEN ss.stack_id = ?2"
                  "   ELSE coalesce (ss.scope_id, 0) = ?3 END)"
                  " WHERE s.process_id = ?1 ORDER BY s.number", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int64 (stmt, 2, stack_id);
  sqlite3_bind_int64 (stmt, 3, scope_id);
  sqlite3_bind_int (stmt, 4, device);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint number = sqlite3_column_int (stmt, 0);
      TideSeriesPoint *previous = NULL;

      if (points->len > 0)
        previous = &g_array_index (points, TideSeriesPoint, points->len - 1);
      if (previous == NULL || previous->number != number)
        {
          point.number = number;
          point.end_ns = sqlite3_column_int64 (stmt, 1) - t0;
          point.start_ns = sqlite3_column_int64 (stmt, 4) - t0;
          g_array_append_val (points, point);
        }
      if (sqlite3_column_type (stmt, 3) != SQLITE_NULL)
        series_apply (last, stmt, &sum);
      g_array_index (points, TideSeriesPoint, points->len - 1).live_bytes = sum;
    }
  if (!finish (_tide_trace_get_db (trace), stmt, rc, error))
    return NULL;
  return g_steal_pointer (&points);
}

/**
 * tide_timeline_transfers:
 *
 * Returns: (transfer full) (element-type TideTransferMark): ordered by start
 */
GArray *
tide_timeline_transfers (TideTrace  *trace,
                         gint64      process_id,
                         GError    **error)
{
  g_autoptr(GArray) marks = g_array_new (FALSE, FALSE, sizeof (TideTransferMark));
  sqlite3 *db;
  sqlite3_stmt *stmt;
  gint64 t0;
  int rc;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  db = _tide_trace_get_db (trace);
  t0 = tide_trace_get_start_ns (trace);
  stmt = prepare (db,
                  "SELECT process_id, direction, device, bytes, start_ns, duration_ns"
                  " FROM transfers WHERE ?1 = 0 OR process_id = ?1 ORDER BY start_ns", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideTransferMark mark = {
        .process_id = sqlite3_column_int64 (stmt, 0),
        .direction = sqlite3_column_int (stmt, 1),
        .device = sqlite3_column_int (stmt, 2),
        .bytes = sqlite3_column_int64 (stmt, 3),
        .start_ns = sqlite3_column_int64 (stmt, 4) - t0,
        .duration_ns = sqlite3_column_int64 (stmt, 5),
      };
      g_array_append_val (marks, mark);
    }
  if (!finish (db, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&marks);
}
