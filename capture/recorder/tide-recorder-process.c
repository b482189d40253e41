/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One process image seen by the recorder: decodes its records (tide-wire.h),
 * keeps its live blocks, address space, threads and scopes, and turns them
 * into trace rows.  An allocation's row is written once, when its free is
 * seen or when the process ends, so the allocations table is insert-only.
 */
#include "config.h"

#include <string.h>
#include <sys/socket.h>

#include <gio/gio.h>

#include "tide-proc-maps.h"
#include "tide-recorder-private.h"
#include "tide-schema.h"
#include "tide-wire.h"

/* How many times an image's unknown pcs may send us to /proc/PID/maps
 * (about 0.1 ms each); JIT code would otherwise send us there forever. */
#define MAPS_MAX_READS 256

/* A free may arrive before its allocation; past this it never will. */
#define ORPHAN_LIFETIME_NS (G_GINT64_CONSTANT (2000000000))

typedef struct
{
  gint64  id;
  char   *path;   /* NULL until its SCOPE_DEF arrives */
} Scope;

static void sample_rss (TideRecProcess *self,
                        gint64          ts_ns,
                        gboolean        always);

static void
scope_free (Scope *scope)
{
  g_free (scope->path);
  g_free (scope);
}

/* Copies a NUL-padded string field out of a record, never past its end. */
static char *
record_string (const void *record,
               gsize       offset,
               gsize       len)
{
  if (offset >= len)
    return g_strdup ("");
  return g_strndup ((const char *) record + offset, len - offset);
}

static char *
read_cmdline (pid_t pid)
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

/* A pc outside every announced object: the object may still have been
 * loading (dlopen) when it allocated.  /proc/PID/maps knows it already.
 * Each pc is looked for once; one that no file maps (JIT code) is
 * remembered, so it costs nothing the next time. */
static gboolean
on_unknown_pc (TideAddressSpace *space,
               guint64           pc,
               gpointer          user_data)
{
  TideRecProcess *self = user_data;
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

static TideRecProcess *
find_parent_image (TideRecorder *recorder,
                   pid_t         pid,
                   pid_t         ppid)
{
  /* The newest image of the same pid (an exec) or else of the parent pid. */
  for (guint pass = 0; pass < 2; pass++)
    for (guint i = recorder->processes->len; i-- > 0;)
      {
        TideRecProcess *p = g_ptr_array_index (recorder->processes, i);
        if (p->pid == (pass == 0 ? pid : ppid))
          return p;
      }
  return NULL;
}

TideRecProcess *
tide_rec_process_new (TideRecorder  *recorder,
                      int            fd,
                      const void    *record,
                      gsize          len,
                      GError       **error)
{
  const TideWireHello *hello = record;
  TideRecProcess *self, *parent;
  g_autofree char *exe = NULL;
  g_autofree char *cmdline = NULL;
  TideProcessRow row;

  if (len < sizeof *hello || hello->h.type != TIDE_WIRE_HELLO ||
      hello->wire_version != TIDE_WIRE_VERSION)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "a process spoke an unknown protocol (version %u)",
                   len >= sizeof *hello ? hello->wire_version : 0);
      return NULL;
    }

  self = g_new0 (TideRecProcess, 1);
  self->recorder = recorder;
  self->fd = fd;
  self->id = recorder->next_process_id++;
  self->pid = hello->pid;
  self->ppid = hello->ppid;
  self->start_ns = hello->h.time_ns;
  self->last_step_end_ns = self->start_ns;
  self->all_mode = (hello->flags & TIDE_HELLO_ALL) != 0;
  self->sample_bytes = hello->sample_bytes;
  self->space = tide_address_space_new ();
  self->stack_cache = tide_stack_cache_new ();
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
  self->last_rss_shared = -1;
  for (guint i = 0; i < G_N_ELEMENTS (self->last_classes); i++)
    self->last_classes[i] = -1;
  self->written_heap = -1;
  self->written_mapped = -1;
  self->written_pinned = -1;
  self->written_py_arenas = -1;
  for (guint i = 0; i < TIDE_REC_MAX_DEVICES; i++)
    self->written_device[i] = -1;

  exe = record_string (record, sizeof *hello, len);
  cmdline = read_cmdline (self->pid);
  parent = find_parent_image (recorder, self->pid, self->ppid);

  /* An exec replaces the image: the old one ends where the new one starts. */
  if (parent != NULL && parent->pid == self->pid && parent->end_ns == 0)
    tide_rec_process_end (parent, self->start_ns);

  row = (TideProcessRow) {
    .id = self->id, .pid = self->pid, .ppid = self->ppid,
    .parent_id = parent ? parent->id : 0, .start_ns = self->start_ns,
    .sample_bytes = (gint64) self->sample_bytes, .all_mode = self->all_mode,
    .exe = exe, .cmdline = cmdline,
  };
  tide_trace_writer_add_process (recorder->writer, &row);
  g_ptr_array_add (recorder->processes, self);
  sample_rss (self, self->start_ns, TRUE);
  return self;
}

static gint64
thread_id_for (TideRecProcess *self,
               guint32         tid,
               const char     *name)
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
  id = GSIZE_TO_POINTER (self->recorder->next_thread_id++);
  g_hash_table_insert (self->threads, GUINT_TO_POINTER (tid), id);
  tide_trace_writer_add_thread (self->recorder->writer, GPOINTER_TO_SIZE (id), self->id, tid,
                                name);
  return GPOINTER_TO_SIZE (id);
}

/* A thread can name a scope that another thread defined an instant before
 * and whose SCOPE_DEF is still on its way: reserve the id now. */
static Scope *
scope_lookup (TideRecProcess *self,
              guint32         local_id)
{
  Scope *scope = g_hash_table_lookup (self->scopes, GUINT_TO_POINTER (local_id));

  if (scope == NULL)
    {
      scope = g_new0 (Scope, 1);
      scope->id = self->recorder->next_scope_id++;
      g_hash_table_insert (self->scopes, GUINT_TO_POINTER (local_id), scope);
    }
  return scope;
}

static gint64
scope_id_for (TideRecProcess *self,
              guint32         local_id)
{
  return local_id ? scope_lookup (self, local_id)->id : 0;
}

/* What the stack ids of this process depend on: its mappings, and the
 * Python code objects its frames name. */
static guint64
stack_generation (TideRecProcess *self)
{
  return tide_address_space_get_generation (self->space) + self->pycode_defs;
}

static gint64
intern_stack (TideRecProcess *self,
              const guint64  *frames,
              guint           n_frames)
{
  guint64 generation = stack_generation (self);
  gint64 id = tide_stack_cache_lookup (self->stack_cache, generation, frames, n_frames);

  if (id != 0 || n_frames == 0)
    return id;
  id = tide_stack_table_intern_mixed (self->recorder->stacks, self->space, self->pycodes,
                                      frames, n_frames);
  /* Resolving may have read /proc/PID/maps and added mappings. */
  if (stack_generation (self) == generation)
    tide_stack_cache_insert (self->stack_cache, generation, frames, n_frames, id);
  return id;
}

static void
write_allocation (TideRecProcess      *self,
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

  tide_trace_writer_add_allocation (self->recorder->writer, &row);
}

static void
account (TideRecProcess      *self,
         const TideLiveAlloc *a,
         double               sign)
{
  double bytes = sign * (double) a->size * a->weight;

  tide_step_accumulator_apply (self->steps_acc, a->stack_id, a->scope_id, a->device, a->kind,
                               bytes, sign * a->weight, a->alloc_ns > self->last_step_end_ns);
  if (a->kind == TIDE_KIND_PINNED)
    self->pinned_live += bytes;
  else if (a->kind == TIDE_KIND_DEVICE && a->device >= 0 && a->device < TIDE_REC_MAX_DEVICES)
    self->device_allocated[a->device] += (gint64) (sign * (double) a->size);
}

/* Device and pinned blocks are matched among themselves: a registered
 * (pinned) range starts where a host block does, and on a machine without
 * unified addressing a device pointer may equal a host one. */
static TideLiveTable *
live_table_for (TideRecProcess *self,
                guint           kind)
{
  return kind == TIDE_KIND_DEVICE || kind == TIDE_KIND_PINNED ? self->device_live : self->live;
}

static void
on_alloc (TideRecProcess      *self,
          const TideWireAlloc *rec,
          gsize                len)
{
  TideLiveAlloc a;
  guint n_frames = rec->n_frames;
  gint64 free_ns;

  if (sizeof *rec + (gsize) n_frames * sizeof (guint64) > len || n_frames > TIDE_WIRE_MAX_FRAMES)
    {
      self->protocol_errors++;
      return;
    }
  a = (TideLiveAlloc) {
    .addr = rec->addr,
    .size = rec->size,
    .weight = rec->weight > 0 ? rec->weight : 1.0,
    .alloc_ns = rec->h.time_ns,
    .stack_id = intern_stack (self, rec->frames, n_frames),
    .scope_id = scope_id_for (self, rec->scope_id),
    .thread_id = thread_id_for (self, rec->h.tid, NULL),
    .device = rec->device,
    .kind = rec->kind,
  };

  /* Freed before it was sent (tide-preload-buffer.h): the row is complete
   * and the step's totals stay as they were, so neither the live table nor
   * the accumulator need to hear of it. */
  if (rec->lifetime_ns != 0)
    write_allocation (self, &a, a.alloc_ns + rec->lifetime_ns);
  else if (tide_live_table_alloc (live_table_for (self, a.kind), &a, &free_ns))
    write_allocation (self, &a, free_ns);
  else
    account (self, &a, +1);
}

static void
on_free (TideRecProcess     *self,
         const TideWireFree *rec)
{
  TideLiveAlloc a;

  if (tide_live_table_release (live_table_for (self, rec->kind), rec->addr, rec->h.time_ns, &a))
    {
      account (self, &a, -1);
      write_allocation (self, &a, rec->h.time_ns);
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
close_step_summaries (TideRecProcess *self,
                      gint64          step_id)
{
  TideStepTotals totals;

  tide_step_accumulator_close_step (self->steps_acc, step_id, write_series,
                                    self->recorder->writer, &totals);
  tide_trace_writer_add_step_totals (self->recorder->writer, &totals);
}

static void
on_step (TideRecProcess *self,
         const void     *rec,
         gsize           len)
{
  const TideWireStep *step = rec;
  g_autofree char *label = record_string (rec, sizeof *step, len);
  gint64 id = self->recorder->next_step_id++;
  gint64 start_ns = self->last_step_end_ns;

  self->n_steps++;
  self->recorder->total_steps++;
  tide_trace_writer_add_step (self->recorder->writer, id, self->id, self->n_steps, label,
                              start_ns, step->h.time_ns);
  close_step_summaries (self, id);
  self->last_step_end_ns = step->h.time_ns;
  /* The marker arrives within a millisecond or so of the step end: RSS read
   * now stands for RSS at the end, and keeps "unattributed" honest. */
  sample_rss (self, step->h.time_ns, TRUE);
  /* The kernel's split costs a constant; with --sync-steps the step waits
   * for the recorder, and the whole job's PSS is read now too. */
  if (self->recorder->options->sync_steps)
    tide_recorder_snapshot_classes (self->recorder, step->h.time_ns, self);
  else
    tide_rec_process_sample_classes (self, step->h.time_ns, FALSE, TRUE);
  tide_rec_process_measure_residency (self, id, start_ns, step->h.time_ns);
}

static void
on_scope_def (TideRecProcess *self,
              const void     *rec,
              gsize           len)
{
  const TideWireScopeDef *def = rec;
  g_autofree char *name = record_string (rec, sizeof *def, len);
  Scope *parent = def->parent_id ? scope_lookup (self, def->parent_id) : NULL;
  Scope *scope = scope_lookup (self, def->id);

  if (scope->path != NULL)
    return;
  /* Module paths are already dotted from the root ("encoder.layers.3"). */
  if (parent == NULL || parent->path == NULL)
    scope->path = g_strdup (name);
  else if (g_str_has_prefix (name, parent->path) && name[strlen (parent->path)] == '.')
    scope->path = g_strdup (name);
  else
    scope->path = g_strconcat (parent->path, "/", name, NULL);
  tide_trace_writer_add_scope (self->recorder->writer, scope->id, self->id,
                               parent ? parent->id : 0, name, scope->path);
}

static void
on_mapping (TideRecProcess *self,
            const void     *rec,
            gsize           len)
{
  const TideWireMapping *m = rec;
  g_autofree char *path = record_string (rec, sizeof *m, len);

  if (m->end <= m->start)
    return;
  tide_address_space_add (self->space, m->start, m->end, m->load_bias, path);
  tide_trace_writer_add_mapping (self->recorder->writer, self->id, m->start, m->end,
                                 m->load_bias, path, m->h.time_ns);
}

static void
on_transfer (TideRecProcess         *self,
             const TideWireTransfer *rec,
             gsize                   len)
{
  gint64 stack_id;

  if (sizeof *rec + (gsize) rec->n_frames * sizeof (guint64) > len ||
      rec->n_frames > TIDE_WIRE_MAX_FRAMES)
    {
      self->protocol_errors++;
      return;
    }
  stack_id = intern_stack (self, rec->frames, rec->n_frames);
  tide_trace_writer_add_transfer (self->recorder->writer, self->id, rec->direction, rec->device,
                                  rec->bytes, rec->h.time_ns, rec->duration_ns, stack_id,
                                  scope_id_for (self, rec->scope_id));
}

G_STATIC_ASSERT (TIDE_WIRE_COUNTER_ALLOC_FREE == TIDE_COUNTER_ALLOC_FREE);

/* A process may speak twice: its environment's rank at start-up, then
 * torch.distributed's rank or its DataLoader worker index; -1 keeps what
 * it said before. */
static void
on_process_info (TideRecProcess            *self,
                 const TideWireProcessInfo *info)
{
  if (info->rank >= 0)
    {
      self->rank = info->rank;
      tide_trace_writer_set_process_rank (self->recorder->writer, self->id, self->rank);
    }
  if (info->loader_worker >= 0)
    tide_trace_writer_set_process_worker (self->recorder->writer, self->id,
                                          info->loader_worker);
}

/* Only what a process can know better than the recorder. */
static void
on_counter (TideRecProcess        *self,
            const TideWireCounter *rec)
{
  if (rec->counter != TIDE_COUNTER_TORCH_ALLOCATED && rec->counter != TIDE_COUNTER_TORCH_RESERVED &&
      rec->counter != TIDE_COUNTER_ALLOC_FREE)
    {
      self->protocol_errors++;
      return;
    }
  tide_trace_writer_add_counter (self->recorder->writer, self->id, (gint) rec->counter,
                                 rec->device, rec->h.time_ns, rec->value);
}

/* A Python code object: "file NUL function NUL" after the fixed part. */
static void
on_pyframe_def (TideRecProcess           *self,
                const TideWirePyFrameDef *def,
                gsize                     len)
{
  gsize room = len - sizeof *def;
  TidePyCode *code;

  if (def->id == 0 || def->file_len >= room)
    {
      self->protocol_errors++;
      return;
    }
  code = g_new0 (TidePyCode, 1);
  code->file = g_strndup (def->strings, def->file_len);
  code->function = g_strndup (def->strings + def->file_len + 1, room - def->file_len - 1);
  code->first_line = def->first_line;
  g_hash_table_replace (self->pycodes, GUINT_TO_POINTER (def->id), code);
  self->pycode_defs++;
}

static gboolean
dispatch (TideRecProcess       *self,
          const TideWireHeader *h)
{
  gsize len = h->len;

  switch (h->type)
    {
    case TIDE_WIRE_ALLOC:
      on_alloc (self, (const TideWireAlloc *) h, len);
      break;
    case TIDE_WIRE_FREE:
      if (len < sizeof (TideWireFree))
        return FALSE;
      on_free (self, (const TideWireFree *) h);
      break;
    case TIDE_WIRE_STEP:
      on_step (self, h, len);
      break;
    case TIDE_WIRE_SCOPE_DEF:
      if (len < sizeof (TideWireScopeDef))
        return FALSE;
      on_scope_def (self, h, len);
      break;
    case TIDE_WIRE_MAPPING:
      if (len < sizeof (TideWireMapping))
        return FALSE;
      on_mapping (self, h, len);
      break;
    case TIDE_WIRE_UNMAPPING:
      if (len < sizeof (TideWireUnmapping))
        return FALSE;
      tide_address_space_remove (self->space, ((const TideWireUnmapping *) h)->start,
                                 ((const TideWireUnmapping *) h)->end);
      break;
    case TIDE_WIRE_THREAD:
      {
        g_autofree char *name = record_string (h, sizeof (TideWireThread), len);
        thread_id_for (self, h->tid, name);
      }
      break;
    case TIDE_WIRE_DROPPED:
      if (len < sizeof (TideWireDropped))
        return FALSE;
      self->dropped += ((const TideWireDropped *) h)->count;
      self->recorder->total_dropped += ((const TideWireDropped *) h)->count;
      break;
    case TIDE_WIRE_TRANSFER:
      if (len < sizeof (TideWireTransfer))
        return FALSE;
      on_transfer (self, (const TideWireTransfer *) h, len);
      break;
    case TIDE_WIRE_COUNTER:
      if (len < sizeof (TideWireCounter))
        return FALSE;
      on_counter (self, (const TideWireCounter *) h);
      break;
    case TIDE_WIRE_PYFRAME_DEF:
      if (len < sizeof (TideWirePyFrameDef))
        return FALSE;
      on_pyframe_def (self, (const TideWirePyFrameDef *) h, len);
      break;
    case TIDE_WIRE_PROCESS_INFO:
      if (len < sizeof (TideWireProcessInfo))
        return FALSE;
      on_process_info (self, (const TideWireProcessInfo *) h);
      break;
    case TIDE_WIRE_EXIT_BARRIER:
      /* Every record before it is handled, steps measured: it may go. */
      if (self->fd >= 0)
        send (self->fd, h, sizeof *h, MSG_NOSIGNAL | MSG_DONTWAIT);
      break;
    default:
      /* A newer preload may send records we do not know: skip them. */
      break;
    }
  return TRUE;
}

/* Returns FALSE on a malformed message; its remaining records are dropped. */
gboolean
tide_rec_process_receive (TideRecProcess *self,
                          const guint8   *message,
                          gsize           len)
{
  gsize offset = 0;

  while (offset + sizeof (TideWireHeader) <= len)
    {
      const TideWireHeader *h = (const TideWireHeader *) (message + offset);

      if (h->len < sizeof (TideWireHeader) || h->len % 8 != 0 || offset + h->len > len ||
          !dispatch (self, h))
        {
          self->protocol_errors++;
          return FALSE;
        }
      offset += h->len;
    }
  return TRUE;
}

static void
write_counter (TideRecProcess *self,
               gint            counter,
               gint64          ts,
               gint64          value,
               gint64         *last)
{
  if (value == *last)
    return;
  *last = value;
  tide_trace_writer_add_counter (self->recorder->writer, self->id, counter, -1, ts, value);
}

static void
sample_rss (TideRecProcess *self,
            gint64          ts_ns,
            gboolean        always)
{
  TideStatm statm;

  if (self->counters == NULL || !tide_proc_counters_read_statm (self->counters, &statm))
    return;
  if (always)
    self->last_rss = self->last_rss_shared = -1;
  write_counter (self, TIDE_COUNTER_RSS, ts_ns, (gint64) statm.rss_bytes, &self->last_rss);
  write_counter (self, TIDE_COUNTER_RSS_SHARED, ts_ns, (gint64) statm.shared_bytes,
                 &self->last_rss_shared);
}

static void
write_classes (TideRecProcess       *self,
               gint64                ts_ns,
               gboolean              always,
               const TideRssClasses *c,
               gboolean              with_rollup)
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

      if (from_rollup && !with_rollup)
        continue;
      if (always)
        self->last_classes[i] = -1;
      write_counter (self, counter, ts_ns, values[i], &self->last_classes[i]);
    }
}

/**
 * tide_rec_process_sample_classes:
 * @with_rollup: also read smaps_rollup (PSS, USS, shared pages), which
 *   walks every resident page: the recorder asks for it a few times a
 *   second, for every process at once (tide-recorder.c)
 * @always: write every value at @ts_ns, changed or not (a step end)
 *
 * Reads and writes the RSS by class.
 *
 * Returns: whether the process could be read
 */
gboolean
tide_rec_process_sample_classes (TideRecProcess *self,
                                 gint64          ts_ns,
                                 gboolean        with_rollup,
                                 gboolean        always)
{
  TideRssClasses c;

  if (self->counters == NULL || self->end_ns != 0)
    return FALSE;
  if (!tide_proc_counters_read_classes (self->counters, with_rollup, &c))
    {
      /* Gone, or a kernel without smaps_rollup: that sample is left out. */
      self->classes_missed++;
      return FALSE;
    }
  write_classes (self, ts_ns, always, &c, with_rollup);
  return TRUE;
}

/* Live bytes of the recorded device blocks, per device that ever had any. */
static void
write_device_counters (TideRecProcess *self,
                       gint64          now_ns)
{
  for (gint d = 0; d < TIDE_REC_MAX_DEVICES; d++)
    {
      if (self->device_allocated[d] == self->written_device[d]
          || (self->written_device[d] < 0 && self->device_allocated[d] == 0))
        continue;
      self->written_device[d] = self->device_allocated[d];
      tide_trace_writer_add_counter (self->recorder->writer, self->id,
                                     TIDE_COUNTER_DEVICE_ALLOCATED, d, now_ns,
                                     self->device_allocated[d]);
    }
}

/* One tick of the counter poll: RSS from statm, and the heap and mapped
 * bytes of the recorded live blocks. */
void
tide_rec_process_poll (TideRecProcess *self,
                       gint64          now_ns)
{
  double heap = tide_step_accumulator_get_heap_live (self->steps_acc);
  double mapped = tide_step_accumulator_get_mapped_live (self->steps_acc);
  double py_arenas = tide_step_accumulator_get_py_arena_live (self->steps_acc);

  if (self->end_ns != 0)
    return;
  sample_rss (self, now_ns, FALSE);
  write_counter (self, TIDE_COUNTER_HEAP_LIVE, now_ns, (gint64) (heap + 0.5), &self->written_heap);
  write_counter (self, TIDE_COUNTER_MAPPED, now_ns, (gint64) (mapped + 0.5), &self->written_mapped);
  if (py_arenas > 0 || self->written_py_arenas > 0)
    write_counter (self, TIDE_COUNTER_PY_ARENAS, now_ns, (gint64) (py_arenas + 0.5),
                   &self->written_py_arenas);
  if (self->pinned_live > 0 || self->written_pinned > 0)
    write_counter (self, TIDE_COUNTER_PINNED, now_ns, (gint64) (self->pinned_live + 0.5),
                   &self->written_pinned);
  write_device_counters (self, now_ns);

  /* Frees whose allocation never arrived were of unrecorded blocks. */
  tide_live_table_expire_orphans (self->live, now_ns - ORPHAN_LIFETIME_NS);
  tide_live_table_expire_orphans (self->device_live, now_ns - ORPHAN_LIFETIME_NS);
}

void
tide_rec_process_end (TideRecProcess *self,
                      gint64          end_ns)
{
  if (self->end_ns != 0)
    return;
  self->end_ns = end_ns;
  tide_trace_writer_end_process (self->recorder->writer, self->id, end_ns,
                                 self->pid == self->recorder->child &&
                                 self->recorder->child_exited
                                 ? self->recorder->child_status : -1,
                                 self->dropped);
}

static void
write_still_live (const TideLiveAlloc *alloc,
                  gint64               free_ns,
                  gpointer             user_data)
{
  write_allocation (user_data, alloc, free_ns);
}

/* Writes the blocks that were never freed; their free_ns stays NULL. */
void
tide_rec_process_flush_live (TideRecProcess *self)
{
  tide_live_table_foreach (self->live, write_still_live, self);
  tide_live_table_foreach (self->device_live, write_still_live, self);
  g_clear_pointer (&self->live, tide_live_table_free);
  g_clear_pointer (&self->device_live, tide_live_table_free);
  self->live = tide_live_table_new ();
  self->device_live = tide_live_table_new ();
}

void
tide_rec_process_free (TideRecProcess *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->space, tide_address_space_free);
  g_clear_pointer (&self->stack_cache, tide_stack_cache_free);
  g_clear_pointer (&self->unknown_pcs, g_hash_table_unref);
  g_clear_pointer (&self->steps_acc, tide_step_accumulator_free);
  g_clear_pointer (&self->live, tide_live_table_free);
  g_clear_pointer (&self->device_live, tide_live_table_free);
  g_clear_pointer (&self->counters, tide_proc_counters_free);
  g_clear_pointer (&self->pagemap, tide_pagemap_free);
  g_clear_pointer (&self->threads, g_hash_table_unref);
  g_clear_pointer (&self->scopes, g_hash_table_unref);
  g_clear_pointer (&self->pycodes, g_hash_table_unref);
  g_free (self);
}
