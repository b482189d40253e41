/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Reading the counter_lod rows of one lane at one level, for the lane
 * query (tide-timeline-lanes.c): a primary-key range read, straight from
 * SQLite or through a least-recently-used cache of chunks.  The cache is
 * apart from the query because it outlives it: a view keeps one for its
 * trace, and each frame's query asks it first.
 */
#include "config.h"

#include "tide-lod-cache-private.h"

#include "tide-hash.h"
#include "tide-sorted.h"
#include "tide-sqlite.h"

#define WHAT "cannot query the timeline"

/* The LOD rows of one lane and level, kept in memory in chunks of
 * CHUNK_BUCKETS consecutive buckets: a view reads fewer than 4 buckets a
 * column, so a frame needs at most a few chunks, and panning or zooming
 * back over a read part costs no query.  Each chunk also keeps what lies
 * outside it (the value in force at its start, whether rows follow it), so
 * a view's edges need no query either. */
#define CHUNK_BUCKETS 2048

typedef struct
{
  TideLodLane lane;
  gint64      index;     /* first bucket / CHUNK_BUCKETS */
} ChunkKey;

typedef struct
{
  ChunkKey     key;
  guint        n;
  guint        allocated;
  gint64      *bucket;   /* sorted */
  gint64      *min;
  gint64      *max;
  gint64      *last;
  TideLodEdges edges;
  guint64      used;     /* LRU tick */
} Chunk;

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
  GArray     *lanes;       /* the lane query's lanes of lanes_process_id, or NULL */
  GArray     *process_ids; /* what lanes_process_id stands for */
};

/* The LOD rows of the lane that bind_lane() binds to ?1 to ?4. */
#define LANE_ROWS \
  "counter_lod WHERE process_id = ?1 AND counter = ?2 AND device = ?3 AND level = ?4"

/* ?1 to ?4 name the lane, ?5 and ?6 the buckets. */
static void
bind_lane (sqlite3_stmt       *stmt,
           const TideLodLane  *lane,
           gint64              lo,
           gint64              hi)
{
  sqlite3_bind_int64 (stmt, 1, lane->process_id);
  sqlite3_bind_int (stmt, 2, lane->counter);
  sqlite3_bind_int (stmt, 3, lane->device);
  sqlite3_bind_int (stmt, 4, lane->level);
  sqlite3_bind_int64 (stmt, 5, lo);
  sqlite3_bind_int64 (stmt, 6, hi);
}

/* The last value before buckets [lo, hi], and whether rows follow them. */
static gboolean
read_edges (sqlite3            *db,
            const TideLodLane  *lane,
            gint64              lo,
            gint64              hi,
            TideLodEdges       *edges,
            GError            **error)
{
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (db, "SELECT (SELECT last_value FROM " LANE_ROWS " AND bucket < ?5"
                                  "   ORDER BY bucket DESC LIMIT 1),"
                                  " EXISTS (SELECT 1 FROM " LANE_ROWS " AND bucket > ?6)",
                              WHAT, error);
  if (stmt == NULL)
    return FALSE;
  bind_lane (stmt, lane, lo, hi);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      edges->has_before = sqlite3_column_type (stmt, 0) != SQLITE_NULL;
      edges->before = sqlite3_column_int64 (stmt, 0);
      edges->has_after = sqlite3_column_int (stmt, 1) != 0;
    }
  return tide_sqlite_finish (db, stmt, rc, WHAT, error);
}

static gboolean
read_rows (sqlite3            *db,
           const TideLodLane  *lane,
           gint64              lo,
           gint64              hi,
           TideLodVisit        visit,
           gpointer            user_data,
           GError            **error)
{
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (db, "SELECT bucket, min_value, max_value, last_value FROM " LANE_ROWS
                                  " AND bucket BETWEEN ?5 AND ?6 ORDER BY bucket", WHAT, error);
  if (stmt == NULL)
    return FALSE;
  bind_lane (stmt, lane, lo, hi);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 v[3] = { sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
                      sqlite3_column_int64 (stmt, 3) };
      visit (sqlite3_column_int64 (stmt, 0), v, user_data);
    }
  return tide_sqlite_finish (db, stmt, rc, WHAT, error);
}

static guint
chunk_key_hash (gconstpointer p)
{
  const ChunkKey *k = p;

  guint64 h = tide_hash_mix (0, (guint64) k->lane.process_id);

  /* Unsigned: device is -1 for host lanes. */
  h = tide_hash_mix (h, (guint64) k->index);
  h = tide_hash_mix (h, ((guint64) (guint) k->lane.counter << 32) | (guint) k->lane.device);
  return (guint) tide_hash_mix (h, (guint64) (guint) k->lane.level);
}

static gboolean
chunk_key_equal (gconstpointer a,
                 gconstpointer b)
{
  const ChunkKey *x = a, *y = b;

  /* Field by field: the struct's padding is not initialised. */
  return x->lane.process_id == y->lane.process_id && x->index == y->index &&
         x->lane.counter == y->lane.counter && x->lane.device == y->lane.device &&
         x->lane.level == y->lane.level;
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
  g_clear_pointer (&cache->lanes, g_array_unref);
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

void
_tide_lod_cache_bind (TideTimelineCache *cache,
                      TideTrace         *trace)
{
  if (cache->trace == trace)
    return;
  cache_clear (cache);
  cache->trace = g_object_ref (trace);
}

gboolean
_tide_lod_cache_get_lanes (TideTimelineCache  *cache,
                           TideTrace          *trace,
                           gint64              process_id,
                           GArray            **lanes,
                           GArray            **process_ids,
                           gint64             *offset_ns)
{
  if (cache->trace != trace || cache->lanes == NULL || cache->lanes_process_id != process_id)
    return FALSE;
  *lanes = g_array_ref (cache->lanes);
  *process_ids = g_array_ref (cache->process_ids);
  *offset_ns = cache->offset_ns;
  return TRUE;
}

void
_tide_lod_cache_set_lanes (TideTimelineCache  *cache,
                           TideTrace          *trace,
                           gint64              process_id,
                           GArray             *lanes,
                           GArray             *process_ids,
                           gint64              offset_ns)
{
  _tide_lod_cache_bind (cache, trace);
  g_clear_pointer (&cache->lanes, g_array_unref);
  g_clear_pointer (&cache->process_ids, g_array_unref);
  cache->lanes = g_array_ref (lanes);
  cache->process_ids = g_array_ref (process_ids);
  cache->lanes_process_id = process_id;
  cache->offset_ns = offset_ns;
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
chunk_append (gint64        bucket,
              const gint64  v[3],
              gpointer      user_data)
{
  Chunk *chunk = user_data;

  if (chunk->n == chunk->allocated)
    {
      chunk->allocated = MAX (64, chunk->allocated * 2);
      chunk->bucket = g_renew (gint64, chunk->bucket, chunk->allocated);
      chunk->min = g_renew (gint64, chunk->min, chunk->allocated);
      chunk->max = g_renew (gint64, chunk->max, chunk->allocated);
      chunk->last = g_renew (gint64, chunk->last, chunk->allocated);
    }
  chunk->bucket[chunk->n] = bucket;
  chunk->min[chunk->n] = v[0];
  chunk->max[chunk->n] = v[1];
  chunk->last[chunk->n] = v[2];
  chunk->n++;
}

static Chunk *
chunk_read (TideTimelineCache  *cache,
            sqlite3            *db,
            const ChunkKey     *key,
            GError            **error)
{
  Chunk *chunk = g_new0 (Chunk, 1);
  gint64 lo = key->index * CHUNK_BUCKETS, hi = (key->index + 1) * CHUNK_BUCKETS - 1;

  chunk->key = *key;
  if (!read_edges (db, &key->lane, lo, hi, &chunk->edges, error) ||
      !read_rows (db, &key->lane, lo, hi, chunk_append, chunk, error))
    {
      chunk_free (chunk);
      return NULL;
    }
  cache->queries += 2;
  return chunk;
}

static const Chunk *
chunk_get (TideTimelineCache  *cache,
           sqlite3            *db,
           const TideLodLane  *lane,
           gint64              index,
           GError            **error)
{
  ChunkKey key = { *lane, index };
  Chunk *chunk = g_hash_table_lookup (cache->chunks, &key);

  if (chunk == NULL)
    {
      if ((chunk = chunk_read (cache, db, &key, error)) == NULL)
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
  return tide_sorted_count_below (chunk->bucket, chunk->n, sizeof (gint64), 0, bucket);
}

/* Buckets [lo, hi] of @lane, each handed to @visit, and their edges.
 * Without a cache, two primary-key range reads; with one, from the cached
 * chunks that hold those buckets. */
gboolean
_tide_lod_read (TideTimelineCache  *cache,
                sqlite3            *db,
                const TideLodLane  *lane,
                gint64              lo,
                gint64              hi,
                TideLodVisit        visit,
                gpointer            user_data,
                TideLodEdges       *edges,
                GError            **error)
{
  gint64 first = MAX (lo, 0) / CHUNK_BUCKETS, last = MAX (hi, 0) / CHUNK_BUCKETS;
  const Chunk *chunk;
  guint i;

  if (cache == NULL)
    return read_edges (db, lane, lo, hi, edges, error) &&
           read_rows (db, lane, lo, hi, visit, user_data, error);
  if ((chunk = chunk_get (cache, db, lane, first, error)) == NULL)
    return FALSE;
  i = chunk_search (chunk, lo);
  edges->has_before = i > 0 || chunk->edges.has_before;
  edges->before = i > 0 ? chunk->last[i - 1] : chunk->edges.before;
  for (gint64 index = first; index <= last; index++)
    {
      if (index > first && (chunk = chunk_get (cache, db, lane, index, error)) == NULL)
        return FALSE;
      for (i = index == first ? i : 0; i < chunk->n && chunk->bucket[i] <= hi; i++)
        {
          gint64 v[3] = { chunk->min[i], chunk->max[i], chunk->last[i] };
          visit (chunk->bucket[i], v, user_data);
        }
    }
  edges->has_after = i < chunk->n || chunk->edges.has_after;
  return TRUE;
}
