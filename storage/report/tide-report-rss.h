/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-report-rss.h: resident memory by class, in words: what a fork's
 * child copied on write and from which of its parent's blocks.
 */
#pragma once

#include "tide-processes.h"
#include "tide-report-format.h"

G_BEGIN_DECLS

/* One fork's child that copied pages of its parent. */
typedef struct
{
  TideProcessLabel process; /* the child */
  gint64  copied_bytes;   /* the last cow_bytes value, less cow_left_bytes: the
                           * pages the process copied itself */
  gint64  left_bytes;     /* the last cow_left_bytes value: pages it holds alone
                           * as it inherited them, its parent having written or
                           * freed its own; -1 where the recorder could not tell */
  gint64  source_stack_id;  /* the parent's stack whose blocks cover the most
                             * copied bytes; 0: none recorded */
  gint64  source_bytes;   /* copied bytes that its blocks cover */
  char   *source;         /* "file:line (function)" of its headline; NULL: none */
} TideCowRow;

void       tide_cow_row_free (TideCowRow *row);

/* Every process that copied on write, in process order; empty for a
 * trace without copy-on-write (or written before it was measured). */
GPtrArray *tide_report_cow   (TideTrace  *trace,
                              GError    **error);

/* "worker 1: +134.0 MiB copied on write from the parent's blocks allocated
 * at dataset.py:22 (MyDataset.__init__)" */
char      *tide_cow_row_describe (const TideCowRow *row);

/* What moved a process's memory in one step.  The base is its private
 * memory (USS) where smaps_rollup was read, else its RSS; the terms add up
 * to the base's change exactly, TIDE_RSS_UNEXPLAINED taking the rest. */
typedef enum
{
  TIDE_RSS_COW,           /* inherited pages copied on write */
  TIDE_RSS_HEAP,          /* resident bytes of recorded blocks, else their live bytes */
  TIDE_RSS_ALLOC_FREE,    /* what the allocator holds free */
  TIDE_RSS_FILE,
  TIDE_RSS_SHMEM,
  TIDE_RSS_SHARING,       /* pages that became shared with another process
                           * (negative: "newly shared"), or private again other
                           * than by copy-on-write ("no longer shared") */
  TIDE_RSS_PY_ARENA_FREE, /* what CPython's arenas hold that no object uses, on
                           * present pages */
  TIDE_RSS_THREAD_STACKS, /* resident pages of the threads' stacks */
  TIDE_RSS_LIB_DATA,      /* resident pages of the libraries' bss */
  TIDE_RSS_PRELOAD_OWN,   /* resident pages of the profiler's preload: its buffers
                           * and tables, which no hook sees */
  TIDE_RSS_PY_UNHOOKED,   /* CPython's objects made before the preload hooked its
                           * allocator, which no record holds */
  TIDE_RSS_INHERITED_FREED, /* blocks a fork's child inherited and freed (negative):
                             * their bytes went to its allocator's free memory,
                             * or left with their mapping */
  TIDE_RSS_UNEXPLAINED,
  TIDE_RSS_N_TERMS
} TideRssTerm;

typedef struct
{
  gboolean private_base;  /* the base is the USS, else the RSS */
  gboolean since_fork;    /* a fork's child's first step: the base is its USS */
  gboolean since_attach;  /* from the first reading of a process that ran before
                           * attach, not from nothing */
  gboolean attach_base;   /* ... which came at this step's end: nothing is
                           * explained (base_delta 0), attach_uss is the USS
                           * then */
  gint64   attach_uss;
  gint     first_step;    /* the first step it covers: its row's, or, after
                           * steps whose private memory was not read at their
                           * end, the first of those */
  gint     last_step;     /* its row's */
  gboolean pending;       /* the private memory was not read at this step's
                           * end: the explanation of step spanned_by covers it,
                           * and this one says nothing (all zero) */
  gint     spanned_by;    /* pending only: that step, or -1 when none came */
  gboolean to_exit_read;  /* a process's last steps, up to its last reading,
                           * taken as it exited: the span ends there */
  gint64   heap_after_steps; /* to_exit_read only: of TIDE_RSS_HEAP, the change
                              * after the last step's end, the program's
                              * teardown (main() returned, objects freed) */
  gint64   base_delta;
  gint64   rss_delta;
  gint64   terms[TIDE_RSS_N_TERMS];
  gint64   left_by_parent; /* of TIDE_RSS_SHARING, the pages a fork's child holds as
                            * it inherited them, its parent having written or
                            * freed its own */
  char    *sharing_cause; /* what moved TIDE_RSS_SHARING, when the processes it
                           * shares pages with by fork started or ended in the
                           * steps it covers: "DataLoader workers 0 and 1 exited",
                           * or a fork's child's parent wrote or freed its
                           * copies; NULL otherwise */
} TideRssExplanation;

/* Explains each row of tide_report_job_steps (rows by step, then
 * process): returns a TideRssExplanation per row, in the same order (the
 * array frees what they hold).  A
 * step whose private memory was not read at its end is pending, and the
 * next step of its process that was read explains them together: the
 * change over the steps it spans, never one step's share of it.  A
 * process's last steps that no step end read are explained up to its last
 * reading, which the recorder takes as it exits. */
GArray    *tide_rss_explain_steps (GPtrArray *rows);

/* "+96.00 MiB private: copy-on-write +90.00 MiB, heap +2.00 MiB, allocator
 * free +4.00 MiB; RSS +1.00 MiB", "+21.00 MiB private: no longer shared
 * +21.00 MiB (DataLoader workers 0 and 1 exited); RSS +4.00 KiB": the
 * terms that moved, largest first,
 * then the unexplained rest when there is any; "+80.00 MiB private over
 * steps 2-5: heap +80.00 MiB; RSS +80.00 MiB" for a span; for a pending
 * step, where its change is told. */
char      *tide_rss_explanation_describe (const TideRssExplanation *e);

/* The row whose base grew most beyond what its recorded blocks and the
 * pages no longer shared explain (by more than @threshold bytes, and by
 * more than a tenth of the base's change), or -1; a process's first step,
 * which holds its start, is not looked at. */
gint       tide_rss_find_largest_unexplained (GPtrArray *rows,
                                              GArray    *explanations,
                                              gint64     threshold);

/* A class of resident memory that grows by the suspects' rule (steady,
 * step over step; tide-report.c), in one process, and is still growing
 * over the last third of its steps: one that filled up while the job
 * warmed up and then stayed is not a suspect. */
typedef enum
{
  TIDE_CLASS_SUSPECT_COW,         /* copy-on-write of a fork's child */
  TIDE_CLASS_SUSPECT_ALLOC_FREE,  /* what the allocator holds free */
  TIDE_CLASS_SUSPECT_PY_ARENA_FREE, /* what CPython's arenas hold free: fragmentation */
} TideClassSuspectKind;

typedef struct
{
  TideClassSuspectKind kind;
  TideProcessLabel process;     /* whose memory it is */
  gint        growth_step;      /* of the steps that process is measured at */
  gint64      growth_bytes;
  double      bytes_per_step;
  gint64      end_bytes;        /* at the last step */
  char       *name;             /* "copy-on-write in DataLoader worker 0",
                                 * "glibc arenas keep 180.00 MiB free",
                                 * "Python's allocator keeps 36.00 MiB free
                                 * in its arenas" */
  const char *hint;             /* what to do about it */
} TideClassSuspect;

void       tide_class_suspect_free    (TideClassSuspect *suspect);
/* Fastest growth first; tide_rss_class_suspects() from the job's rows
 * (tide_report_job_steps()) where a caller has them already. */
GPtrArray *tide_report_class_suspects (TideTrace  *trace,
                                       GError    **error);
GPtrArray *tide_rss_class_suspects    (GPtrArray  *rows);
/* "glibc arenas keep 32.00 MiB free, +8.00 MiB/step since step 2, in
 * leaky (pid 42)" */
char      *tide_class_suspect_describe (const TideClassSuspect *suspect);
/* The class's name in CSV and JSON: "cow", "alloc_free" (the stems of the
 * steps report's columns), "py_arena_free" (of the RSS report's). */
const char *tide_class_suspect_class   (const TideClassSuspect *suspect);
/* Narrows to the processes of tide_report_process_ids(). */
void       tide_report_keep_class_suspects (GPtrArray  *suspects,
                                            GHashTable *ids);

/* `report --rss`: a line per step and process in text; the terms as
 * columns in CSV and JSON. */
void       tide_format_rss (GString    *out,
                            GPtrArray  *rows,
                            TideFormat  format);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideCowRow, tide_cow_row_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideClassSuspect, tide_class_suspect_free)

G_END_DECLS
