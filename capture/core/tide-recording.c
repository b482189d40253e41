/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One recording, whichever front end feeds it (tide-recording.h):
 * the trace, the processes, the polls of the counters that no event
 * carries, and the end of the trace.
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <gio/gio.h>

#include "tide-recording-private.h"

#include "tide-capture-process-private.h"
#include "tide-format-bytes.h"
#include "tide-host-identity.h"
#include "tide-report.h"
#include "tide-wire.h"

/* smaps_rollup walks every resident page of a process under its memory
 * lock, milliseconds on a PyTorch process: it is read at most twice a
 * second, and at the step ends of a recording whose steps wait for it.
 * Its cost grows with the mappings (and a fork's child's copy-on-write
 * count with them): its walks may take 1% of the recorder's core, so a
 * snapshot that took 10 ms waits a second for the next
 * (bench/bench-rss-classes). */
#define ROLLUP_POLL_NS (500 * G_GINT64_CONSTANT (1000000))
#define ROLLUP_COST_FACTOR 100
/* While the job steps, a snapshot that is due waits for the next step end,
 * so that a step's private memory is read at its end, as its heap is, and
 * the report compares the two over the same steps; past this the poll
 * takes it (long steps, a job that stopped stepping). */
#define ROLLUP_STEP_WAIT_NS (1000 * G_GINT64_CONSTANT (1000000))
/* A job whose RSS grew by an eighth (and at least 4 MiB) since the last
 * snapshot gets one sooner, as soon as the last one's cost allows: a job
 * that grows fast and dies within a second (an OOM kill) would otherwise
 * show the PSS of its first step as its footprint. */
#define ROLLUP_GROWTH_SHIFT 3
#define ROLLUP_GROWTH_MIN   (G_GUINT64_CONSTANT (4) << 20)
/* A step does not wait for the recorder (without --sync-steps): a marker
 * read this long after the step ended finds the process well into its next
 * step, and a reading then is not the step end's.  It is left out, and the
 * report explains the step with the next one that was read.  Where a
 * reading is due, the recorder asks each process that marks steps to wait
 * at its next step end (tide_capture_process_ask_step_wait()), at most
 * TIDE_WIRE_STEP_WAIT_MS (its first step ends, which the recorder meets
 * behind its start-up, TIDE_WIRE_FIRST_STEP_WAIT_MS), and that step end's
 * reading has as long as its marker says it waits: a step shorter than
 * the reading (a DDP rank's) would otherwise end before any of its ends
 * was read. */
#define STEP_READ_FRESH_NS (20 * G_GINT64_CONSTANT (1000000))
/* How long a snapshot waits for the figures of the processes that mark
 * no steps (tide_capture_process_await_figures()), all of them together:
 * a flusher answers within a scheduling delay, and a process whose step
 * end the snapshot is may wait meanwhile.  With --sync-steps the steps
 * wait for the recorder anyway, and a loaded machine delays a flusher
 * more. */
#define FIGURES_WAIT_NS      (50 * G_GINT64_CONSTANT (1000000))
#define FIGURES_SYNC_WAIT_NS (1000 * G_GINT64_CONSTANT (1000000))
/* How many of a process's first step ends are read whatever is due, until
 * one reading stands for its step end. */
#define STEP_ROLLUP_TRIES 3

static gint64
thread_cpu_ns (void)
{
  struct timespec ts;

  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

gint64
tide_capture_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* The command line of @pid, its arguments joined by spaces, or NULL. */
char *
tide_capture_read_cmdline (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/cmdline", pid);
  g_autofree char *contents = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, NULL) || len == 0)
    return NULL;
  for (gsize i = 0; i + 1 < len; i++)
    if (contents[i] == '\0')
      contents[i] = ' ';
  return g_strndup (contents, len);
}

/* "@what: the error's text", as a GIOError; returns FALSE. */
gboolean
tide_capture_set_errno_error (GError     **error,
                              int          err,
                              const char  *what)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (err), "%s: %s", what, g_strerror (err));
  return FALSE;
}

/* Closes *@fd unless it is -1 already, and makes it -1. */
void
tide_capture_close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* Never leave a half-written trace behind a recording that failed. */
void
tide_capture_remove_trace (const char *output)
{
  static const char *suffixes[] = { "", "-wal", "-shm" };

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *name = g_strconcat (output, suffixes[i], NULL);
      unlink (name);
    }
}

TideRecording *
tide_recording_new (const char  *output,
                    const char  *symbol_cache_dir,
                    GError     **error)
{
  TideRecording *self;
  TideTraceWriter *writer = tide_trace_writer_new (output, error);

  if (writer == NULL)
    return NULL;
  self = g_new0 (TideRecording, 1);
  self->writer = writer;
  self->stacks = tide_stack_table_new (writer, symbol_cache_dir);
  self->processes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_capture_process_free);
  self->next_process_id = 1;
  self->next_thread_id = 1;
  self->next_scope_id = 1;
  self->next_step_id = 1;
  self->start_ns = tide_capture_now_ns ();
  self->oom = tide_oom_watch_new (NULL, NULL);
  self->anon_splitter = tide_anon_splitter_new ();
  return self;
}

void
tide_recording_free (TideRecording *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->processes, g_ptr_array_unref);
  g_clear_pointer (&self->stacks, tide_stack_table_free);
  g_clear_pointer (&self->nvml, tide_nvml_free);
  g_clear_pointer (&self->oom, tide_oom_watch_free);
  g_clear_pointer (&self->anon_splitter, tide_anon_splitter_free);
  g_clear_pointer (&self->writer, tide_trace_writer_free);
  g_free (self);
}

/* With @sync_steps, every step end reads the whole job's RSS classes and
 * the step waits for it (record --sync-steps). */
void
tide_recording_set_sync_steps (TideRecording *self,
                               gboolean       sync_steps)
{
  g_return_if_fail (self != NULL);

  self->sync_steps = sync_steps;
}

/* How the driver takes in, before a snapshot, the processes that started
 * by its time and that it has not met yet (`record`: fork's children
 * whose connection waits); attach has no such thing. */
void
tide_recording_set_admit_func (TideRecording          *self,
                               TideRecordingAdmitFunc  func,
                               gpointer                data)
{
  g_return_if_fail (self != NULL);

  self->admit = func;
  self->admit_data = data;
}

/* A driver that takes a while to set up before its target is watched
 * (attach loads its eBPF programs) starts the trace's clock there. */
void
tide_recording_set_start_ns (TideRecording *self,
                             gint64         start_ns)
{
  g_return_if_fail (self != NULL);

  self->start_ns = start_ns;
}

/* What every trace says of how it was made. */
void
tide_recording_write_run_meta (TideRecording *self,
                               const char    *mode,
                               const char    *command,
                               gint64         sample_bytes,
                               gboolean       all_mode)
{
  tide_trace_writer_set_meta (self->writer, "tidemark_version", PACKAGE_VERSION);
  tide_trace_writer_set_meta (self->writer, "mode", mode);
  tide_trace_writer_set_meta (self->writer, "command", command ? command : "");
  tide_host_identity_write (self->writer);
  tide_trace_writer_set_meta_int (self->writer, "start_ns", self->start_ns);
  tide_trace_writer_set_meta_int (self->writer, "sample_bytes", sample_bytes);
  tide_trace_writer_set_meta_int (self->writer, "all_mode", all_mode);
}

/* What only a driver knows of the run (its target's exit status, what its
 * probes counted), as an integer of the trace's meta. */
void
tide_recording_write_meta_int (TideRecording *self,
                               const char    *key,
                               gint64         value)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (key != NULL);

  tide_trace_writer_set_meta_int (self->writer, key, value);
}

/* The memory limit the job runs under: the tightest that any of its
 * processes started under, its memory cgroup's or the machine's memory.
 * A job that a wrapper moves into a cgroup (`sh -c 'echo $$ > ...; exec
 * train'`) gets the cgroup's at the exec.  The job lane draws it. */
void
_tide_recording_write_memory_limit (TideRecording *self,
                                    pid_t          pid)
{
  TideOomScope scope = TIDE_OOM_NONE;
  gint64 limit = tide_oom_watch_read_limit (self->oom, pid, &scope);

  if (limit <= 0 || (self->memory_limit > 0 && limit >= self->memory_limit))
    return;
  self->memory_limit = limit;
  tide_trace_writer_set_meta_int (self->writer, "memory_limit", limit);
  tide_trace_writer_set_meta (self->writer, "memory_limit_kind", tide_oom_scope_name (scope));
}

/* NVML can take a while to start: a driver opens it once its target runs. */
void
tide_recording_open_nvml (TideRecording *self)
{
  if (self->nvml == NULL)
    self->nvml = tide_nvml_open ();
}

/* The newest image of @pid, or NULL. */
TideCaptureProcess *
tide_recording_find_process (TideRecording *self,
                             pid_t          pid)
{
  for (guint i = self->processes->len; i-- > 0;)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      if (p->pid == pid)
        return p;
    }
  return NULL;
}

/* Every process image seen, ended ones too. */
guint
tide_recording_get_n_processes (TideRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->processes->len;
}

gint64
tide_recording_get_total_steps (TideRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->total_steps;
}

/* The events that never reached the recording, of every process. */
gint64
tide_recording_get_total_dropped (TideRecording *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->total_dropped;
}

/* For a driver that counts its dropped events in one place rather than
 * per process (attach's ring buffer); the trace's meta says it at the end. */
void
tide_recording_set_total_dropped (TideRecording *self,
                                  gint64         dropped)
{
  g_return_if_fail (self != NULL);

  self->total_dropped = dropped;
}

/* When a reading of a step end that ended at @ts_ns must be done by to
 * stand for it: with --sync-steps the step waits for the recorder. */
static gint64
step_deadline (TideRecording      *self,
               TideCaptureProcess *stepping,
               gint64              ts_ns)
{
  if (self->sync_steps)
    return G_MAXINT64;
  return ts_ns + (stepping->step_end_wait_ns > 0 ? stepping->step_end_wait_ns : STEP_READ_FRESH_NS);
}

/* Whether the job outgrew its last snapshot (ROLLUP_GROWTH_SHIFT) and
 * that snapshot's cost allows another at @now. */
static gboolean
snapshot_outgrown (TideRecording *self,
                   gint64         now)
{
  guint64 grown = MAX (self->snapshot_job_rss >> ROLLUP_GROWTH_SHIFT, ROLLUP_GROWTH_MIN);

  return self->job_rss > self->snapshot_job_rss + grown &&
         now >= self->snapshot_ns + self->snapshot_cost_ns * ROLLUP_COST_FACTOR;
}

/* A fork's child whose connection the driver has not taken in yet, a
 * DataLoader worker forked just before this step end, would be missing
 * from the snapshot: the driver meets its first message after the
 * stepping process's, which it was in the middle of (a busy or stalled
 * recorder meets both at once).  Its first span would then run to the
 * next snapshot.  Never within itself: what it takes in may end a step. */
static void
admit_new_processes (TideRecording *self,
                     gint64         ts_ns)
{
  if (self->admit == NULL || self->admitting)
    return;
  self->admitting = TRUE;
  self->admit (ts_ns, self->admit_data);
  self->admitting = FALSE;
}

/* Reads the RSS by class of every live process at once, so that their PSS
 * add up to the job's footprint at one moment: PSS counts a page that
 * processes share once over them all.  @stepping (or NULL) is a process at
 * its step end, whose every value is written at @ts_ns. */
static void
snapshot_classes (TideRecording      *self,
                  gint64              ts_ns,
                  TideCaptureProcess *stepping)
{
  guint64 job_pss = 0;
  gint64 cpu_ns = thread_cpu_ns ();
  gint64 figures_deadline = tide_capture_now_ns () +
                            (self->sync_steps ? FIGURES_SYNC_WAIT_NS : FIGURES_WAIT_NS);

  admit_new_processes (self, ts_ns);
  /* Asked before any is read: their answers come while the others are. */
  for (guint i = 0; i < self->processes->len; i++)
    tide_capture_process_request_figures (g_ptr_array_index (self->processes, i), ts_ns);
  /* The stepping process first: its reading must be done while the step
   * end still holds (step_deadline). */
  if (stepping != NULL &&
      tide_capture_process_sample_classes_by (stepping, ts_ns,
                                              step_deadline (self, stepping, ts_ns), TRUE, TRUE))
    job_pss += MAX (stepping->last_classes[0], 0);
  /* At a step end every reading is written, changed or not: the report
   * explains each process's change over the steps between two readings,
   * and one that found its values unchanged is a reading all the same.
   * The ones asked for their figures are read once those came: with
   * --sync-steps, while the stepping process still waits, so that the
   * workers it sets going next are read as they were at its step end. */
  for (guint i = 0; i < self->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      if (p != stepping)
        {
          tide_capture_process_await_figures (p, figures_deadline);
          if (tide_capture_process_sample_classes (p, ts_ns, TRUE, stepping != NULL))
            job_pss += MAX (p->last_classes[0], 0);
        }
      tide_capture_process_measure_cow (p, ts_ns);
    }
  self->peak_pss = MAX (self->peak_pss, job_pss);
  cpu_ns = thread_cpu_ns () - cpu_ns;
  self->next_rollup_ns = ts_ns + MAX (ROLLUP_POLL_NS, cpu_ns * ROLLUP_COST_FACTOR);
  self->snapshot_ns = ts_ns;
  self->snapshot_cost_ns = cpu_ns;
  self->stepped_snapshot |= stepping != NULL;
  self->snapshot_job_rss = self->job_rss;
}

/* A snapshot before it is due, for a job that outgrew the last one: the
 * schedule of the due ones stays as it was, so that those keep coming at
 * step ends. */
static void
snapshot_early (TideRecording      *self,
                gint64              ts_ns,
                TideCaptureProcess *stepping)
{
  gint64 due = self->next_rollup_ns;

  snapshot_classes (self, ts_ns, stepping);
  self->next_rollup_ns = due;
}

/* A snapshot is due while the job steps: it waits for a step end
 * (ROLLUP_STEP_WAIT_NS), and each process that marks steps is asked to
 * wait at its next one (once: until it has), so that the reading of it
 * stands for its step end however short its steps. */
static void
ask_step_waits (TideRecording      *self,
                TideCaptureProcess *stepping)
{
  for (guint i = 0; i < self->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      if (p->n_steps > 0 && p != stepping)
        tide_capture_process_ask_step_wait (p, TIDE_WIRE_STEP_WAIT_MS);
    }
}

/* The private memory of @stepping alone, at a step end where it waits
 * and no snapshot is due: another process's step end took the job's, or
 * this is one of its first step ends.  Its cost is the budget's as a
 * snapshot's is. */
static void
read_step_end_alone (TideRecording      *self,
                     TideCaptureProcess *stepping,
                     gint64              ts_ns)
{
  gint64 cpu_ns = thread_cpu_ns ();

  tide_capture_process_sample_classes_by (stepping, ts_ns, step_deadline (self, stepping, ts_ns),
                                          TRUE, TRUE);
  tide_capture_process_measure_cow (stepping, ts_ns);
  self->next_rollup_ns += (thread_cpu_ns () - cpu_ns) * ROLLUP_COST_FACTOR;
}

/* One tick of the counter poll: each process's RSS and recorded bytes, the
 * RSS classes every ROLLUP_POLL_NS (sooner for a job that grows fast),
 * NVML, and the new frames to the symbolizer. */
void
tide_recording_poll (TideRecording *self,
                     gint64         now)
{
  guint64 job_rss = 0;

  for (guint i = 0; i < self->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      tide_capture_process_poll (p, now);
      if (p->end_ns == 0 && p->last_rss > 0)
        job_rss += p->last_rss;
    }
  self->job_rss = job_rss;
  if (now >= self->next_rollup_ns && self->last_step_ns != 0)
    ask_step_waits (self, NULL);
  if (now >= self->next_rollup_ns &&
      (self->last_step_ns == 0 || now - MAX (self->last_step_ns, self->next_rollup_ns) >=
                                  ROLLUP_STEP_WAIT_NS))
    snapshot_classes (self, now, NULL);
  /* While the job steps, an early one waits for a step end, as a due one
   * does. */
  else if ((self->last_step_ns == 0 || now - self->last_step_ns >= ROLLUP_STEP_WAIT_NS) &&
           snapshot_outgrown (self, now))
    snapshot_early (self, now, NULL);
  if (self->nvml != NULL)
    tide_nvml_poll (self->nvml, self, now);
  self->peak_rss = MAX (self->peak_rss, job_rss);
  tide_stack_table_send_frames (self->stacks);
}

/* A step end of a process that can wait for its reading and did not:
 * whatever the recorder read now may be of its next step, however soon (a
 * step of a few milliseconds frees at its start what its end held, and the
 * step fence can meet the same RSS again).  Where a reading is wanted, it
 * waits at its next step end; a first try is read all the same, at its own
 * time (the deadline passed), which still ends the first span soon after
 * the step end. */
static void
step_end_not_waited (TideRecording      *self,
                     TideCaptureProcess *stepping,
                     gint64              ts_ns,
                     gboolean            due,
                     gboolean            first_tries)
{
  if (due || first_tries || snapshot_outgrown (self, ts_ns))
    tide_capture_process_ask_step_wait (stepping, first_tries ? TIDE_WIRE_FIRST_STEP_WAIT_MS
                                                              : TIDE_WIRE_STEP_WAIT_MS);
  tide_capture_process_sample_classes_by (stepping, ts_ns,
                                          first_tries ? G_MININT64
                                                      : step_deadline (self, stepping, ts_ns),
                                          first_tries, TRUE);
  if (first_tries)
    stepping->step_rollup_tries++;
}

/* Whether @stepping's step end takes the job's first snapshot: the
 * processes that mark no steps start their first span there, and the
 * report counts their time in rank 0's steps where they have no stepping
 * ancestor (a launcher, its helper), so a job with a live rank 0 takes
 * it at rank 0's first step end, not at whichever rank's came first; any
 * other job at its first step end.  Only a process's first tries can (a
 * first step end is one), so the others, nearly every step end, look at
 * no other process. */
static gboolean
takes_first_snapshot (TideRecording      *self,
                      TideCaptureProcess *stepping,
                      gboolean            first_tries)
{
  if (!first_tries)
    return FALSE;
  for (guint i = 0; i < self->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      if (p->rank == 0 && p->end_ns == 0)
        return stepping == p && stepping->n_steps == 1;
    }
  return !self->stepped_snapshot;
}

/**
 * _tide_recording_step_ended:
 * @stepping: the process whose step ended at @ts_ns
 *
 * The RSS classes at a step end: the whole job's snapshot when one is due
 * (or at every step end with --sync-steps), @stepping's own private memory
 * where it waits for it, else what the kernel gives cheaply
 * (/proc/PID/status) of @stepping alone.
 */
void
_tide_recording_step_ended (TideRecording      *self,
                            TideCaptureProcess *stepping,
                            gint64              ts_ns)
{
  gboolean waits = self->sync_steps || stepping->step_end_wait_ns > 0;
  gboolean fresh = self->sync_steps || tide_capture_now_ns () <= step_deadline (self, stepping, ts_ns);
  gboolean first_tries = !stepping->rolled_up_at_step &&
                         stepping->step_rollup_tries < STEP_ROLLUP_TRIES;
  /* The job's first step end takes its snapshot, due or not. */
  gboolean due = self->sync_steps || ts_ns >= self->next_rollup_ns ||
                 takes_first_snapshot (self, stepping, first_tries);

  self->last_step_ns = MAX (self->last_step_ns, ts_ns);
  self->step_ends_waited |= waits && !self->sync_steps;
  /* The job's snapshot, due, is taken at this step end: the other
   * processes that mark steps are read at their own next ones. */
  if (due)
    ask_step_waits (self, stepping);
  if (!waits && stepping->request != NULL)
    {
      step_end_not_waited (self, stepping, ts_ns, due, first_tries);
      return;
    }
  /* A process's first step end is read whatever is due: the report's
   * first span of its steps starts there, not at a reading that the poll
   * took while the interpreter started.  Its next ones are too, a few
   * times, where that reading did not stand for its step end (the step
   * fence): a first step often grows on into the second.  Those are read
   * however late the recorder meets them (on a loaded machine), at their
   * own time then: a reading soon after a step end still ends the first
   * span there rather than at the process's exit.  Where no snapshot is
   * due (another process's first step end took it), the process alone is
   * read. */
  if (due && (fresh || first_tries))
    snapshot_classes (self, ts_ns, stepping);
  else if (fresh && snapshot_outgrown (self, ts_ns))
    snapshot_early (self, ts_ns, stepping);
  else if (first_tries || (fresh && waits))
    read_step_end_alone (self, stepping, ts_ns);
  else
    tide_capture_process_sample_classes_by (stepping, ts_ns, step_deadline (self, stepping, ts_ns),
                                            FALSE, TRUE);
  if (first_tries)
    {
      stepping->step_rollup_tries++;
      stepping->rolled_up_at_step |= stepping->classes_ns == ts_ns;
    }
  /* The next try waits for its reading too, as long as the first. */
  if (!stepping->rolled_up_at_step && stepping->step_rollup_tries < STEP_ROLLUP_TRIES)
    tide_capture_process_ask_step_wait (stepping, TIDE_WIRE_FIRST_STEP_WAIT_MS);
}

/* Whether @process is the only one of the recording that has not ended. */
gboolean
_tide_recording_is_last_live (TideRecording      *self,
                              TideCaptureProcess *process)
{
  for (guint i = 0; i < self->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      if (p != process && p->end_ns == 0)
        return FALSE;
    }
  return TRUE;
}

/* Why the trace ended before its target did (a full disk) and which steps
 * it holds, or NULL for a trace written to its end. */
char *
tide_recording_describe_early_end (TideRecording *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return tide_trace_writer_describe_early_end (self->writer);
}

/* "3 processes, 40 steps": what the summary's first line counts. */
char *
tide_recording_describe_counts (TideRecording *self)
{
  guint n = tide_recording_get_n_processes (self);
  gint64 steps = tide_recording_get_total_steps (self);

  return g_strdup_printf ("%u %s, %" G_GINT64_FORMAT " %s", n, n == 1 ? "process" : "processes",
                          steps, steps == 1 ? "step" : "steps");
}

/* The job's memory at its peak, as the trace at @path gives it
 * (tide_report_job_peak()), so that the summary says what `report
 * --processes` and the job lane say; what was read live where the trace
 * cannot be read. */
char *
tide_recording_describe_peak (TideRecording *self,
                              const char    *path)
{
  g_autoptr(TideTrace) trace = tide_trace_open (path, NULL);
  TideJobPeak peak = { 0 };

  g_autoptr(GArray) devices = NULL;
  g_autofree char *host = NULL;
  g_autofree char *rise = NULL;
  GString *line;

  if (trace == NULL || !tide_report_job_peak (trace, &peak, NULL))
    peak = (TideJobPeak) { .known = self->peak_pss > 0 || self->peak_rss > 0,
                           .by_pss = self->peak_pss > 0,
                           .bytes = (gint64) (self->peak_pss > 0 ? self->peak_pss
                                                                 : self->peak_rss) };
  host = tide_job_peak_describe (&peak);
  line = g_string_new (host);
  /* Each figure says where the memory is. */
  if (peak.known)
    g_string_append (line, " on the host");
  if ((rise = tide_job_peak_describe_rise (&peak)) != NULL)
    g_string_append_printf (line, " (%s)", rise);
  devices = trace != NULL ? tide_report_device_peaks (trace, NULL) : NULL;
  for (guint i = 0; devices != NULL && i < devices->len; i++)
    {
      const TideDevicePeak *d = &g_array_index (devices, TideDevicePeak, i);
      g_autofree char *bytes = tide_format_bytes (d->bytes);

      g_string_append_printf (line, ", cuda:%d peak %s", d->device, bytes);
    }
  return g_string_free (line, FALSE);
}

static gint64
timeval_ns (struct timeval tv)
{
  return (gint64) tv.tv_sec * G_GINT64_CONSTANT (1000000000) + (gint64) tv.tv_usec * 1000;
}

/* What the recorder cost, so that a trace says so: its own high-water
 * mark, and the CPU time of its every thread so far, which it took from a
 * machine that the program kept busy.  Both 0 if nobody can tell. */
static void
write_recorder_cost (TideRecording *self)
{
  struct rusage usage;

  if (getrusage (RUSAGE_SELF, &usage) != 0)
    memset (&usage, 0, sizeof usage);
  tide_trace_writer_set_meta_int (self->writer, "recorder_peak_rss",
                                  (gint64) usage.ru_maxrss * 1024);
  tide_trace_writer_set_meta_int (self->writer, "recorder_cpu_ns",
                                  timeval_ns (usage.ru_utime) + timeval_ns (usage.ru_stime));
}

/**
 * tide_recording_finish:
 * @end_ns: when the capture ended; the driver has ended its processes
 *
 * Writes the blocks nobody freed, resolves the frames that waited for
 * their mappings, the final meta and the summaries.
 */
gboolean
tide_recording_finish (TideRecording  *self,
                       gint64          end_ns,
                       GError        **error)
{
  gint64 classes_missed = 0;
  gboolean finished;

  for (guint i = 0; i < self->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (self->processes, i);

      tide_capture_process_flush_live (p);
      classes_missed += p->classes_missed;
    }
  /* Every mapping has arrived now: pcs unknown when first seen get another
   * chance against the complete address spaces. */
  for (guint i = 0; i < self->processes->len; i++)
    tide_stack_table_resolve_pending (self->stacks,
                                      ((TideCaptureProcess *) g_ptr_array_index (self->processes,
                                                                                 i))->space);
  tide_trace_writer_set_meta_int (self->writer, "end_ns", end_ns);
  tide_trace_writer_set_meta_int (self->writer, "dropped_events", self->total_dropped);
  /* Processes that ended between two reads, or a kernel without
   * smaps_rollup: those samples of the RSS classes are missing. */
  tide_trace_writer_set_meta_int (self->writer, "rss_class_reads_missed", classes_missed);
  /* How the private memory was read, which the report tells. */
  tide_trace_writer_set_meta (self->writer, "private_reads",
                              self->sync_steps ? "every step end"
                              : self->step_ends_waited ? "budget-waits" : "budget");
  tide_trace_writer_set_meta (self->writer, "pagemap_reads",
                              tide_pagemap_kernel_has_scan () ? "scan" : "entries");
  write_recorder_cost (self);
  /* The symbolizer saves the symbol cache while the writer builds the
   * summaries: both are on the wall time of every recording's end. */
  tide_stack_table_finish_frames (self->stacks);
  finished = tide_trace_writer_finish (self->writer, error);
  g_clear_pointer (&self->stacks, tide_stack_table_free);
  return finished;
}
