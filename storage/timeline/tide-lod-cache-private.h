/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * How the lane query (tide-timeline-lanes.c) reads the LOD rows of one
 * lane at one level: straight from SQLite, or through a TideTimelineCache.
 * Either way it is handed the rows of a bucket range in order, and what
 * lies outside the range.
 */
#pragma once

#include <sqlite3.h>

#include "tide-lod-cache.h"
#include "tide-trace.h"

G_BEGIN_DECLS

/* One process's counter on one device (-1: host) at one LOD level. */
typedef struct
{
  gint64 process_id;
  gint   counter;
  gint   device;
  gint   level;
} TideLodLane;

/* What lies around the buckets read: the last value before them, and
 * whether rows follow them. */
typedef struct
{
  gboolean has_before;
  gint64   before;
  gboolean has_after;
} TideLodEdges;

/* Called for each LOD row in bucket order: min, max and last value. */
typedef void (*TideLodVisit) (gint64        bucket,
                              const gint64  v[3],
                              gpointer      user_data);

/* Through @cache when there is one (nullable), else straight from @db. */
gboolean _tide_lod_read        (TideTimelineCache  *cache,
                                sqlite3            *db,
                                const TideLodLane  *lane,
                                gint64              lo,
                                gint64              hi,
                                TideLodVisit        visit,
                                gpointer            user_data,
                                TideLodEdges       *edges,
                                GError            **error);

/* The chunks are another trace's once @trace is not the cache's own. */
void     _tide_lod_cache_bind  (TideTimelineCache  *cache,
                                TideTrace          *trace);
/* The lanes found for @process_id (0: all processes) of @trace, the
 * process ids they sum and the LOD origin, when the cache holds them. */
gboolean _tide_lod_cache_get_lanes (TideTimelineCache  *cache,
                                    TideTrace          *trace,
                                    gint64              process_id,
                                    GArray            **lanes,
                                    GArray            **process_ids,
                                    gint64             *offset_ns);
void     _tide_lod_cache_set_lanes (TideTimelineCache  *cache,
                                    TideTrace          *trace,
                                    gint64              process_id,
                                    GArray             *lanes,
                                    GArray             *process_ids,
                                    gint64              offset_ns);

G_END_DECLS
