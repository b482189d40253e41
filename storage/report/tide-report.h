/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The queries behind `tidemark report` and the app's tables.  They live here,
 * once, so that the command line and the GUI always agree.
 */
#pragma once

#include "tide-frame.h"
#include "tide-processes.h"
#include "tide-trace.h"

G_BEGIN_DECLS

typedef enum
{
  TIDE_GROUP_BY_STACK,
  TIDE_GROUP_BY_SCOPE,
} TideGroupBy;

#define TIDE_REPORT_MAX_DEVICES 64

/* The RSS classes of a step row (tide-report-rss.c), each the last value
 * sampled by the step's start and end; -1 where none was. */
typedef enum
{
  TIDE_STEP_PSS,
  TIDE_STEP_USS,
  TIDE_STEP_ANON,
  TIDE_STEP_FILE,
  TIDE_STEP_SHMEM,
  TIDE_STEP_ALLOC_FREE,
  TIDE_STEP_COW,
  TIDE_STEP_SHARED,             /* pages another process maps too */
  TIDE_STEP_JEMALLOC_FREE,      /* the part of ALLOC_FREE that jemalloc holds */
  TIDE_STEP_TCMALLOC_FREE,      /* the part of ALLOC_FREE that tcmalloc holds */
  TIDE_STEP_MAPPED,
  TIDE_STEP_PY_ARENA_FREE,      /* what CPython's arenas hold that no object uses */
  TIDE_STEP_THREAD_STACKS,      /* resident pages of the threads' stacks */
  TIDE_STEP_LIB_DATA,           /* resident pages of the libraries' bss */
  TIDE_STEP_COW_LEFT,           /* what COW counted as copies that a fork's child
                                 * holds as it inherited them, its parent having
                                 * written or freed its own: no longer shared */
  TIDE_STEP_PRELOAD_OWN,        /* resident pages of the preload's own mappings */
  TIDE_STEP_PY_ARENA_ABSENT,    /* bytes of CPython's arenas on pages not present */
  TIDE_STEP_ALLOC_FREE_ABSENT,  /* bytes of glibc's heaps on pages not present */
  TIDE_STEP_PY_UNHOOKED,        /* pymalloc's bytes in use when the hooks were set */
  TIDE_STEP_INHERITED_FREED,    /* a fork's child's frees of its parent's blocks */
  TIDE_STEP_N_CLASSES
} TideStepClass;

/* One device's recorded allocations at a step end. */
typedef struct
{
  gint     device;              /* CUDA index */
  gint64   end_bytes;           /* live recorded device bytes at the step end */
  gint64   delta_bytes;         /* change since the previous step (or the start) */
} TideStepDevice;

typedef struct
{
  TideProcessLabel process;     /* whose row this is */
  gint64   steps_pid;           /* whose step this is: pid, or the process
                                 * whose steps it borrows (tide_report_job_steps) */
  gboolean borrowed;            /* no steps of its own: only RSS and heap are known */
  gint     number;
  char    *label;
  gint64   start_ns;            /* from the trace start */
  gint64   duration_ns;
  gboolean has_rss;
  gint64   rss_end;
  gint64   rss_delta;
  gint64   heap_end;            /* estimated live malloc bytes */
  gint64   heap_delta;
  gint64   mapped_end;
  gint64   device_end;
  gint64   device_delta;
  gint64   retained_bytes;      /* allocated in the step, live at its end */
  gint64   retained_count;
  gboolean has_resident;
  gint64   resident_explained;  /* resident bytes of recorded live blocks */
  gint64   unattributed;        /* rss_end - resident_explained */
  gint64   h2d_bytes;           /* host->device copies started in the step */
  gint64   d2h_bytes;           /* device->host copies started in the step */
  GArray  *devices;             /* TideStepDevice, one per device of the trace,
                                 * by device; empty without device memory */
  gboolean has_classes;         /* class_end and class_start were looked up */
  gint64   class_end[TIDE_STEP_N_CLASSES];    /* TideStepClass, -1: not sampled */
  gint64   class_start[TIDE_STEP_N_CLASSES];
  gint64   class_first[TIDE_STEP_N_CLASSES];  /* the process's first sampled value,
                                               * -1: none */
  guint32  class_read_at_end;   /* 1 << TideStepClass: read at the step's end
                                 * itself, not carried over from an earlier one */
  gboolean from_attach;         /* the first step of a process that ran before
                                 * attach: class_start holds its first reading,
                                 * where one came before the step's end, and its
                                 * memory before it is not explained */
  gboolean private_later;       /* the private memory (USS) was read after the
                                 * step's end */
  gboolean exit_read;           /* on a process's last step only: its private
                                 * memory was read last after the step's start
                                 * (as it exited: after the step's end, or within
                                 * the step where it ended first) (class_exit) */
  gint64   exit_read_ns;        /* when that reading was taken, in trace time */
  gint64   class_exit[TIDE_STEP_N_CLASSES];   /* the classes at that reading */
  gint64   heap_exit;           /* the recorded blocks' live bytes then, -1: unknown */
  GPtrArray *kin_started;       /* char *: its parent and children that started
                                 * during the step ("DataLoader worker 0",
                                 * "python3 (pid 42)"); tide_report_job_steps only */
  GPtrArray *kin_ended;         /* char *: those that ended during it */
  GPtrArray *kin_ended_after;   /* char *: on a process's last step only, those that
                                 * ended after it, before the process did */
} TideStepRow;

/* Whether @r's class @c was read at the step's end itself, not carried
 * over from an earlier reading: for the USS, whether the step's private
 * memory was read. */
static inline gboolean
tide_step_row_read_at_end (const TideStepRow *r,
                           TideStepClass      c)
{
  return (r->class_read_at_end & (1u << c)) != 0;
}

/* What one scope holds of a stack group (tide-report-scopes.c). */
typedef struct
{
  gint64  scope_id;             /* 0: no scope */
  char   *path;                 /* NULL: no scope */
  gint64  bytes;                /* suspects: live at the last step; retained: retained */
  gint64  growth_bytes;         /* suspects: growth over the group's growth window */
  double  bytes_per_step;       /* suspects: growth_bytes per step of that window */
} TideScopeShare;

typedef struct
{
  TideProcessLabel process;     /* whose blocks these are */
  gint64     stack_id;          /* 0 when grouped by scope */
  gint64     scope_id;          /* 0: no scope; by stack: the scope holding most of its bytes */
  char      *scope_path;        /* NULL: no scope */
  gint       device;            /* -1 host */
  gint64     bytes;
  gint64     count;
  gint64     resident_bytes;    /* -1 when not measured */
  gint       growth_step;       /* step in which growth began, 0 if none */
  gint64     growth_bytes;      /* net growth since then */
  double     bytes_per_step;
  GPtrArray *frames;            /* TideFrame*, innermost first */
  GArray    *scopes;            /* by stack: TideScopeShare, most growth (or bytes)
                                 * first; NULL when grouped by scope */
} TideGroup;

/* One process of the job, for `report --processes`. */
typedef struct
{
  TideProcess *process;
  gint64       parent_pid;        /* 0: none recorded */
  guint        n_steps;           /* steps of its own */
  gboolean     has_rss;
  gint64       peak_rss;          /* the most it held resident at once: its high-water
                                   * mark (VmHWM), or its largest RSS sample */
  gint64       peak_rss_read;     /* its largest RSS sample: below peak_rss where it
                                   * peaked between two readings */
  gint64       rss_growth;        /* RSS at its last step's end (its last sample,
                                   * without steps) less its first sample */
  guint        n_suspects;        /* leak suspects by stack */
  gint         end_step;          /* the step (its own or its steps source's) it
                                   * ended in; 0: none, or it did not die */
  gint64       job_bytes_at_end;  /* killed: the job's memory at its death, -1 unknown */
  gboolean     job_bytes_by_pss;  /* ... as PSS summed (else RSS summed) */
  GPtrArray   *device_ooms;       /* its TideDeviceOom (tide-device-oom.h), fatal first */
} TideProcessSummary;

/* The job's memory at its peak (tide_report_job_peak()). */
typedef struct
{
  gboolean known;     /* FALSE: no process has a reading */
  gboolean by_pss;    /* PSS summed; else RSS summed */
  gint64   bytes;
  gint64   ts_ns;     /* when it was reached */
  gint     step;      /* the step then under way, or -1 */
  gint64   rise_bytes; /* by PSS: how much the RSS summed of the processes alive
                        * at the peak's reading rose above its value then, later,
                        * where by more than a 32nd of the peak (and
                        * TIDE_JOB_RISE_MIN); of their anonymous memory where
                        * they shared more than a 16th of their RSS; else 0 */
  gboolean rise_anon;  /* rise_bytes is of their anonymous memory */
  gint64   rise_ns;   /* when their RSS summed was highest after that reading */
  gint     rise_step; /* the step then under way, or -1 */
} TideJobPeak;

#define TIDE_JOB_RISE_MIN (G_GINT64_CONSTANT (1) << 20)

gboolean   tide_report_job_by_pss (TideTrace    *trace,
                                   gboolean     *by_pss,
                                   GError      **error);
gboolean   tide_report_job_peak   (TideTrace    *trace,
                                   TideJobPeak  *peak,
                                   GError      **error);
char      *tide_job_peak_describe (const TideJobPeak *peak);
char      *tide_job_peak_describe_rise (const TideJobPeak *peak);

/* A device's peak (tide_report_device_peaks()). */
typedef struct
{
  gint     device;
  gint64   bytes;     /* recorded blocks held at once, summed over processes */
  gint64   ts_ns;
} TideDevicePeak;

GArray    *tide_report_device_peaks (TideTrace  *trace,
                                     GError    **error);

void       tide_step_row_free     (TideStepRow *row);
char      *tide_step_row_describe (const TideStepRow *row);
void       tide_process_summary_free (TideProcessSummary *summary);
char      *tide_process_summary_describe_death (const TideProcessSummary *summary);
char      *tide_process_summary_describe_unread_peak (const TideProcessSummary *summary);
void       tide_group_free        (TideGroup   *group);

GPtrArray *tide_report_steps      (TideTrace   *trace,
                                   GError     **error);
GPtrArray *tide_report_job_steps  (TideTrace   *trace,
                                   GError     **error);
GPtrArray *tide_report_processes  (TideTrace   *trace,
                                   GError     **error);
GHashTable *tide_report_process_ids (TideTrace              *trace,
                                     const TideProcessSpec  *spec,
                                     GError                **error);
void       tide_report_keep_steps     (GPtrArray  *rows,
                                       GHashTable *ids);
void       tide_report_keep_groups    (GPtrArray  *groups,
                                       GHashTable *ids);
void       tide_report_keep_summaries (GPtrArray  *summaries,
                                       GHashTable *ids);
gint64     tide_report_pick_process   (TideTrace              *trace,
                                       const TideProcessSpec  *spec,
                                       GError                **error);
GPtrArray *tide_report_suspects   (TideTrace   *trace,
                                   TideGroupBy  by,
                                   GError     **error);
GPtrArray *tide_report_retained   (TideTrace   *trace,
                                   gint         step,
                                   TideGroupBy  by,
                                   GError     **error);
char      *tide_report_describe_attach (TideTrace *trace);
char      *tide_report_describe_rss_reads (TideTrace *trace);
GPtrArray *tide_report_frames     (TideTrace   *trace,
                                   gint64       stack_id,
                                   GError     **error);
const TideFrame *tide_group_get_headline (const TideGroup *group);
char      *tide_group_describe_headline    (const TideGroup *group);
char      *tide_group_describe_headline_via (const TideGroup *group);

G_END_DECLS
