/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One process image seen by the recorder: decodes its records (tide-wire.h)
 * into calls on the image that the recording keeps for it
 * (tide-capture-process.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <gio/gio.h>

#include "tide-recorder-private.h"
#include "tide-schema.h"
#include "tide-wire.h"

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

/* The newest image of the same pid (an exec) or else of the parent pid. */
static TideCaptureProcess *
find_parent_image (TideRecorder *recorder,
                   pid_t         pid,
                   pid_t         ppid)
{
  TideCaptureProcess *p = tide_recording_find_process (recorder->recording, pid);

  return p != NULL ? p : tide_recording_find_process (recorder->recording, ppid);
}

/* How it ended: from waitpid() for the recorder's own child once reaped,
 * else from /proc while the process's parent has not reaped it, else from
 * the parent's wait if that came first (CHILD_END).  When: as the
 * connection closed, or when the parent's wait returned if that was
 * earlier (the recorder may read the parent's next records, a step's end,
 * before it sees the close). */
static void
end_image (TideRecorder       *recorder,
           TideCaptureProcess *core,
           gint64              end_ns)
{
  g_autofree TideReaped *reaped = NULL;
  pid_t pid = tide_capture_process_get_pid (core);
  TideProcessEnd end;

  g_hash_table_steal_extended (recorder->reaped, GINT_TO_POINTER (pid), NULL,
                               (gpointer *) &reaped);
  if (reaped != NULL && reaped->ns > tide_capture_process_get_start_ns (core) &&
      reaped->ns < end_ns)
    end_ns = reaped->ns;
  if (pid == recorder->child && recorder->child_exited)
    tide_capture_process_explain_wait (core, recorder->child_wait_status, &end);
  else
    {
      tide_capture_process_read_end (core, recorder->finishing, &end);
      if (end.kind == TIDE_END_UNKNOWN && reaped != NULL)
        tide_capture_process_explain_wait (core, reaped->wait_status, &end);
    }
  tide_capture_process_end (core, end_ns, &end);
}

/* A child's end as its parent's wait learned it: for the image that ended
 * without a known end, or for the image still connected (its EOF not read
 * yet), kept until it ends. */
static void
on_child_end (TideRecProcess         *self,
              const TideWireChildEnd *rec)
{
  TideRecorder *recorder = self->recorder;
  TideCaptureProcess *child = tide_recording_find_process (recorder->recording, (pid_t) rec->pid);
  TideProcessEnd end;
  TideReaped *reaped;

  if (child == NULL || rec->wait_status < 0)
    return;
  if (!tide_capture_process_has_ended (child))
    {
      reaped = g_new (TideReaped, 1);
      *reaped = (TideReaped) { rec->wait_status, rec->h.time_ns };
      g_hash_table_insert (recorder->reaped,
                           GINT_TO_POINTER (tide_capture_process_get_pid (child)), reaped);
      return;
    }
  tide_capture_process_explain_wait (child, rec->wait_status, &end);
  tide_capture_process_amend_end (child, rec->h.time_ns, &end);
}

/* Takes in the process's messages until its figures came
 * (tide_capture_process_await_figures()) or @deadline_ns passed: with a
 * buffer of its own, as the message that the recorder is in the middle of
 * (another process's step end) is in rx_buffer.  A connection that closed
 * is left for the loop to close. */
static gboolean
await_figures (TideRecProcess *self,
               gint64          deadline_ns)
{
  TideRecorder *recorder = self->recorder;

  while (!tide_capture_process_has_figures (self->core))
    {
      gint64 left_ns = deadline_ns - tide_capture_now_ns ();
      struct pollfd pfd = { self->fd, POLLIN, 0 };
      ssize_t n;

      if (self->fd < 0 || left_ns <= 0)
        return FALSE;
      if (poll (&pfd, 1, (int) ((left_ns + 999999) / 1000000)) < 0 && errno != EINTR)
        return FALSE;
      n = recv (self->fd, recorder->await_buffer, TIDE_WIRE_MAX_MESSAGE, MSG_DONTWAIT);
      if (n > 0)
        tide_rec_process_receive (self, recorder->await_buffer, n);
      else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        return FALSE;
    }
  return TRUE;
}

/* The process is asked for its own figures as of @at_ns
 * (tide_capture_process_request_figures()), or to wait at its next step
 * end (tide_capture_process_ask_step_wait()); a full socket or one that
 * closed loses the request: the reading then stands beside the figures
 * the process last sent, or finds its step end over.  Or the recorder
 * awaits the figures asked. */
static gboolean
send_request (TideCaptureRequest request,
              gint64             value,
              gpointer           user_data)
{
  TideRecProcess *self = user_data;
  TideWireFiguresRequest figures = {
    .h = { .type = TIDE_WIRE_FIGURES_REQUEST, .len = sizeof figures },
    .at_ns = (guint64) value,
  };
  TideWireStepWaitRequest step_wait = {
    .h = { .type = TIDE_WIRE_STEP_WAIT_REQUEST, .len = sizeof step_wait },
    .patience_ms = (guint64) value,
  };

  if (self->fd < 0)
    return FALSE;
  if (request == TIDE_CAPTURE_AWAIT_FIGURES)
    return await_figures (self, value);
  if (request == TIDE_CAPTURE_REQUEST_STEP_WAIT)
    return send (self->fd, &step_wait, sizeof step_wait, MSG_NOSIGNAL | MSG_DONTWAIT) ==
           (ssize_t) sizeof step_wait;
  return send (self->fd, &figures, sizeof figures, MSG_NOSIGNAL | MSG_DONTWAIT) ==
         (ssize_t) sizeof figures;
}

TideRecProcess *
tide_rec_process_new (TideRecorder  *recorder,
                      int            fd,
                      const void    *record,
                      gsize          len,
                      GError       **error)
{
  const TideWireHello *hello = record;
  TideCaptureProcess *parent;
  TideRecProcess *self;
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

  exe = record_string (record, sizeof *hello, len);
  cmdline = tide_capture_read_cmdline (hello->pid);
  parent = find_parent_image (recorder, hello->pid, hello->ppid);

  /* An exec replaces the image: the old one ends where the new one starts,
   * also when the recorder read the old one's end of connection first,
   * later than the exec. */
  if (parent != NULL && tide_capture_process_get_pid (parent) == (pid_t) hello->pid &&
      !tide_capture_process_has_ended (parent))
    tide_capture_process_end_as (parent, hello->h.time_ns, TIDE_END_EXEC);
  else if (parent != NULL && tide_capture_process_get_pid (parent) == (pid_t) hello->pid)
    tide_capture_process_amend_end (parent, hello->h.time_ns, &(TideProcessEnd) { .kind = TIDE_END_EXEC });

  row = (TideProcessRow) {
    .pid = hello->pid, .ppid = hello->ppid,
    .parent_id = parent ? tide_capture_process_get_id (parent) : 0,
    .start_ns = hello->h.time_ns,
    .sample_bytes = (gint64) hello->sample_bytes,
    .all_mode = (hello->flags & TIDE_HELLO_ALL) != 0,
    .exe = exe, .cmdline = cmdline,
  };
  self = g_new0 (TideRecProcess, 1);
  self->recorder = recorder;
  self->fd = fd;
  self->core = tide_capture_process_new (recorder->recording, &row);
  tide_capture_process_set_requests (self->core, send_request, self);
  /* Its first step end is read whatever is due (_tide_recording_step_ended()),
   * and the preload waits there unasked. */
  tide_capture_process_expect_step_wait (self->core);
  g_ptr_array_add (recorder->connections, self);
  if ((hello->flags & TIDE_HELLO_FORKED) && parent != NULL &&
      tide_capture_process_get_pid (parent) != (pid_t) hello->pid)
    {
      tide_capture_process_start_cow (self->core, parent);
      tide_capture_process_inherit_arenas (self->core, parent);
      tide_capture_process_read_at_fork (self->core);
    }
  return self;
}

static void
on_alloc (TideRecProcess      *self,
          const TideWireAlloc *rec,
          gsize                len)
{
  TideCaptureProcess *core = self->core;
  TideLiveAlloc a;
  guint n_frames = rec->n_frames;

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
    .stack_id = tide_capture_process_intern_stack (core, rec->frames, n_frames),
    .scope_id = tide_capture_process_scope_id (core, rec->scope_id),
    .thread_id = tide_capture_process_thread_id (core, rec->h.tid, NULL),
    .device = rec->device,
    .kind = rec->kind,
  };
  tide_capture_process_alloc (core, &a, rec->lifetime_ns);
}

static void
on_step (TideRecProcess *self,
         const void     *rec,
         gsize           len)
{
  const TideWireStep *step = rec;
  g_autofree char *label = record_string (rec, sizeof *step, len);

  tide_capture_process_step (self->core, step->h.time_ns, label, step->wait_ms);
}

static void
on_scope_def (TideRecProcess *self,
              const void     *rec,
              gsize           len)
{
  const TideWireScopeDef *def = rec;
  g_autofree char *name = record_string (rec, sizeof *def, len);

  tide_capture_process_define_scope (self->core, def->id, def->parent_id, name);
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
  tide_capture_process_add_mapping (self->core, m->start, m->end, m->load_bias, path,
                                    m->h.time_ns);
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
  stack_id = tide_capture_process_intern_stack (self->core, rec->frames, rec->n_frames);
  tide_capture_process_add_transfer (self->core, &(TideTransferRow) {
      .direction = rec->direction, .device = rec->device, .bytes = rec->bytes,
      .start_ns = rec->h.time_ns, .duration_ns = rec->duration_ns, .stack_id = stack_id,
      .scope_id = tide_capture_process_scope_id (self->core, rec->scope_id) });
}

/* The name the trace gives an API of TideWireApi; NULL for one we do
 * not know. */
static const char *
api_name (guint api)
{
  static const char *const names[] = {
    [TIDE_WIRE_API_CUDA_MALLOC] = "cudaMalloc",
    [TIDE_WIRE_API_CUDA_MALLOC_ASYNC] = "cudaMallocAsync",
    [TIDE_WIRE_API_CUDA_MALLOC_MANAGED] = "cudaMallocManaged",
    [TIDE_WIRE_API_CUDA_MALLOC_PITCH] = "cudaMallocPitch",
    [TIDE_WIRE_API_CUDA_MALLOC_HOST] = "cudaMallocHost",
    [TIDE_WIRE_API_CUDA_HOST_ALLOC] = "cudaHostAlloc",
    [TIDE_WIRE_API_CU_MEM_ALLOC] = "cuMemAlloc",
    [TIDE_WIRE_API_CU_MEM_ALLOC_ASYNC] = "cuMemAllocAsync",
    [TIDE_WIRE_API_CU_MEM_HOST_ALLOC] = "cuMemHostAlloc",
    [TIDE_WIRE_API_CU_MEM_CREATE] = "cuMemCreate",
  };

  return api < G_N_ELEMENTS (names) ? names[api] : NULL;
}

static void
on_alloc_failed (TideRecProcess            *self,
                 const TideWireAllocFailed *rec,
                 gsize                      len)
{
  TideCaptureProcess *core = self->core;
  const char *api = api_name (rec->api);
  TideAllocFailureRow row;

  if (sizeof *rec + (gsize) rec->n_frames * sizeof (guint64) > len ||
      rec->n_frames > TIDE_WIRE_MAX_FRAMES || api == NULL ||
      (rec->kind == TIDE_KIND_DEVICE ? rec->device < 0 : rec->kind != TIDE_KIND_PINNED ||
                                                         rec->device != -1))
    {
      self->protocol_errors++;
      return;
    }
  row = (TideAllocFailureRow) {
    .ts_ns = rec->h.time_ns,
    .api = api,
    .error = rec->error,
    .device = rec->device,
    .bytes = (gint64) MIN (rec->bytes, (guint64) G_MAXINT64),
    .stack_id = tide_capture_process_intern_stack (core, rec->frames, rec->n_frames),
    .scope_id = tide_capture_process_scope_id (core, rec->scope_id),
  };
  tide_capture_process_alloc_failed (core, &row);
}

G_STATIC_ASSERT (TIDE_WIRE_COUNTER_RSS == TIDE_COUNTER_RSS);
G_STATIC_ASSERT (TIDE_WIRE_COUNTER_ALLOC_FREE == TIDE_COUNTER_ALLOC_FREE);
G_STATIC_ASSERT (TIDE_WIRE_COUNTER_JEMALLOC_FREE == TIDE_COUNTER_JEMALLOC_FREE);
G_STATIC_ASSERT (TIDE_WIRE_COUNTER_TCMALLOC_FREE == TIDE_COUNTER_TCMALLOC_FREE);
G_STATIC_ASSERT (TIDE_WIRE_COUNTER_PY_UNHOOKED == TIDE_COUNTER_PY_UNHOOKED);
G_STATIC_ASSERT (TIDE_WIRE_COUNTER_PRELOAD_OWN == TIDE_COUNTER_PRELOAD_OWN);
G_STATIC_ASSERT (TIDE_WIRE_COUNTER_INHERITED_FREED == TIDE_COUNTER_INHERITED_FREED);

/* A process may speak twice: its environment's rank at start-up, then
 * torch.distributed's rank or its DataLoader worker index; -1 keeps what
 * it said before. */
static void
on_process_info (TideRecProcess            *self,
                 const TideWireProcessInfo *info)
{
  if (info->rank >= 0)
    tide_capture_process_set_rank (self->core, info->rank);
  if (info->loader_worker >= 0)
    tide_capture_process_set_loader_worker (self->core, info->loader_worker);
}

/* Only what a process can know better than the recorder. */
static void
on_counter (TideRecProcess        *self,
            const TideWireCounter *rec)
{
  /* Not only a value: pymalloc's free memory is counted from it. */
  if (rec->counter == TIDE_COUNTER_PY_UNHOOKED)
    {
      if (rec->value < 0 || rec->device != -1)
        self->protocol_errors++;
      else
        tide_capture_process_add_py_unhooked (self->core, rec->h.time_ns, rec->value);
      return;
    }
  /* Not written: the step fence's measure (tide-preload-resident.c). */
  if (rec->counter == TIDE_COUNTER_RSS)
    {
      if (rec->value < 0 || rec->device != -1)
        self->protocol_errors++;
      else
        tide_capture_process_set_mark_rss (self->core, rec->value);
      return;
    }
  if (rec->counter != TIDE_COUNTER_TORCH_ALLOCATED && rec->counter != TIDE_COUNTER_TORCH_RESERVED &&
      rec->counter != TIDE_COUNTER_ALLOC_FREE && rec->counter != TIDE_COUNTER_JEMALLOC_FREE &&
      rec->counter != TIDE_COUNTER_TCMALLOC_FREE && rec->counter != TIDE_COUNTER_PRELOAD_OWN &&
      rec->counter != TIDE_COUNTER_INHERITED_FREED)
    {
      self->protocol_errors++;
      return;
    }
  tide_capture_process_add_counter (self->core, (gint) rec->counter, rec->device, rec->h.time_ns,
                                    rec->value);
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
  tide_capture_process_define_pycode (self->core, def->id, code);
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
      tide_capture_process_release (self->core, ((const TideWireFree *) h)->kind,
                                    ((const TideWireFree *) h)->addr, h->time_ns);
      break;
    case TIDE_WIRE_STEP:
      if (len < sizeof (TideWireStep))
        return FALSE;
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
      tide_address_space_remove (tide_capture_process_get_address_space (self->core),
                                 ((const TideWireUnmapping *) h)->start,
                                 ((const TideWireUnmapping *) h)->end);
      break;
    case TIDE_WIRE_THREAD:
      {
        g_autofree char *name = record_string (h, sizeof (TideWireThread), len);
        tide_capture_process_thread_id (self->core, h->tid, name);
      }
      break;
    case TIDE_WIRE_DROPPED:
      if (len < sizeof (TideWireDropped))
        return FALSE;
      tide_capture_process_add_dropped (self->core, ((const TideWireDropped *) h)->count);
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
    case TIDE_WIRE_ALLOC_FAILED:
      if (len < sizeof (TideWireAllocFailed))
        return FALSE;
      on_alloc_failed (self, (const TideWireAllocFailed *) h, len);
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
    case TIDE_WIRE_CHILD_END:
      if (len < sizeof (TideWireChildEnd))
        return FALSE;
      on_child_end (self, (const TideWireChildEnd *) h);
      break;
    case TIDE_WIRE_FIGURES_SENT:
      tide_capture_process_figures_sent (self->core, h->time_ns);
      break;
    case TIDE_WIRE_EXIT_BARRIER:
      /* Every record before it is handled, steps measured; the process
       * waits for this answer as it exits, so its last reading is taken
       * now, while its pages are still its own.  Then it may go. */
      if (len < sizeof (TideWireBarrier)
          || ((const TideWireBarrier *) h)->reason == TIDE_BARRIER_EXIT)
        tide_capture_process_read_at_exit (self->core, h->time_ns);
      else if (((const TideWireBarrier *) h)->reason == TIDE_BARRIER_STEP)
        tide_capture_process_step_waits (self->core);
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

void
tide_rec_process_end (TideRecProcess *self,
                      gint64          end_ns)
{
  end_image (self->recorder, self->core, end_ns);
}

void
tide_rec_process_free (TideRecProcess *self)
{
  g_free (self);
}
