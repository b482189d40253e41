/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One process image of a recording: keeps its live blocks, address
 * space, threads, scopes and step summaries, and turns them into trace rows
 * (tide-capture-process.h).  The drivers decode their events into these
 * calls; nothing here knows the preload's wire or the eBPF records.
 */
#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "tide-capture-process-private.h"
#include "tide-analysis.h"
#include "tide-proc-maps.h"
#include "tide-recording-private.h"
#include "tide-saturate.h"
#include "tide-schema.h"
#include "tide-wire.h"

/* How many times an image's unknown pcs may send us to /proc/PID/maps
 * (a read and parse of the whole file each); JIT code would otherwise send
 * us there forever. */
#define MAPS_MAX_READS 256

/* A free may arrive before its allocation; past this it never will. */
#define ORPHAN_LIFETIME_NS (G_GINT64_CONSTANT (2000000000))

/* How far the resident memory may move between a step mark and the end of
 * the recorder's reading for that reading to stand for the step end: a few
 * pages of stack and interpreter state move in any program that runs on,
 * and the report gives memory to the KiB. */
#define STEP_FENCE_BYTES (256 * 1024)

/* The lanes of the recorded blocks (heap, mapped, pinned, device) are
 * exact from the timeline's buckets of this width up (its fourth level),
 * at most three rows for each in which the counter changed
 * (tide-counter-envelope.c): no more rows than a poll at 50 Hz wrote, for
 * a counter that changes all the time.  A timeline 1,000 pixels wide
 * draws them exactly over a minute or more; zoomed in further, each
 * extreme still stands at its time. */
#define ENVELOPE_BUCKET_NS ((gint64) TIDE_LOD_BASE_NS << 6)
/* A record reaches the recorder at most about 70 ms after it was made
 * (the preload's flush age and tick): a bucket is written after that. */
#define ENVELOPE_SETTLE_NS (G_GINT64_CONSTANT (100) * 1000 * 1000)

typedef struct
{
  gint64  id;
  char   *path;   /* NULL until its SCOPE_DEF arrives */
} Scope;

static void
scope_free (Scope *scope)
{
  g_free (scope->path);
  g_free (scope);
}

/* A pc outside every announced object: the object may still have been
 * loading (dlopen) when it allocated.  /proc/PID/maps knows it already.
 * Each pc is looked for once; one that no file maps (JIT code) is
 * remembered, so it costs nothing the next time. */
static gboolean
on_unknown_pc (TideAddressSpace *space,
               guint64           pc,
               gpointer          user_data)
{
  TideCaptureProcess *self = user_data;
  gpointer key = GSIZE_TO_POINTER (pc);
  gboolean found;

  if (self->end_ns != 0 || self->maps_reads >= MAPS_MAX_READS ||
      g_hash_table_contains (self->unknown_pcs, key))
    return FALSE;
  self->maps_reads++;
  tide_address_space_set_miss_func (space, NULL, NULL);
  tide_proc_maps_load (space, self->pid);
  found = tide_address_space_resolve (space, pc, NULL, NULL);
  tide_address_space_set_miss_func (space, on_unknown_pc, self);
  if (!found)
    g_hash_table_add (self->unknown_pcs, key);
  return found;
}


TideCaptureProcess *
tide_capture_process_new (TideRecording  *recording,
                          TideProcessRow *row)
{
  TideCaptureProcess *self = g_new0 (TideCaptureProcess, 1);

  self->recording = recording;
  self->id = row->id = recording->next_process_id++;
  self->pid = row->pid;
  self->ppid = row->ppid;
  self->start_ns = row->start_ns;
  self->last_step_end_ns = self->start_ns;
  self->space = tide_address_space_new ();
  self->stack_cache = tide_stack_cache_new ();
  self->last_frames = g_array_new (FALSE, FALSE, sizeof (guint64));
  self->last_path = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->steps_acc = tide_step_accumulator_new ();
  tide_address_space_set_miss_func (self->space, on_unknown_pc, self);
  self->unknown_pcs = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->live = tide_live_table_new ();
  self->device_live = tide_live_table_new ();
  self->counters = tide_proc_counters_open (self->pid, NULL);
  self->pagemap = tide_pagemap_open (self->pid, NULL);
  self->threads = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->scopes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                        (GDestroyNotify) scope_free);
  self->pycodes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                         (GDestroyNotify) tide_py_code_free);
  self->rank = -1;
  self->last_rss = -1;
  self->mark_rss = -1;
  self->last_rss_shared = -1;
  for (guint i = 0; i < G_N_ELEMENTS (self->last_classes); i++)
    self->last_classes[i] = -1;
  self->last_thread_stacks = -1;
  self->last_lib_data = -1;
  self->last_alloc_free_absent = -1;
  tide_counter_envelope_init (&self->heap_envelope, recording->start_ns, ENVELOPE_BUCKET_NS,
                              ENVELOPE_SETTLE_NS);
  tide_counter_envelope_init (&self->mapped_envelope, recording->start_ns, ENVELOPE_BUCKET_NS,
                              ENVELOPE_SETTLE_NS);
  tide_counter_envelope_init (&self->pinned_envelope, recording->start_ns, ENVELOPE_BUCKET_NS,
                              ENVELOPE_SETTLE_NS);
  self->written_py_arenas = -1;
  self->written_py_arena_free = -1;
  self->written_py_arena_absent = -1;
  for (guint i = 0; i < TIDE_CAPTURE_MAX_DEVICES; i++)
    tide_counter_envelope_init (&self->device_envelopes[i], recording->start_ns,
                                ENVELOPE_BUCKET_NS, ENVELOPE_SETTLE_NS);

  tide_trace_writer_add_process (recording->writer, row);
  g_ptr_array_add (recording->processes, self);
  tide_oom_watch_add_process (recording->oom, self->pid);
  _tide_recording_write_memory_limit (recording, self->pid);
  tide_capture_process_sample_rss (self, self->start_ns, TRUE);
  return self;
}

gint64
tide_capture_process_thread_id (TideCaptureProcess *self,
                                guint32             tid,
                                const char         *name)
{
  gpointer id;
  g_autofree char *comm = NULL;

  if (tid == self->last_tid && tid != 0)
    return self->last_thread_id;
  id = g_hash_table_lookup (self->threads, GUINT_TO_POINTER (tid));
  if (id != NULL)
    {
      self->last_tid = tid;
      self->last_thread_id = GPOINTER_TO_SIZE (id);
      return GPOINTER_TO_SIZE (id);
    }

  if (name == NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/%d/task/%u/comm", self->pid, tid);
      if (g_file_get_contents (path, &comm, NULL, NULL))
        g_strchomp (comm);
      name = comm;
    }
  id = GSIZE_TO_POINTER (self->recording->next_thread_id++);
  g_hash_table_insert (self->threads, GUINT_TO_POINTER (tid), id);
  tide_trace_writer_add_thread (self->recording->writer, GPOINTER_TO_SIZE (id), self->id, tid,
                                name);
  return GPOINTER_TO_SIZE (id);
}

/* A thread can name a scope that another thread defined an instant before
 * and whose SCOPE_DEF is still on its way: reserve the id now. */
static Scope *
scope_lookup (TideCaptureProcess *self,
              guint32             local_id)
{
  Scope *scope = g_hash_table_lookup (self->scopes, GUINT_TO_POINTER (local_id));

  if (scope == NULL)
    {
      scope = g_new0 (Scope, 1);
      scope->id = self->recording->next_scope_id++;
      g_hash_table_insert (self->scopes, GUINT_TO_POINTER (local_id), scope);
    }
  return scope;
}

gint64
tide_capture_process_scope_id (TideCaptureProcess *self,
                               guint32             local_id)
{
  return local_id ? scope_lookup (self, local_id)->id : 0;
}

void
tide_capture_process_define_scope (TideCaptureProcess *self,
                                   guint32             local_id,
                                   guint32             parent_local_id,
                                   const char         *name)
{
  Scope *parent = parent_local_id ? scope_lookup (self, parent_local_id) : NULL;
  Scope *scope = scope_lookup (self, local_id);

  if (scope->path != NULL)
    return;
  /* Module paths are already dotted from the root ("encoder.layers.3"). */
  if (parent == NULL || parent->path == NULL)
    scope->path = g_strdup (name);
  else if (g_str_has_prefix (name, parent->path) && name[strlen (parent->path)] == '.')
    scope->path = g_strdup (name);
  else
    scope->path = g_strconcat (parent->path, "/", name, NULL);
  tide_trace_writer_add_scope (self->recording->writer, scope->id, self->id,
                               parent ? parent->id : 0, name, scope->path);
}

/* Takes @code. */
void
tide_capture_process_define_pycode (TideCaptureProcess *self,
                                    guint32             id,
                                    TidePyCode         *code)
{
  g_hash_table_replace (self->pycodes, GUINT_TO_POINTER (id), code);
  self->pycode_defs++;
}

/* What the stack ids of this process depend on: its mappings, and the
 * Python code objects its frames name. */
static guint64
stack_generation (TideCaptureProcess *self)
{
  return tide_address_space_get_generation (self->space) + self->pycode_defs;
}

/* How many outermost frames @frames shares with the last stack interned,
 * whose frame ids are then those of the last path: none once the mappings or
 * the code definitions that name its frames have changed. */
static guint
shared_callers (TideCaptureProcess *self,
                guint64             generation,
                const guint64      *frames,
                guint               n_frames)
{
  const guint64 *last = (const guint64 *) (gpointer) self->last_frames->data;
  guint n_last = self->last_frames->len, n = 0;

  if (generation != self->last_generation)
    return 0;
  while (n < n_frames && n < n_last && frames[n_frames - 1 - n] == last[n_last - 1 - n])
    n++;
  return n;
}

gint64
tide_capture_process_intern_stack (TideCaptureProcess *self,
                                   const guint64      *frames,
                                   guint               n_frames)
{
  guint64 generation = stack_generation (self);
  gint64 id = tide_stack_cache_lookup (self->stack_cache, generation, frames, n_frames);

  if (id != 0 || n_frames == 0)
    return id;
  id = tide_stack_table_intern_path (self->recording->stacks, self->space, self->pycodes,
                                     frames, n_frames, shared_callers (self, generation, frames,
                                                                       n_frames),
                                     self->last_path);
  g_array_set_size (self->last_frames, 0);
  /* Resolving may have read /proc/PID/maps and added mappings: the frames
   * resolved before and after may not be named alike again. */
  if (stack_generation (self) != generation)
    return id;
  g_array_append_vals (self->last_frames, frames, n_frames);
  self->last_generation = generation;
  tide_stack_cache_insert (self->stack_cache, generation, frames, n_frames, id);
  return id;
}

void
tide_capture_process_add_mapping (TideCaptureProcess *self,
                                  guint64             start,
                                  guint64             end,
                                  guint64             load_bias,
                                  const char         *path,
                                  gint64              ts_ns)
{
  tide_address_space_add (self->space, start, end, load_bias, path);
  tide_trace_writer_add_mapping (self->recording->writer, self->id, start, end, load_bias, path,
                                 ts_ns);
}

void
tide_capture_process_write_allocation (TideCaptureProcess  *self,
                                       const TideLiveAlloc *a,
                                       gint64               free_ns)
{
  TideAllocRow row;

  /* Plumbing: a class of its own (TIDE_COUNTER_PY_ARENAS), never a row
   * that a stack or a step's retained bytes would count again. */
  if (a->kind == TIDE_KIND_PYARENA)
    return;
  row = (TideAllocRow) {
    .process_id = self->id,
    .thread_id = a->thread_id,
    .alloc_ns = a->alloc_ns,
    .free_ns = free_ns,
    .address = a->addr,
    .size = a->size,
    .weight = a->weight,
    .stack_id = a->stack_id,
    .scope_id = a->scope_id,
    .device = a->device,
    .kind = a->kind,
  };

  tide_trace_writer_add_allocation (self->recording->writer, &row);
}

/* The counter that @kind's blocks add to (on @device), with its value
 * now; NULL for a Python arena, a class of its own. */
static TideCounterEnvelope *
envelope_of_kind (TideCaptureProcess *self,
                  guint               kind,
                  gint                device,
                  double             *value)
{
  if (kind == TIDE_KIND_DEVICE)
    {
      if (device < 0 || device >= TIDE_CAPTURE_MAX_DEVICES)
        return NULL;
      *value = (double) self->device_allocated[device];
      return &self->device_envelopes[device];
    }
  if (kind == TIDE_KIND_PINNED)
    {
      *value = self->pinned_live;
      return &self->pinned_envelope;
    }
  if (tide_kind_is_mapped (kind))
    {
      *value = tide_step_accumulator_get_mapped_live (self->steps_acc);
      return &self->mapped_envelope;
    }
  if (tide_kind_is_heap (kind))
    {
      *value = tide_step_accumulator_get_heap_live (self->steps_acc);
      return &self->heap_envelope;
    }
  return NULL;
}

/* @a's counter changed at @ts_ns; @held: bytes of @a that it holds then
 * beyond what it has been told of (a block freed before it was sent). */
static void
note_change (TideCaptureProcess  *self,
             const TideLiveAlloc *a,
             gint64               ts_ns,
             double               held)
{
  double value;
  TideCounterEnvelope *envelope = envelope_of_kind (self, a->kind, a->device, &value);

  if (envelope != NULL)
    tide_counter_envelope_note (envelope, ts_ns, (gint64) (value + held + 0.5));
}

typedef struct
{
  TideCaptureProcess *self;
  gint                counter;
  gint                device;
} PointTarget;

static void
write_point (gint64   ts_ns,
             gint64   value,
             gpointer user_data)
{
  PointTarget *target = user_data;

  tide_trace_writer_add_counter (target->self->recording->writer, target->self->id,
                                 target->counter, target->device, ts_ns, value);
}

/* @envelope's points, for @counter on @device; @always: even where it
 * never had a block (the heap and mapped lanes of every process); @cut:
 * the bucket still open too (tide_counter_envelope_write()). */
static void
write_envelope (TideCaptureProcess  *self,
                TideCounterEnvelope *envelope,
                gint                 counter,
                gint                 device,
                gint64               now_ns,
                double               value,
                gboolean             always,
                gboolean             cut)
{
  PointTarget target = { self, counter, device };
  gint64 now_value = (gint64) (value + 0.5);

  if (tide_counter_envelope_has_points (envelope))
    tide_counter_envelope_write (envelope, now_ns, now_value, cut, write_point, &target);
  else if (always || now_value != 0)
    {
      /* Nothing changed it since the image started: its first point
       * stands there.  Written at @now_ns, it could fall after the
       * image's end, which the recorder may learn of only later (the
       * next image's HELLO after an exec, a parent's reaping). */
      tide_counter_envelope_write (envelope, MIN (self->start_ns, now_ns), now_value, cut,
                                   write_point, &target);
    }
}

/* The counters of the recorded blocks: the heap and mapped bytes, and
 * the pinned and device bytes where there were any. */
static void
write_block_counters (TideCaptureProcess *self,
                      gint64              now_ns,
                      gboolean            cut)
{
  write_envelope (self, &self->heap_envelope, TIDE_COUNTER_HEAP_LIVE, -1, now_ns,
                  tide_step_accumulator_get_heap_live (self->steps_acc), TRUE, cut);
  write_envelope (self, &self->mapped_envelope, TIDE_COUNTER_MAPPED, -1, now_ns,
                  tide_step_accumulator_get_mapped_live (self->steps_acc), TRUE, cut);
  write_envelope (self, &self->pinned_envelope, TIDE_COUNTER_PINNED, -1, now_ns,
                  self->pinned_live, FALSE, cut);
  for (gint d = 0; d < TIDE_CAPTURE_MAX_DEVICES; d++)
    write_envelope (self, &self->device_envelopes[d], TIDE_COUNTER_DEVICE_ALLOCATED, d, now_ns,
                    (double) self->device_allocated[d], FALSE, cut);
}

/**
 * tide_capture_process_account:
 * @sign: +1 as @a becomes live, -1 as it is freed
 * @ts_ns: when that happened
 */
void
tide_capture_process_account (TideCaptureProcess  *self,
                              const TideLiveAlloc *a,
                              double               sign,
                              gint64               ts_ns)
{
  double bytes = sign * (double) a->size * a->weight;
  TideSeriesKey key = { a->stack_id, a->scope_id, a->device };

  tide_step_accumulator_apply (self->steps_acc, &key, a->kind, bytes, sign * a->weight,
                               a->alloc_ns > self->last_step_end_ns);
  if (a->kind == TIDE_KIND_PYOBJECT || a->kind == TIDE_KIND_PYARENA)
    tide_pymalloc_free_account (&self->pymalloc, a->kind, a->size, sign * a->weight);
  if (a->kind == TIDE_KIND_PINNED)
    self->pinned_live += bytes;
  else if (a->kind == TIDE_KIND_DEVICE && a->device >= 0 && a->device < TIDE_CAPTURE_MAX_DEVICES)
    self->device_allocated[a->device] += (gint64) (sign * (double) a->size);
  note_change (self, a, ts_ns, 0);
}

/* Device and pinned blocks are matched among themselves: a registered
 * (pinned) range starts where a host block does, and on a machine without
 * unified addressing a device pointer may equal a host one. */
static TideLiveTable *
live_table_for (TideCaptureProcess *self,
                guint               kind)
{
  return kind == TIDE_KIND_DEVICE || kind == TIDE_KIND_PINNED ? self->device_live : self->live;
}

/* Bit of failed_devices for @device: pinned host memory (-1) is bit 0;
 * 0 for a device beyond what the counters keep. */
static guint64
failure_bit (gint device)
{
  return device >= -1 && device < TIDE_CAPTURE_MAX_DEVICES - 1 ? G_GUINT64_CONSTANT (1) << (device + 1)
                                                               : 0;
}

/* An allocation on a device where one failed: the program survived those
 * failures (PyTorch's caching allocator frees its cache and retries). */
static void
recover_failures (TideCaptureProcess  *self,
                  const TideLiveAlloc *alloc)
{
  gint device = alloc->kind == TIDE_KIND_PINNED ? -1 : alloc->device;
  guint64 bit = failure_bit (device);

  if ((alloc->kind != TIDE_KIND_DEVICE && alloc->kind != TIDE_KIND_PINNED) ||
      (self->failed_devices & bit) == 0)
    return;
  self->failed_devices &= ~bit;
  tide_trace_writer_recover_failures (self->recording->writer, self->id, device);
}

/**
 * tide_capture_process_alloc_failed:
 * @row: its process_id and allocated_bytes are filled in here
 *
 * A device or pinned allocation that failed for want of memory.
 */
void
tide_capture_process_alloc_failed (TideCaptureProcess  *self,
                                   TideAllocFailureRow *row)
{
  row->process_id = self->id;
  if (row->device == -1)
    row->allocated_bytes = (gint64) (self->pinned_live + 0.5);
  else if (row->device >= 0 && row->device < TIDE_CAPTURE_MAX_DEVICES)
    row->allocated_bytes = self->device_allocated[row->device];
  self->failed_devices |= failure_bit (row->device);
  tide_trace_writer_add_alloc_failure (self->recording->writer, row);
}

/**
 * tide_capture_process_alloc:
 * @lifetime_ns: > 0 when the block was freed before it was reported
 *
 * A recorded block: live until its release, or written at once when its
 * free came first.
 */
void
tide_capture_process_alloc (TideCaptureProcess  *self,
                            const TideLiveAlloc *alloc,
                            gint64               lifetime_ns)
{
  gint64 free_ns;

  if (G_UNLIKELY (self->failed_devices != 0))
    recover_failures (self, alloc);
  /* Freed before it was sent (tide-preload-buffer.h): the row is complete
   * and the step's totals stay as they were, so neither the live table nor
   * the accumulator need to hear of it. */
  if (lifetime_ns != 0)
    {
      free_ns = tide_sat_add (alloc->alloc_ns, lifetime_ns);
      /* Its counter held it for that while: its lane rises to it and falls back. */
      note_change (self, alloc, alloc->alloc_ns,
                   alloc->kind == TIDE_KIND_DEVICE ? (double) alloc->size
                                                    : (double) alloc->size * alloc->weight);
      note_change (self, alloc, free_ns, 0);
      tide_capture_process_write_allocation (self, alloc, free_ns);
    }
  else if (tide_live_table_alloc (live_table_for (self, alloc->kind), alloc, &free_ns))
    tide_capture_process_write_allocation (self, alloc, free_ns);
  else
    tide_capture_process_account (self, alloc, +1, alloc->alloc_ns);
}

void
tide_capture_process_release (TideCaptureProcess *self,
                              guint               kind,
                              guint64             addr,
                              gint64              ts_ns)
{
  TideLiveAlloc a;

  if (tide_live_table_release (live_table_for (self, kind), addr, ts_ns, &a))
    {
      tide_capture_process_account (self, &a, -1, ts_ns);
      tide_capture_process_write_allocation (self, &a, ts_ns);
    }
}

static void
write_series (const TideSeriesRow *row,
              gpointer             user_data)
{
  tide_trace_writer_add_series (user_data, row);
}

/* What the step keeps, as the records arrived: the preload flushes every
 * thread before it sends a step, so what happened before the step is in. */
static void
close_step_summaries (TideCaptureProcess *self,
                      gint64              step_id)
{
  TideStepTotals totals;

  tide_step_accumulator_close_step (self->steps_acc, step_id, write_series,
                                    self->recording->writer, &totals);
  tide_trace_writer_add_step_totals (self->recording->writer, &totals);
}

/* A counter's value at @ts where it changed since *@last; with @always
 * (a reading at a step end) even where it did not: a poll may have
 * written the last one at a later time than this step end, and the report
 * reads the value at the step end's time. */
static void
write_counter (TideCaptureProcess *self,
               gint                counter,
               gint64              ts,
               gint64              value,
               gint64             *last,
               gboolean            always)
{
  if (value == *last && !always)
    return;
  *last = value;
  tide_trace_writer_add_counter (self->recording->writer, self->id, counter, -1, ts, value);
}

/* CPython's arenas, and what pymalloc holds free in them, once the process
 * has any; @always: at a step end, whose values a poll with a later time
 * may have written. */
static void
write_py_arenas (TideCaptureProcess *self,
                 gint64              ts_ns,
                 gboolean            always)
{
  double py_arenas = tide_step_accumulator_get_py_arena_live (self->steps_acc);
  gboolean had_arenas = self->written_py_arenas > 0;
  gboolean had_free = self->written_py_arena_free > 0;
  gint64 free_bytes = 0;

  if (py_arenas > 0 || had_arenas)
    write_counter (self, TIDE_COUNTER_PY_ARENAS, ts_ns, (gint64) (py_arenas + 0.5),
                   &self->written_py_arenas, always);
  /* Every arena gone: nothing is held free any more. */
  if (tide_pymalloc_free_get (&self->pymalloc, &free_bytes) || had_free)
    write_counter (self, TIDE_COUNTER_PY_ARENA_FREE, ts_ns, free_bytes,
                   &self->written_py_arena_free, always);
}

/* The arenas' bytes on pages not present, beside their free bytes where
 * those are known: read with the private memory, whose change the two
 * explain together (tide-report-rss.c). */
static void
write_py_arena_absent (TideCaptureProcess *self,
                       gint64              ts_ns,
                       gboolean            always)
{
  gint64 free_bytes, absent;

  if (!tide_pymalloc_free_get (&self->pymalloc, &free_bytes) && self->written_py_arena_absent <= 0)
    return;
  if (!tide_capture_process_measure_py_arena_absent (self, &absent))
    return;
  write_counter (self, TIDE_COUNTER_PY_ARENA_ABSENT, ts_ns, absent, &self->written_py_arena_absent,
                 always);
}

/* glibc's heaps' bytes on pages not present: free memory that malloc has
 * not touched yet, which its free bytes count and no RSS does. */
static void
write_alloc_free_absent (TideCaptureProcess  *self,
                         gint64               ts_ns,
                         gboolean             always,
                         const TideAnonSplit *split)
{
  if (split->malloc_heap_bytes == 0 && self->last_alloc_free_absent <= 0)
    return;
  write_counter (self, TIDE_COUNTER_ALLOC_FREE_ABSENT, ts_ns,
                 (gint64) (split->malloc_heap_bytes - split->malloc_heap_resident_bytes),
                 &self->last_alloc_free_absent, always);
}

static void
inherit_arena (const TideLiveAlloc *alloc,
               gint64               free_ns,
               gpointer             user_data)
{
  TideCaptureProcess *self = user_data;
  gint64 unused;

  if (alloc->kind == TIDE_KIND_PYARENA && free_ns == 0 &&
      !tide_live_table_alloc (self->live, alloc, &unused))
    tide_capture_process_account (self, alloc, +1, alloc->alloc_ns);
}

/**
 * tide_capture_process_inherit_arenas:
 *
 * A fork's child maps its parent's CPython arenas, and its objects in
 * them: the arenas become the child's live blocks (so that freeing one
 * counts), and what the parent's pymalloc had in use counts as used.
 * The parent's objects that the child frees are never its records, so
 * its free memory in the arenas errs low, as the objects made before the
 * hooks make it.
 */
void
tide_capture_process_inherit_arenas (TideCaptureProcess *self,
                                     TideCaptureProcess *parent)
{
  if (!parent->pymalloc.hooked || parent->pymalloc.arena_bytes < 0.5)
    return;
  tide_live_table_foreach (parent->live, inherit_arena, self);
  tide_pymalloc_free_add_unhooked (&self->pymalloc, (gint64) (parent->pymalloc.used_bytes + 0.5));
  /* The room the arenas hold at the fork is on the parent's pages, shared:
   * the child's own counts from this first value (tide-report-rss.c). */
  write_py_arenas (self, self->start_ns, TRUE);
}

/* The bytes that pymalloc's blocks held when the preload hooked the
 * allocators: used, though no object of theirs is ever recorded. */
void
tide_capture_process_add_py_unhooked (TideCaptureProcess *self,
                                      gint64              ts_ns,
                                      gint64              bytes)
{
  tide_pymalloc_free_add_unhooked (&self->pymalloc, bytes);
  tide_trace_writer_add_counter (self->recording->writer, self->id, TIDE_COUNTER_PY_UNHOOKED, -1,
                                 ts_ns, bytes);
}

/* A counter that the process measured itself (its allocator's free bytes,
 * PyTorch's caching allocator), written as the driver received it. */
void
tide_capture_process_add_counter (TideCaptureProcess *self,
                                  gint                counter,
                                  gint                device,
                                  gint64              ts_ns,
                                  gint64              value)
{
  tide_trace_writer_add_counter (self->recording->writer, self->id, counter, device, ts_ns, value);
}

/* A copy between host and device memory; its process is this one. */
void
tide_capture_process_add_transfer (TideCaptureProcess    *self,
                                   const TideTransferRow *transfer)
{
  TideTransferRow row = *transfer;

  row.process_id = self->id;
  tide_trace_writer_add_transfer (self->recording->writer, &row);
}

/* torch.distributed's rank of the process, which the job lane names it by. */
void
tide_capture_process_set_rank (TideCaptureProcess *self,
                               gint                rank)
{
  self->rank = rank;
  tide_trace_writer_set_process_rank (self->recording->writer, self->id, rank);
}

/* The index of the process among its DataLoader's workers. */
void
tide_capture_process_set_loader_worker (TideCaptureProcess *self,
                                        gint                worker)
{
  tide_trace_writer_set_process_worker (self->recording->writer, self->id, worker);
}

/* Events that the process could not send: its row says so, and the
 * recording's total, at the end of the trace. */
void
tide_capture_process_add_dropped (TideCaptureProcess *self,
                                  gint64              count)
{
  self->dropped += count;
  self->recording->total_dropped += count;
}

/* RSS and its shared part from statm; @rss, where not -1, in place of
 * statm's RSS. */
static void
write_statm (TideCaptureProcess *self,
             gint64              ts_ns,
             gint64              rss,
             gboolean            always)
{
  TideStatm statm;

  if (self->counters == NULL || !tide_proc_counters_read_statm (self->counters, &statm))
    return;
  write_counter (self, TIDE_COUNTER_RSS, ts_ns, rss >= 0 ? rss : (gint64) statm.rss_bytes,
                 &self->last_rss, always);
  write_counter (self, TIDE_COUNTER_RSS_SHARED, ts_ns, (gint64) statm.shared_bytes,
                 &self->last_rss_shared, always);
}

void
tide_capture_process_sample_rss (TideCaptureProcess *self,
                                 gint64              ts_ns,
                                 gboolean            always)
{
  write_statm (self, ts_ns, -1, always);
}

/* RSS at a step end is what the process read itself as it marked it
 * (tide-preload-resident.c), where it sent that: the recorder meets the
 * mark later, and a program that went on to touch or free pages meanwhile
 * (its last step, then its teardown) would give the next step's value. */
static void
write_rss_at_step_end (TideCaptureProcess *self,
                       gint64              ts_ns)
{
  write_statm (self, ts_ns, self->mark_rss_pending ? self->mark_rss : -1, TRUE);
  self->mark_rss_pending = FALSE;
}

/* @with_pss: FALSE for a reading of this process alone, not in a
 * snapshot of the job (the recording's, tide-recording.c): the job's
 * PSS sums each process's last reading, which only a snapshot takes at
 * one moment for all. */
static void
write_classes (TideCaptureProcess   *self,
               gint64                ts_ns,
               gboolean              always,
               const TideRssClasses *c,
               gboolean              with_rollup,
               gboolean              with_pss)
{
  const gint64 values[G_N_ELEMENTS (self->last_classes)] = {
    (gint64) c->pss_bytes, (gint64) c->anon_bytes, (gint64) c->file_bytes,
    (gint64) c->shmem_bytes, (gint64) c->private_bytes, (gint64) c->shared_bytes,
  };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      gint counter = TIDE_COUNTER_PSS + (gint) i;
      gboolean from_rollup = counter == TIDE_COUNTER_PSS || counter == TIDE_COUNTER_USS ||
                             counter == TIDE_COUNTER_RSS_SHARED_PAGES;

      if ((from_rollup && !with_rollup) || (counter == TIDE_COUNTER_PSS && !with_pss))
        continue;
      write_counter (self, counter, ts_ns, values[i], &self->last_classes[i], always);
    }
  /* It only rises while the image lives: a row where it did. */
  if ((gint64) c->peak_bytes > self->last_rss_peak)
    write_counter (self, TIDE_COUNTER_RSS_PEAK, ts_ns, (gint64) c->peak_bytes,
                   &self->last_rss_peak, FALSE);
}

/* The threads' stacks and the libraries' bss, resident (tide-anon-split.h),
 * and the allocators' pages not present: read with smaps_rollup, whose walk of
 * every mapping costs as much. */
static void
write_anon_split (TideCaptureProcess *self,
                  gint64              ts_ns,
                  gboolean            always)
{
  TideAnonSplit split;

  /* What pymalloc holds free changes with every object made or freed, and
   * the poll writes it only as it ticks: a worker's last reading, taken in
   * its exit path, came after the poll's last tick, beside a free figure
   * of up to 100 ms before, and the change between went unexplained. */
  write_py_arenas (self, ts_ns, always);
  write_py_arena_absent (self, ts_ns, always);
  if (self->recording->anon_splitter == NULL ||
      !tide_anon_splitter_read (self->recording->anon_splitter, self->pid, self->pagemap, &split))
    return;
  write_counter (self, TIDE_COUNTER_THREAD_STACKS, ts_ns, (gint64) split.thread_stacks_bytes,
                 &self->last_thread_stacks, always);
  write_counter (self, TIDE_COUNTER_LIB_DATA, ts_ns, (gint64) split.lib_data_bytes,
                 &self->last_lib_data, always);
  write_alloc_free_absent (self, ts_ns, always, &split);
}

/**
 * tide_capture_process_read_at_fork:
 *
 * A fork's child's anonymous memory by kind where it starts, once it has
 * inherited its parent's arenas: it shares what it inherited, and its
 * private memory grows from here as it copies those pages (its
 * copy-on-write) and as it touches pages that were present in neither
 * process at the fork: a new thread's stack, a library's bss, and the
 * allocators' free memory that neither had touched.
 */
void
tide_capture_process_read_at_fork (TideCaptureProcess *self)
{
  write_anon_split (self, self->start_ns, TRUE);
}

/* The step fence: whether the resident memory moved by more than
 * STEP_FENCE_BYTES since the step mark that the process sent it with
 * (tide-preload-resident.c), so that a reading just taken holds part of
 * the next step. */
static gboolean
moved_since_mark (TideCaptureProcess *self)
{
  TideStatm statm;

  if (self->mark_rss < 0 || !tide_proc_counters_read_statm (self->counters, &statm))
    return FALSE;
  return ABS ((gint64) statm.rss_bytes - self->mark_rss) > STEP_FENCE_BYTES;
}

/* The classes, and whether any of the process's pages were out in swap:
 * where none were, a page that was present stays so (the residency). */
static gboolean
read_classes (TideCaptureProcess *self,
              gboolean            with_rollup,
              TideRssClasses     *out)
{
  if (!tide_proc_counters_read_classes (self->counters, with_rollup, out))
    return FALSE;
  self->unswapped_ns = out->swap_bytes == 0 ? tide_capture_now_ns () : 0;
  return TRUE;
}

/**
 * tide_capture_process_sample_classes:
 * @with_rollup: also read smaps_rollup (PSS, USS, shared pages), which
 *   walks every resident page: the recorder asks for it a few times a
 *   second, for every process at once (tide-recording.c)
 * @always: write every value at @ts_ns, changed or not (a step end)
 *
 * Reads and writes the RSS by class.
 *
 * Returns: whether the process could be read
 */
/**
 * tide_capture_process_sample_classes_by:
 * @deadline_ns: when the reading must be done by to stand for @ts_ns
 *
 * tide_capture_process_sample_classes() for a step end that does not wait
 * for the recorder: a reading done after @deadline_ns (a loaded machine,
 * smaps_rollup of a large process), or after which the resident memory is
 * no longer what the process sent at its mark (the step fence), finds the
 * program into its next step, so it is written when it was made, as any
 * sample, and not as the step end's.
 */
gboolean
tide_capture_process_sample_classes_by (TideCaptureProcess *self,
                                        gint64              ts_ns,
                                        gint64              deadline_ns,
                                        gboolean            with_rollup,
                                        gboolean            always)
{
  TideRssClasses c;
  gint64 now;

  if (self->counters == NULL || self->end_ns != 0 || self->read_at_exit)
    return FALSE;
  if (!read_classes (self, with_rollup, &c))
    {
      /* Gone, or a kernel without smaps_rollup: that sample is left out. */
      self->classes_missed++;
      return FALSE;
    }
  now = tide_capture_now_ns ();
  if (now > deadline_ns || (deadline_ns != G_MAXINT64 && moved_since_mark (self)))
    ts_ns = now, always = FALSE;
  self->classes_ns = ts_ns;
  write_classes (self, ts_ns, always, &c, with_rollup, with_rollup);
  if (with_rollup)
    write_anon_split (self, ts_ns, always);
  return TRUE;
}

gboolean
tide_capture_process_sample_classes (TideCaptureProcess *self,
                                     gint64              ts_ns,
                                     gboolean            with_rollup,
                                     gboolean            always)
{
  return tide_capture_process_sample_classes_by (self, ts_ns, G_MAXINT64, with_rollup, always);
}

/* The step end that tide_capture_process_step() held back for its
 * barrier, read now.  @waited: the barrier came, and the process waits
 * there; else it never came (a full socket), and the step end is read as
 * one the recorder met late. */
static void
read_pending_step_end (TideCaptureProcess *self,
                       gboolean            waited)
{
  gint64 ts_ns = self->step_end_pending_ns;

  if (ts_ns == 0)
    return;
  self->step_end_pending_ns = 0;
  if (!waited)
    self->step_end_wait_ns = 0;
  _tide_recording_step_ended (self->recording, self, ts_ns);
  self->step_end_wait_ns = 0;
}

/**
 * tide_capture_process_step:
 * @ts_ns: the step's end, after the one before
 * @wait_ms: how long its marker waits for the recorder's answer at most
 *   (TideWireStep), or 0
 *
 * Ends the process's current step: its row, what it keeps, RSS and its
 * classes at its end, and the residency of its live blocks.
 *
 * Returns: the step's id
 */
gint64
tide_capture_process_step (TideCaptureProcess *self,
                           gint64              ts_ns,
                           const char         *label,
                           guint               wait_ms)
{
  gint64 id = self->recording->next_step_id++;
  gint64 start_ns = self->last_step_end_ns;

  self->n_steps++;
  self->recording->total_steps++;
  tide_trace_writer_add_step (self->recording->writer, id, self->id, self->n_steps, label,
                              start_ns, ts_ns);
  close_step_summaries (self, id);
  write_py_arenas (self, ts_ns, TRUE);
  /* The report reads the mapped bytes at each step end from their
   * counter, whose points stand for a bucket: one cut here gives them at
   * the step end itself. */
  write_envelope (self, &self->mapped_envelope, TIDE_COUNTER_MAPPED, -1, ts_ns,
                  tide_step_accumulator_get_mapped_live (self->steps_acc), TRUE, TRUE);
  self->last_step_end_ns = ts_ns;
  write_rss_at_step_end (self, ts_ns);
  read_pending_step_end (self, FALSE);
  /* The kernel's split costs a constant; with --sync-steps the step waits
   * for the recorder, and the whole job's PSS is read now too.  A marker
   * that waits for its reading (asked, or its first) says so, and how
   * long: its step end is read once its barrier says that it waits, and
   * the recorder may ask again.  One that does not is read as it is met,
   * whatever was asked: the marker took the request after it. */
  if (wait_ms > 0 && self->request != NULL && !self->recording->sync_steps)
    {
      self->step_wait_asked = FALSE;
      self->step_end_wait_ns = MIN (wait_ms, TIDE_WIRE_FIRST_STEP_WAIT_MS) *
                               G_GINT64_CONSTANT (1000000);
      self->step_end_pending_ns = ts_ns;
    }
  else
    _tide_recording_step_ended (self->recording, self, ts_ns);
  tide_capture_process_measure_residency (self, id, start_ns, ts_ns);
  return id;
}

/**
 * tide_capture_process_step_waits:
 *
 * The process waits at its last step end (a STEP barrier) for the reading
 * it was asked to wait for (tide_capture_process_ask_step_wait()).
 */
void
tide_capture_process_step_waits (TideCaptureProcess *self)
{
  read_pending_step_end (self, TRUE);
}

/* One tick of the counter poll: RSS from statm, and the recorded live
 * blocks' counters, @cut as tide_counter_envelope_write() says. */
static void
poll_counters (TideCaptureProcess *self,
               gint64              now_ns,
               gboolean            cut)
{
  if (self->end_ns != 0)
    return;
  tide_capture_process_sample_rss (self, now_ns, FALSE);
  write_block_counters (self, now_ns, cut);
  write_py_arenas (self, now_ns, FALSE);

  /* Frees whose allocation never arrived were of unrecorded blocks. */
  tide_live_table_expire_orphans (self->live, now_ns - ORPHAN_LIFETIME_NS);
  tide_live_table_expire_orphans (self->device_live, now_ns - ORPHAN_LIFETIME_NS);
}

void
tide_capture_process_poll (TideCaptureProcess *self,
                           gint64              now_ns)
{
  poll_counters (self, now_ns, FALSE);
}

/**
 * tide_capture_process_read_at_exit:
 * @ts_ns: when the process asked for it; it waits, unchanged, until this
 *   returns
 *
 * The process's last reading, taken while it waits in its exit path: RSS,
 * the recorded blocks' bytes, its classes with smaps_rollup (USS, shared
 * pages) and a fork's child's copy-on-write, at their last values, before
 * its pages go.  A worker that lived between two of the poll's readings
 * gets one all the same.
 */
void
tide_capture_process_read_at_exit (TideCaptureProcess *self,
                                   gint64              ts_ns)
{
  TideRssClasses c;

  /* A Python process asks twice: at its atexit, then from the preload's
   * destructor, once the interpreter has freed what the program kept. */
  if (self->read_at_exit)
    return;
  /* The report reads the recorded blocks' bytes at this reading's time:
   * their buckets are cut here, as a step end cuts the mapped bytes'. */
  poll_counters (self, ts_ns, TRUE);
  /* Its private memory and its kernel classes; its PSS only where it is
   * the recording's last live process.  The job's PSS sums each process's
   * last reading: one taken alone while others live, as by a parent that
   * has just reaped a worker whose end the recorder has not met yet, would
   * count a page that it holds alone now again in the worker's last share
   * of it.  The last one is the job's footprint at its end, which a job
   * that grew since the last snapshot has at its peak. */
  if (self->counters != NULL && self->end_ns == 0 &&
      read_classes (self, TRUE, &c))
    {
      gboolean with_pss = _tide_recording_is_last_live (self->recording, self);

      write_classes (self, ts_ns, TRUE, &c, TRUE, with_pss);
      write_anon_split (self, ts_ns, TRUE);
      if (with_pss)
        self->recording->peak_pss = MAX (self->recording->peak_pss, c.pss_bytes);
    }
  tide_capture_process_measure_cow (self, ts_ns);
  /* Its classes' last values are this reading's (the report takes them as
   * the process's memory at its end): later ones would be of its teardown. */
  self->read_at_exit = TRUE;
}

/* A resident set size that the kernel reported (attach's rss_stat). */
void
tide_capture_process_set_rss (TideCaptureProcess *self,
                              gint64              ts_ns,
                              gint64              rss)
{
  write_counter (self, TIDE_COUNTER_RSS, ts_ns, rss, &self->last_rss, FALSE);
}

/* @end from a status as waitpid() gives it (negative: unknown), a
 * SIGKILL checked against the kernel's OOM kill counters. */
void
tide_capture_process_explain_wait (TideCaptureProcess *self,
                                   int                 wait_status,
                                   TideProcessEnd     *end)
{
  tide_process_end_from_wait_status (end, wait_status);
  tide_oom_watch_explain (self->recording->oom, self->pid, end);
}

/* As tide_capture_process_explain_wait(), where the kernel said whether
 * the OOM killer chose the process (oom:mark_victim): the counters only
 * say which limit. */
void
tide_capture_process_explain_victim (TideCaptureProcess *self,
                                     int                 wait_status,
                                     gboolean            oom_victim,
                                     TideProcessEnd     *end)
{
  tide_process_end_from_wait_status (end, wait_status);
  tide_oom_watch_explain_victim (self->recording->oom, self->pid, oom_victim, end);
}

/* How the image's recording ended, read from /proc while its parent has
 * not reaped it: an exit or a signal (a SIGKILL checked against the
 * kernel's OOM kill counters); a process that still runs was replaced by
 * exec or, when @finishing, outlived the capture.  Unknown where the
 * process is gone already. */
void
tide_capture_process_read_end (TideCaptureProcess *self,
                               gboolean            finishing,
                               TideProcessEnd     *end)
{
  TideStatm statm;
  int wait_status;

  memset (end, 0, sizeof *end);
  if (self->counters == NULL)
    return;
  if (tide_proc_counters_read_exit (self->counters, &wait_status))
    tide_capture_process_explain_wait (self, wait_status, end);
  else if (tide_proc_counters_read_statm (self->counters, &statm))
    end->kind = finishing ? TIDE_END_RUNNING : TIDE_END_EXEC;
}

/* Ends the image with @end (its kind TIDE_END_UNKNOWN where unknown). */
void
tide_capture_process_end (TideCaptureProcess   *self,
                          gint64                end_ns,
                          const TideProcessEnd *end)
{
  if (self->end_ns != 0)
    return;
  /* What its blocks did since the last poll: the peak of a job that dies
   * between polls is still its peak. */
  write_block_counters (self, end_ns, TRUE);
  self->end_ns = end_ns;
  self->end = *end;
  tide_trace_writer_end_process (self->recording->writer, self->id, end_ns, end, self->dropped);
}

/* Ends the image's recording for a reason other than its death: an exec
 * replaced it, or the capture ended while it ran. */
void
tide_capture_process_end_as (TideCaptureProcess *self,
                             gint64              end_ns,
                             TideEndKind         kind)
{
  TideProcessEnd end = { .kind = kind };

  tide_capture_process_end (self, end_ns, &end);
}

/* A better account of an image's end that came later: the recorder
 * reaped its child only after the child's connection closed (@end; NULL:
 * no news), or the image ended at @ended_ns (0: not known) before the
 * recorder saw its connection close: its parent reaped it then, or the
 * image that replaced it by exec started then. */
void
tide_capture_process_amend_end (TideCaptureProcess   *self,
                                gint64                ended_ns,
                                const TideProcessEnd *end)
{
  gboolean changed = FALSE;

  if (self->end_ns == 0)
    return;
  if (ended_ns > self->start_ns && ended_ns < self->end_ns)
    {
      self->end_ns = ended_ns;
      changed = TRUE;
    }
  if (end != NULL && self->end.kind == TIDE_END_UNKNOWN)
    {
      self->end = *end;
      changed = TRUE;
    }
  if (changed)
    tide_trace_writer_end_process (self->recording->writer, self->id, self->end_ns, &self->end,
                                   self->dropped);
}

static void
write_still_live (const TideLiveAlloc *alloc,
                  gint64               free_ns,
                  gpointer             user_data)
{
  tide_capture_process_write_allocation (user_data, alloc, free_ns);
}

/* Writes the blocks that were never freed; their free_ns stays NULL. */
void
tide_capture_process_flush_live (TideCaptureProcess *self)
{
  tide_live_table_foreach (self->live, write_still_live, self);
  tide_live_table_foreach (self->device_live, write_still_live, self);
  g_clear_pointer (&self->live, tide_live_table_free);
  g_clear_pointer (&self->device_live, tide_live_table_free);
  self->live = tide_live_table_new ();
  self->device_live = tide_live_table_new ();
}

void
tide_capture_process_free (TideCaptureProcess *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->space, tide_address_space_free);
  g_clear_pointer (&self->stack_cache, tide_stack_cache_free);
  g_clear_pointer (&self->last_frames, g_array_unref);
  g_clear_pointer (&self->last_path, g_array_unref);
  g_clear_pointer (&self->unknown_pcs, g_hash_table_unref);
  g_clear_pointer (&self->steps_acc, tide_step_accumulator_free);
  g_clear_pointer (&self->live, tide_live_table_free);
  g_clear_pointer (&self->device_live, tide_live_table_free);
  g_clear_pointer (&self->counters, tide_proc_counters_free);
  g_clear_pointer (&self->pagemap, tide_pagemap_free);
  g_clear_pointer (&self->residency_groups, g_hash_table_unref);
  g_clear_pointer (&self->residency_marks, g_ptr_array_unref);
  g_clear_pointer (&self->residency_free_marks, g_array_unref);
  g_clear_pointer (&self->cow, tide_cow_free);
  g_clear_pointer (&self->threads, g_hash_table_unref);
  g_clear_pointer (&self->scopes, g_hash_table_unref);
  g_clear_pointer (&self->pycodes, g_hash_table_unref);
  tide_counter_envelope_clear (&self->heap_envelope);
  tide_counter_envelope_clear (&self->mapped_envelope);
  tide_counter_envelope_clear (&self->pinned_envelope);
  for (guint i = 0; i < TIDE_CAPTURE_MAX_DEVICES; i++)
    tide_counter_envelope_clear (&self->device_envelopes[i]);
  g_free (self);
}

/* ---- what the drivers read and set ------------------------------------------ */

/* processes.id */
gint64
tide_capture_process_get_id (TideCaptureProcess *self)
{
  return self->id;
}

pid_t
tide_capture_process_get_pid (TideCaptureProcess *self)
{
  return self->pid;
}

gint64
tide_capture_process_get_start_ns (TideCaptureProcess *self)
{
  return self->start_ns;
}

/* Whether its end is known (and written). */
gboolean
tide_capture_process_has_ended (TideCaptureProcess *self)
{
  return self->end_ns != 0;
}

/* How it ended: TIDE_END_UNKNOWN until it is known. */
const TideProcessEnd *
tide_capture_process_get_end (TideCaptureProcess *self)
{
  return &self->end;
}

/* When its last step ended, or its start. */
gint64
tide_capture_process_get_last_step_end_ns (TideCaptureProcess *self)
{
  return self->last_step_end_ns;
}

/* Returns: (transfer none): its mappings, which the driver keeps up to date */
TideAddressSpace *
tide_capture_process_get_address_space (TideCaptureProcess *self)
{
  return self->space;
}

/* Its resident bytes at its last step mark, as it sent them (the step
 * fence: a reading after the mark that finds another value was taken
 * once the program had moved on). */
void
tide_capture_process_set_mark_rss (TideCaptureProcess *self,
                                   gint64              rss)
{
  self->mark_rss = rss;
  self->mark_rss_pending = TRUE;
}

/* How the driver asks the process for its own figures, or to wait at its
 * next step end (the recorder, over the preload's connection); attach has
 * no way to. */
void
tide_capture_process_set_requests (TideCaptureProcess    *self,
                                   TideCaptureRequestFunc func,
                                   gpointer               data)
{
  self->request = func;
  self->request_data = data;
}

/* A process that marks no steps sends its allocator's figures on its own
 * tick, not when another process's step end reads its private memory; the
 * reading asks for them as of its time.  One that marks steps sends them
 * at each mark, its own readings' times. */
void
tide_capture_process_request_figures (TideCaptureProcess *self,
                                      gint64              at_ns)
{
  if (self->request == NULL || self->n_steps > 0 || self->end_ns != 0)
    return;
  self->figures_sent = FALSE;
  self->figures_asked_ns = self->request (TIDE_CAPTURE_REQUEST_FIGURES, at_ns,
                                          self->request_data) ? at_ns : 0;
}

/* The process sent its figures as of @at_ns, and before them all it had
 * made (TIDE_WIRE_FIGURES_SENT); an answer to an earlier request than
 * the last is not the one awaited. */
void
tide_capture_process_figures_sent (TideCaptureProcess *self,
                                   gint64              at_ns)
{
  if (at_ns != 0 && at_ns == self->figures_asked_ns)
    {
      self->figures_sent = TRUE;
      self->figures_late = FALSE;
    }
}

/* Whether the answer to the last FIGURES request came. */
gboolean
tide_capture_process_has_figures (TideCaptureProcess *self)
{
  return self->figures_sent;
}

/* Before a reading of a process asked for its figures: what it
 * sent up to them is taken in, so that the reading, its figures and its
 * blocks are of one moment, the one after it answered.  A process that
 * went on meanwhile (its flusher answers while its other threads run)
 * would otherwise be read before the figures that it took later: the
 * DataLoader worker that its parent's next step sets to work.  At most
 * until @deadline_ns; a process that let the last wait run out is not
 * waited for again until an answer of its comes, and one wait never
 * starts within another (the driver takes in another process's records
 * while it waits, which may end a step of that one). */
void
tide_capture_process_await_figures (TideCaptureProcess *self,
                                    gint64              deadline_ns)
{
  if (self->request == NULL || self->figures_asked_ns == 0 || self->figures_sent ||
      self->figures_late || self->end_ns != 0 || self->recording->awaiting_figures)
    return;
  self->recording->awaiting_figures = TRUE;
  self->request (TIDE_CAPTURE_AWAIT_FIGURES, deadline_ns, self->request_data);
  self->recording->awaiting_figures = FALSE;
  self->figures_late = !self->figures_sent;
}

/* A process that waits at its first step end unasked, as the preload's
 * does at every connection. */
void
tide_capture_process_expect_step_wait (TideCaptureProcess *self)
{
  self->step_wait_asked = self->request != NULL && !self->recording->sync_steps;
}

/* A reading of the process's private memory is due at its next step end:
 * it is asked to wait there for it (TideWireStepWaitRequest), once, at
 * most @patience_ms, until a marker says that it waits.  A request that
 * did not go (a full socket) is asked again when the next is due. */
void
tide_capture_process_ask_step_wait (TideCaptureProcess *self,
                                    guint               patience_ms)
{
  if (self->request == NULL || self->end_ns != 0 || self->step_wait_asked ||
      self->recording->sync_steps)
    return;
  self->step_wait_asked = self->request (TIDE_CAPTURE_REQUEST_STEP_WAIT, patience_ms,
                                         self->request_data);
}

/* Host blocks the driver keeps outside the live tables (attach's sampled
 * pages), which the residency and the end of the capture count too. */
void
tide_capture_process_set_more_blocks (TideCaptureProcess   *self,
                                      TideCaptureBlocksFunc func,
                                      gpointer              data)
{
  self->more_blocks = func;
  self->more_blocks_data = data;
}
