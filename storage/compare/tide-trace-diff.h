/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Two runs of a job side by side, step by step: did the fix work?  One
 * process of each trace is compared (the one that --process names, else the
 * one the app opens on, and in AFTER the process of the same role and rank).
 * Built from the same report queries as `tidemark report`, so a diff never
 * disagrees with the reports of either trace.
 */
#pragma once

#include "tide-report.h"

G_BEGIN_DECLS

/* How the steps of the two runs were paired. */
typedef enum
{
  TIDE_DIFF_ALIGN_NUMBER,       /* step n with step n */
  TIDE_DIFF_ALIGN_LABEL,        /* every step of both runs is labelled: by label */
} TideDiffAlign;

/* One aligned step; either side is NULL where that run lacks it. */
typedef struct
{
  TideStepRow *before;          /* borrowed from TideTraceDiff.before_steps */
  TideStepRow *after;
} TideDiffStep;

typedef enum
{
  TIDE_SUSPECT_GONE,            /* a suspect in BEFORE only */
  TIDE_SUSPECT_NEW,             /* a suspect in AFTER only */
  TIDE_SUSPECT_CHANGED,         /* in both, its growth per step differs beyond noise */
  TIDE_SUSPECT_UNCHANGED,       /* in both, the same growth within sampling noise */
} TideSuspectChange;

/* How a suspect of one run was found in the other. */
typedef enum
{
  TIDE_MATCH_NONE,
  TIDE_MATCH_STACK,             /* the same frames: function, file and line */
  TIDE_MATCH_HEADLINE,          /* the same headline function and scope (another build) */
} TideMatchKind;

typedef struct
{
  TideSuspectChange change;
  TideMatchKind     match;
  TideGroup        *before;     /* borrowed; NULL for a new suspect */
  TideGroup        *after;      /* borrowed; NULL for a gone suspect */
} TideDiffSuspect;

/* The spans of one aligned step in each run, from each trace's start: what
 * the app needs to draw AFTER's lanes over BEFORE's, step on step. */
typedef struct
{
  gint64 before_start;
  gint64 before_end;
  gint64 after_start;
  gint64 after_end;
} TideStepPair;

/* A stack (by its headline and frames) or a scope, live at each trace's end. */
typedef struct
{
  char   *name;                 /* the headline, or the scope path */
  gint64  before_bytes;
  gint64  after_bytes;
  gint64  before_count;
  gint64  after_count;
  gboolean beyond_noise;        /* the bytes differ by more than sampling explains */
} TideDiffRetained;

typedef struct
{
  char          *before_path;
  char          *after_path;
  GPtrArray     *before_processes;  /* TideProcess*, owned */
  GPtrArray     *after_processes;
  TideProcess   *before_process;    /* borrowed from before_processes */
  TideProcess   *after_process;
  gboolean       same_program;  /* both processes run the same command */
  TideDiffAlign  align;
  TideGroupBy    by;
  gint64         before_sample_bytes;  /* 0: every allocation (--all) */
  gint64         after_sample_bytes;
  GPtrArray     *before_steps;  /* TideStepRow*, owned */
  GPtrArray     *after_steps;
  GPtrArray     *steps;         /* TideDiffStep*, in step order */
  GPtrArray     *before_suspects;  /* TideGroup*, owned */
  GPtrArray     *after_suspects;
  GPtrArray     *suspects;      /* TideDiffSuspect*: gone, new, changed, unchanged */
  GPtrArray     *retained;      /* TideDiffRetained*: those beyond noise first, each
                                 * part largest difference first */
} TideTraceDiff;

TideTraceDiff *tide_trace_diff_new  (TideTrace              *before,
                                     TideTrace              *after,
                                     const TideProcessSpec  *before_spec,
                                     const TideProcessSpec  *after_spec,
                                     TideGroupBy             by,
                                     GError                **error);
TideTraceDiff *tide_trace_diff_new_for_process (TideTrace     *before,
                                                gint64         process_id,
                                                TideTrace     *after,
                                                GError       **error);
void           tide_trace_diff_free (TideTraceDiff          *diff);

gint64   tide_trace_diff_noise       (const TideTraceDiff *diff,
                                      gint64               before_bytes,
                                      gint64               after_bytes);
gboolean tide_trace_diff_beyond_noise (const TideTraceDiff *diff,
                                       gint64               before_bytes,
                                       gint64               after_bytes);
guint    tide_trace_diff_count       (const TideTraceDiff *diff,
                                      TideSuspectChange    change);
guint    tide_trace_diff_count_differences (const TideTraceDiff *diff);
GArray  *tide_trace_diff_step_pairs  (const TideTraceDiff *diff);
GHashTable *tide_trace_diff_step_retained (const TideTraceDiff *diff,
                                           TideTrace           *after,
                                           gint                 before_step,
                                           GError             **error);
char    *tide_group_signature        (const TideGroup     *group);
gint64   tide_step_pairs_map         (const TideStepPair  *pairs,
                                      guint                n_pairs,
                                      gint64               t);
const char *tide_suspect_change_name (TideSuspectChange    change);
const char *tide_match_kind_name     (TideMatchKind        match);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideTraceDiff, tide_trace_diff_free)

G_END_DECLS
