/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What the timeline draws of each counter, as columnar arrays: one
 * min/max/last triple per pixel column and lane, read from the counter_lod
 * summaries so that the cost follows the pixels, not the samples.  Times
 * are nanoseconds from the trace start.
 */
#pragma once

#include "tide-lod-cache.h"
#include "tide-trace.h"

G_BEGIN_DECLS

/* The window a view shows: the times it spans and the pixel columns it
 * draws them in.  Every query of the timeline reads one, and what it
 * returns says which it was read for. */
typedef struct
{
  gint64   begin_ns;     /* from the trace start */
  gint64   end_ns;       /* exclusive, greater than begin_ns */
  guint    n_columns;    /* at least 1 */
} TideTimeWindow;

typedef struct
{
  gint     counter;      /* TideCounter, or a device counter id */
  gint     device;       /* -1: host */
  char    *name;         /* "Host RSS", "cuda:0 used" */
  guint    n_columns;
  gint64  *min;          /* per column; valid where has[i] */
  gint64  *max;
  gint64  *last;
  guint8  *has;
  gboolean has_before;   /* a value is known left of the first column */
  gint64   before;       /* ... and this is it */
  gint64   peak;         /* max over the visible columns (and before) */
} TideLaneData;

/* The classes of the RSS lane, bottom up as the lane stacks them. */
typedef enum
{
  TIDE_RSS_CLASS_FILE,
  TIDE_RSS_CLASS_SHMEM,
  TIDE_RSS_CLASS_ANON,        /* anonymous memory, allocator's free bytes included */
  TIDE_RSS_CLASS_ALLOC_FREE,  /* the part of anon that the allocator holds free */
  TIDE_RSS_N_CLASSES
} TideRssClass;

typedef struct
{
  TideTimeWindow window;     /* the window it was read for */
  gint           level;      /* LOD level read */
  gint64         bucket_ns;  /* its bucket width */
  GPtrArray     *lanes;      /* TideLaneData*: host lanes, then device lanes */
  TideLaneData  *rss_classes[TIDE_RSS_N_CLASSES]; /* nullable each; none in older traces */
} TideTimelineData;

gboolean          tide_time_window_is_valid    (const TideTimeWindow *window);
double            tide_time_window_column      (const TideTimeWindow *window,
                                                gint64                t);

void              tide_timeline_data_free      (TideTimelineData *data);
TideTimelineData *tide_timeline_data_query     (TideTrace            *trace,
                                                gint64                process_id,
                                                const TideTimeWindow *window,
                                                GError              **error);
TideTimelineData *tide_timeline_data_query_cached (TideTrace            *trace,
                                                   TideTimelineCache    *cache,
                                                   gint64                process_id,
                                                   const TideTimeWindow *window,
                                                   GError              **error);
TideLaneData     *tide_timeline_data_query_lane (TideTrace            *trace,
                                                TideTimelineCache    *cache,
                                                gint64                process_id,
                                                gint                  counter,
                                                gint                  device,
                                                const TideTimeWindow *window,
                                                GError              **error);
TideLaneData     *tide_lane_data_new           (gint             counter,
                                                gint             device,
                                                const char      *name,
                                                guint            n_columns);
void              tide_lane_data_free          (TideLaneData    *lane);
void              tide_lane_data_set_peak      (TideLaneData    *lane);
gint              tide_timeline_data_pick_level (gint64           column_ns);
const TideLaneData *tide_timeline_data_find_lane (const TideTimelineData *data,
                                                  gint                    counter,
                                                  gint                    device);
gboolean          tide_lane_data_value_at      (const TideLaneData *lane,
                                                guint               column,
                                                gint64             *value);
gboolean          tide_timeline_data_rss_split (const TideTimelineData *data,
                                                guint                   column,
                                                gint64                  rss,
                                                gint64                  split[TIDE_RSS_N_CLASSES]);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideTimelineData, tide_timeline_data_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideLaneData, tide_lane_data_free)

G_END_DECLS
