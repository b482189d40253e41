/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One process image followed by `tidemark attach`: turns the records of
 * tide-attach.bpf.c into calls on the image that the recording keeps
 * for it (tide-capture-process.h).
 *
 * Sampled pages are kept in a tree by address, with the stack and time of
 * their first touch; a later fault on a page already there is not a first
 * touch.  munmap, mremap, brk and madvise(DONTNEED) release the pages of
 * their range, and only then is a page's row written (with free_ns), so the
 * allocations table stays insert-only; what is left when the capture ends
 * is written still live.  Exit does not free: pages resident at exit are
 * what the process held.  The recording's step accumulator hears of every
 * sampled page as of a block, and its residency reads them with the live
 * blocks, so steps keep and measure pages as they do malloc blocks.
 *
 * Where PyTorch's CPU allocator is probed, its blocks win over pages: the
 * allocator hands freed memory back out, so the stack that first touched a
 * page is seldom the one whose tensor holds it now.  A page wholly inside
 * a live tensor block is not kept as a first touch (it is released when
 * the block is made, and not taken when it is touched later); the block's
 * bytes are the sampled allocation's, weighted as `record` weighs its
 * samples.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "tide-attach-private.h"
#include "tide-preload-sampler.h"
#include "tide-schema.h"
#include "tide-wire.h"

#define PAGE_SIZE_BYTES 4096u
#define PAGE_MASK_BITS  (~(guint64) (PAGE_SIZE_BYTES - 1))

/* In a TideAttachProcess.tensors value: the block carries a stack and is
 * one of the recording's live blocks. */
#define TENSOR_SAMPLED  (G_GUINT64_CONSTANT (1) << 63)

/* x86_64 syscall numbers, as in tide-attach.bpf.c */
#define NR_MMAP     9
#define NR_MUNMAP   11
#define NR_BRK      12
#define NR_MREMAP   25
#define NR_MADVISE  28

typedef struct
{
  gint64 alloc_ns;
  gint64 stack_id;
  gint64 scope_id;
  gint64 thread_id;
} PageRecord;

static gint
compare_addr (gconstpointer a,
              gconstpointer b,
              gpointer      user_data)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return (x > y) - (x < y);
}

static gint
compare_key (gconstpointer a,
             gconstpointer b,
             gpointer      user_data)
{
  guintptr x = (guintptr) a, y = (guintptr) b;

  return (x > y) - (x < y);
}

static char *
read_proc_string (pid_t       pid,
                  const char *what)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/%s", pid, what);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return g_strchomp (contents);
}

static pid_t
read_ppid (pid_t pid)
{
  g_autofree char *stat = read_proc_string (pid, "stat");
  const char *paren = stat ? strrchr (stat, ')') : NULL;
  int ppid = 0;

  if (paren == NULL || sscanf (paren, ") %*c %d", &ppid) != 1)
    return 0;
  return ppid;
}

/* The executable mappings made since the last look: munmap takes what it
 * unmaps out of the address space (on_syscall), so a mapping whose start
 * still resolves is the one already there, and only new files are opened
 * for their load bias. */
/* The process's mappings, which its mmap events keep up to date. */
static TideAddressSpace *
space_of (TideAttachProcess *self)
{
  return tide_capture_process_get_address_space (self->core);
}

static void
refresh_maps (TideAttachProcess *self,
              gint64             ts_ns)
{
  g_autoptr(GArray) maps = tide_proc_maps_read (tide_capture_process_get_pid (self->core),
                                                space_of (self));

  self->maps_dirty = FALSE;
  if (maps == NULL)
    return;
  for (guint i = 0; i < maps->len; i++)
    {
      const TideProcMapping *m = &g_array_index (maps, TideProcMapping, i);

      tide_capture_process_add_mapping (self->core, m->start, m->end, m->load_bias, m->path,
                                        ts_ns);
    }
}

static TideLiveAlloc
page_block (TideAttachProcess *self,
            guint64            page,
            const PageRecord  *record)
{
  return (TideLiveAlloc) {
    .addr = page,
    .size = PAGE_SIZE_BYTES,
    .weight = self->attach->sample_pages,
    .alloc_ns = record->alloc_ns,
    .stack_id = record->stack_id,
    .scope_id = record->scope_id,
    .thread_id = record->thread_id,
    .device = -1,
    .kind = TIDE_KIND_PAGE,
  };
}

typedef struct
{
  TideAttachProcess *self;
  TideLiveFunc       func;
  gpointer           func_data;
} PageVisit;

static gboolean
visit_page (gpointer key,
            gpointer value,
            gpointer user_data)
{
  PageVisit *v = user_data;
  TideLiveAlloc a = page_block (v->self, *(guint64 *) key, value);

  v->func (&a, 0, v->func_data);
  return FALSE;
}

/* The sampled pages, for the recording's residency at step ends. */
static void
foreach_page (TideLiveFunc func,
              gpointer     func_data,
              gpointer     user_data)
{
  PageVisit v = { user_data, func, func_data };

  g_tree_foreach (((TideAttachProcess *) user_data)->pages, visit_page, &v);
}

/* Why Python frames are left out is said once per attach (a job's workers
 * run the same Python). */
static void
say_python (TideAttachProcess *self,
            const char        *message)
{
  if (message != NULL && !self->attach->py_said && !self->attach->options->quiet)
    g_printerr ("tidemark: attach: %s\n", message);
  if (message != NULL)
    self->attach->py_said = TRUE;
}

static void
find_python (TideAttachProcess *self)
{
  g_autofree char *message = NULL;
  g_autofree char *later = NULL;

  self->python = tide_attach_python_new (tide_capture_process_get_pid (self->core),
                                         &self->py_target, &message);
  say_python (self, message);
  self->py_starting = self->python != NULL && !tide_attach_python_confirm (self->python, &later);
}

/* An interpreter that had not started when the image was first looked at
 * (a python seen at its exec) is checked again, on the loader's tick.
 * TRUE when its thread states turned out not to agree with the layout:
 * its frames must no longer be read. */
gboolean
tide_attach_process_confirm_python (TideAttachProcess *self)
{
  g_autofree char *message = NULL;

  if (!self->py_starting || tide_capture_process_has_ended (self->core))
    return FALSE;
  if (tide_attach_python_confirm (self->python, &message))
    self->py_starting = FALSE;
  else if (message != NULL)
    {
      say_python (self, message);
      g_clear_pointer (&self->python, tide_attach_python_free);
      self->py_starting = FALSE;
      return TRUE;
    }
  return FALSE;
}

TideAttachProcess *
tide_attach_process_new (TideAttach        *attach,
                         pid_t              pid,
                         TideAttachProcess *parent,
                         gint64             start_ns)
{
  TideAttachProcess *self = g_new0 (TideAttachProcess, 1);
  g_autofree char *exe_link = g_strdup_printf ("/proc/%d/exe", pid);
  g_autofree char *exe = g_file_read_link (exe_link, NULL);
  g_autofree char *cmdline = tide_capture_read_cmdline (pid);
  TideProcessRow row = {
    .pid = pid, .ppid = read_ppid (pid),
    .parent_id = parent ? tide_capture_process_get_id (parent->core) : 0, .start_ns = start_ns,
    .sample_bytes = (gint64) attach->sample_pages * PAGE_SIZE_BYTES,
    .all_mode = attach->sample_pages == 1,
    .exe = exe ? exe : "?", .cmdline = cmdline,
  };

  self->attach = attach;
  self->pages = g_tree_new_full (compare_addr, NULL, g_free, g_free);
  self->tensors = g_tree_new_full (compare_key, NULL, NULL, NULL);
  self->core = tide_capture_process_new (attach->recording, &row);
  self->unwinder = tide_unwinder_new (space_of (self));
  /* The address space follows the process's mmaps (refresh_maps): a pc
   * outside it is no code, and needs no look in /proc/PID/maps. */
  tide_address_space_set_miss_func (space_of (self), NULL, NULL);
  tide_capture_process_set_more_blocks (self->core, foreach_page, self);
  find_python (self);
  g_ptr_array_add (attach->images, self);
  refresh_maps (self, start_ns);
  return self;
}

TideAttachProcess *
tide_attach_find_process (TideAttach *attach,
                          pid_t       pid)
{
  for (guint i = attach->images->len; i-- > 0;)
    {
      TideAttachProcess *p = g_ptr_array_index (attach->images, i);
      if (tide_capture_process_get_pid (p->core) == pid)
        return p;
    }
  return NULL;
}

/* The stack of a sample, unwound from its copy of the registers and of the
 * top of the stack, with its Python frames in place, and its module scope
 * (*@scope_id, 0: none).  A stack whose walk stopped before the thread's
 * first frame (the copy ended, code without unwind information, a frame
 * outside every mapping) gets a "frames missing" frame instead of made-up
 * callers. */
static gint64
intern_stack (TideAttachProcess      *self,
              guint32                 tid,
              const TideBpfUserStack *stack,
              gint64                 *scope_id)
{
  guint32 scope = 0;
  guint64 native[TIDE_BPF_MAX_FRAMES];
  guint64 frames[TIDE_BPF_MAX_FRAMES + 1 + TIDE_BPF_PY_FRAMES];
  TideUnwindSample sample = {
    .tid = (pid_t) tid, .regs = (const guint64 *) stack->regs,
    .stack_start = stack->start, .stack = stack->data,
    .stack_len = MIN (stack->n_bytes, sizeof stack->data),
  };
  gboolean complete = FALSE;
  gint64 start_ns;
  guint n;

  G_STATIC_ASSERT (TIDE_BPF_N_REGS == TIDE_UNWIND_N_REGS);
  if (self->maps_dirty)
    refresh_maps (self, tide_capture_now_ns ());
  /* What unwinding costs the recorder is written with the trace. */
  start_ns = tide_capture_now_ns ();
  n = tide_unwinder_unwind (self->unwinder, &sample, native, TIDE_BPF_MAX_FRAMES, &complete);
  n = tide_attach_python_splice (self->python, self->core, stack, native, n, complete, frames,
                                 G_N_ELEMENTS (frames), &scope);
  *scope_id = tide_capture_process_scope_id (self->core, scope);
  self->attach->unwind_ns += tide_capture_now_ns () - start_ns;
  self->attach->n_unwound++;
  return tide_capture_process_intern_stack (self->core, frames, n);
}

/* Whether @page lies wholly inside a live block of PyTorch's CPU
 * allocator. */
static gboolean
in_tensor (TideAttachProcess *self,
           guint64            page)
{
  GTreeNode *node = g_tree_upper_bound (self->tensors, (gconstpointer) (guintptr) page);
  guint64 start, size;

  node = node != NULL ? g_tree_node_previous (node) : g_tree_node_last (self->tensors);
  if (node == NULL)
    return FALSE;
  start = (guintptr) g_tree_node_key (node);
  size = (guintptr) g_tree_node_value (node) & ~TENSOR_SAMPLED;
  return page + PAGE_SIZE_BYTES <= start + size;
}

static void
on_fault (TideAttachProcess  *self,
          const TideBpfFault *ev)
{
  guint64 page = ev->addr & PAGE_MASK_BITS;
  PageRecord *record;
  TideLiveAlloc a;

  if (g_tree_lookup (self->pages, &page) != NULL || in_tensor (self, page))
    return;
  record = g_new (PageRecord, 1);
  record->alloc_ns = ev->h.time_ns;
  record->stack_id = intern_stack (self, ev->h.tid, &ev->stack, &record->scope_id);
  record->thread_id = tide_capture_process_thread_id (self->core, ev->h.tid, NULL);
  g_tree_insert (self->pages, g_memdup2 (&page, sizeof page), record);
  a = page_block (self, page, record);
  tide_capture_process_account (self->core, &a, +1, ev->h.time_ns);
}

typedef struct
{
  guint64  end;
  GArray  *keys;
} RangeCollect;

static gboolean
collect_in_range (gpointer key,
                  gpointer value,
                  gpointer user_data)
{
  RangeCollect *c = user_data;
  guint64 page = *(guint64 *) key;

  if (page >= c->end)
    return TRUE;
  g_array_append_val (c->keys, page);
  return FALSE;
}

/* The sampled pages in [start, end), in address order. */
static GArray *
pages_in_range (TideAttachProcess *self,
                guint64            start,
                guint64            end)
{
  RangeCollect c = { end, g_array_new (FALSE, FALSE, sizeof (guint64)) };
  GTreeNode *node = g_tree_lower_bound (self->pages, &start);

  for (; node != NULL; node = g_tree_node_next (node))
    if (collect_in_range (g_tree_node_key (node), NULL, &c))
      break;
  return c.keys;
}

static void
release_range (TideAttachProcess *self,
               guint64            start,
               guint64            len,
               gint64             ts_ns)
{
  g_autoptr(GArray) keys = NULL;

  if (len == 0 || start + len < start)
    return;
  keys = pages_in_range (self, start & PAGE_MASK_BITS, start + len);
  for (guint i = 0; i < keys->len; i++)
    {
      guint64 page = g_array_index (keys, guint64, i);
      TideLiveAlloc a = page_block (self, page, g_tree_lookup (self->pages, &page));

      tide_capture_process_account (self->core, &a, -1, ts_ns);
      tide_capture_process_write_allocation (self->core, &a, ts_ns);
      g_tree_remove (self->pages, &page);
    }
}

/* mremap moved [old, old + len) to new: the pages keep their first touch. */
static void
move_range (TideAttachProcess *self,
            guint64            old_addr,
            guint64            len,
            guint64            new_addr)
{
  g_autoptr(GArray) keys = pages_in_range (self, old_addr, old_addr + len);
  g_autoptr(GPtrArray) records = g_ptr_array_new ();

  for (guint i = 0; i < keys->len; i++)
    {
      guint64 page = g_array_index (keys, guint64, i);

      g_ptr_array_add (records, g_tree_lookup (self->pages, &page));
      g_tree_steal (self->pages, &page);
    }
  for (guint i = 0; i < keys->len; i++)
    {
      guint64 page = g_array_index (keys, guint64, i) - old_addr + new_addr;
      g_tree_replace (self->pages, g_memdup2 (&page, sizeof page), records->pdata[i]);
    }
}

static gboolean
syscall_failed (gint64 ret)
{
  return ret < 0 && ret > -4096;
}

static void
on_mremap (TideAttachProcess    *self,
           const TideBpfSyscall *ev)
{
  guint64 old_addr = ev->args[0], old_len = ev->args[1], new_len = ev->args[2];
  guint64 new_addr = (guint64) ev->ret;

  if (new_len < old_len)
    release_range (self, old_addr + new_len, old_len - new_len, ev->h.time_ns);
  if (new_addr != old_addr)
    move_range (self, old_addr, MIN (old_len, new_len), new_addr);
}

static gboolean
advice_releases (guint64 advice)
{
  /* MADV_FREE keeps the pages resident until reclaim; they stay counted. */
  return advice == MADV_DONTNEED || advice == MADV_REMOVE || advice == 21 /* PAGEOUT */ ||
         advice == 24 /* DONTNEED_LOCKED */;
}

static void
on_syscall (TideAttachProcess    *self,
            const TideBpfSyscall *ev)
{
  gint64 ts = ev->h.time_ns;

  if (syscall_failed (ev->ret))
    return;
  switch (ev->nr)
    {
    case NR_MMAP:
      /* MAP_FIXED replaces whatever was there. */
      if (ev->args[3] & MAP_FIXED)
        {
          release_range (self, (guint64) ev->ret, ev->args[1], ts);
          tide_address_space_remove (space_of (self), (guint64) ev->ret,
                                     (guint64) ev->ret + ev->args[1]);
        }
      if ((ev->args[2] & PROT_EXEC) && (gint32) ev->args[4] >= 0)
        self->maps_dirty = TRUE;
      break;
    case NR_MUNMAP:
      release_range (self, ev->args[0], ev->args[1], ts);
      tide_address_space_remove (space_of (self), ev->args[0], ev->args[0] + ev->args[1]);
      break;
    case NR_MREMAP:
      on_mremap (self, ev);
      break;
    case NR_BRK:
      if ((guint64) ev->ret < ev->old_brk)
        release_range (self, (guint64) ev->ret, ev->old_brk - (guint64) ev->ret, ts);
      break;
    case NR_MADVISE:
      if (advice_releases (ev->args[2]))
        release_range (self, ev->args[0], ev->args[1], ts);
      break;
    default:
      break;
    }
}



static void
on_free (TideAttachProcess *self,
         const TideBpfFree *ev)
{
  tide_capture_process_release (self->core, TIDE_KIND_MALLOC, ev->addr, ev->h.time_ns);
}

static void
on_malloc (TideAttachProcess   *self,
           const TideBpfMalloc *ev)
{
  TideLiveAlloc a = {
    .addr = ev->addr, .size = ev->size, .weight = 1.0, .alloc_ns = ev->h.time_ns,
    .device = -1, .kind = TIDE_KIND_MALLOC,
  };

  a.stack_id = intern_stack (self, ev->h.tid, &ev->stack, &a.scope_id);
  a.thread_id = tide_capture_process_thread_id (self->core, ev->h.tid, NULL);
  tide_capture_process_alloc (self->core, &a, 0);
}

/* A block of PyTorch's CPU allocator: the pages wholly inside it are its
 * now; a sampled one is a live block of the recording, with its stack. */
static void
on_tensor (TideAttachProcess *self,
           const TideBpfHeader *h,
           guint64            addr,
           guint64            size)
{
  guint64 first = (addr + PAGE_SIZE_BYTES - 1) & PAGE_MASK_BITS;
  guint64 end = (addr + size) & PAGE_MASK_BITS;
  gboolean sampled = h->type == TIDE_BPF_C10_SAMPLE;

  if (size == 0 || addr + size < addr || size >= TENSOR_SAMPLED)
    return;
  if (end > first)
    release_range (self, first, end - first, h->time_ns);
  g_tree_replace (self->tensors, (gpointer) (guintptr) addr,
                  (gpointer) (guintptr) (size | (sampled ? TENSOR_SAMPLED : 0)));
  if (sampled)
    {
      const TideBpfMalloc *ev = (const TideBpfMalloc *) h;
      TideLiveAlloc a = {
        .addr = addr, .size = size, .alloc_ns = h->time_ns, .device = -1,
        .kind = TIDE_KIND_MALLOC, .weight = tide_sampler_weight (size, TIDE_DEFAULT_SAMPLE_BYTES),
      };

      a.stack_id = intern_stack (self, h->tid, &ev->stack, &a.scope_id);
      a.thread_id = tide_capture_process_thread_id (self->core, h->tid, NULL);
      tide_capture_process_alloc (self->core, &a, 0);
    }
}

static void
on_tensor_free (TideAttachProcess *self,
                const TideBpfFree *ev)
{
  gpointer key = (gpointer) (guintptr) ev->addr, value;

  if (!g_tree_lookup_extended (self->tensors, key, NULL, &value))
    return;
  g_tree_remove (self->tensors, key);
  if ((guintptr) value & TENSOR_SAMPLED)
    tide_capture_process_release (self->core, TIDE_KIND_MALLOC, ev->addr, ev->h.time_ns);
}

/* Device memory and copies, exact (never sampled), as the preload records
 * them. */
static void
on_cuda (TideAttachProcess *self,
         const TideBpfCuda *ev)
{
  TideLiveAlloc a = {
    .addr = ev->addr, .size = ev->size, .weight = 1.0, .alloc_ns = ev->h.time_ns,
    .device = (gint16) ev->device, .kind = (guint8) ev->kind,
  };

  switch (ev->op)
    {
    case TIDE_BPF_CUDA_FREE:
      tide_capture_process_release (self->core, ev->kind, ev->addr, ev->h.time_ns);
      break;
    case TIDE_BPF_CUDA_ALLOC:
      a.stack_id = intern_stack (self, ev->h.tid, &ev->stack, &a.scope_id);
      a.thread_id = tide_capture_process_thread_id (self->core, ev->h.tid, NULL);
      tide_capture_process_alloc (self->core, &a, 0);
      break;
    case TIDE_BPF_CUDA_COPY:
      a.stack_id = intern_stack (self, ev->h.tid, &ev->stack, &a.scope_id);
      tide_capture_process_add_transfer (self->core, &(TideTransferRow) {
          .direction = (gint) ev->kind, .device = ev->device, .bytes = (gint64) ev->size,
          .start_ns = (gint64) ev->h.time_ns - (gint64) ev->duration_ns,
          .duration_ns = (gint64) ev->duration_ns, .stack_id = a.stack_id,
          .scope_id = a.scope_id });
      break;
    default:
      break;
    }
}

void
tide_attach_process_step (TideAttachProcess *self,
                          gint64             ts_ns,
                          const char        *label)
{
  TideCaptureProcess *core = self->core;

  if (ts_ns <= tide_capture_process_get_last_step_end_ns (core))
    ts_ns = tide_capture_process_get_last_step_end_ns (core) + 1;
  tide_capture_process_step (core, ts_ns, label ? label : "", 0);
}

/* A switch of PyTorch's grad mode: a step ends where it is an optimizer's
 * switch back after its step. */
static void
on_grad_mode (TideAttachProcess     *self,
              const TideBpfGradMode *ev)
{
  guint n_py = MIN (ev->n_py, TIDE_BPF_GRAD_MODE_FRAMES);

  if (self->python != NULL && self->attach->optimizer_steps &&
      tide_attach_python_ends_step (self->python, self->core, ev->py, ev->first_arg,
                                    n_py))
    tide_attach_process_step (self, ev->h.time_ns, NULL);
}

void
tide_attach_process_event (TideAttachProcess   *self,
                           const TideBpfHeader *h)
{
  if (tide_capture_process_has_ended (self->core))
    return;
  switch (h->type)
    {
    case TIDE_BPF_FAULT:
      on_fault (self, (const TideBpfFault *) h);
      break;
    case TIDE_BPF_SYSCALL:
      on_syscall (self, (const TideBpfSyscall *) h);
      break;
    case TIDE_BPF_RSS:
      tide_capture_process_set_rss (self->core, h->time_ns,
                                    (gint64) ((const TideBpfRss *) h)->rss_bytes);
      break;
    case TIDE_BPF_STEP:
      {
        const TideBpfStep *step = (const TideBpfStep *) h;
        g_autofree char *label = g_strndup (step->label, sizeof step->label);
        tide_attach_process_step (self, h->time_ns, label);
      }
      break;
    case TIDE_BPF_MALLOC:
      on_malloc (self, (const TideBpfMalloc *) h);
      break;
    case TIDE_BPF_FREE:
      on_free (self, (const TideBpfFree *) h);
      break;
    case TIDE_BPF_CUDA:
      on_cuda (self, (const TideBpfCuda *) h);
      break;
    case TIDE_BPF_GRAD_MODE:
      on_grad_mode (self, (const TideBpfGradMode *) h);
      break;
    case TIDE_BPF_C10_SAMPLE:
      on_tensor (self, h, ((const TideBpfMalloc *) h)->addr, ((const TideBpfMalloc *) h)->size);
      break;
    case TIDE_BPF_C10_BLOCK:
      on_tensor (self, h, ((const TideBpfBlock *) h)->addr, ((const TideBpfBlock *) h)->size);
      break;
    case TIDE_BPF_C10_FREE:
      on_tensor_free (self, (const TideBpfFree *) h);
      break;
    default:
      break;
    }
}

/* @wait_status: the task's exit_code, as the kernel's exit tracepoint
 * gives it (waitpid()'s encoding); @oom_victim: whether the OOM killer
 * chose the process (oom:mark_victim), -1 where the kernel cannot say. */
void
tide_attach_process_end (TideAttachProcess *self,
                         gint64             end_ns,
                         int                wait_status,
                         int                oom_victim)
{
  TideProcessEnd end;

  if (oom_victim < 0)
    tide_capture_process_explain_wait (self->core, wait_status, &end);
  else
    tide_capture_process_explain_victim (self->core, wait_status, oom_victim != 0, &end);
  tide_capture_process_end (self->core, end_ns, &end);
}

static gboolean
write_live_page (gpointer key,
                 gpointer value,
                 gpointer user_data)
{
  TideAttachProcess *self = user_data;
  TideLiveAlloc a = page_block (self, *(guint64 *) key, value);

  tide_capture_process_write_allocation (self->core, &a, 0);
  return FALSE;
}

/* Writes the pages still held; their free_ns stays NULL.  The recording
 * writes the blocks still live. */
void
tide_attach_process_flush (TideAttachProcess *self)
{
  g_tree_foreach (self->pages, write_live_page, self);
  g_tree_remove_all (self->pages);
}

void
tide_attach_process_free (TideAttachProcess *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->pages, g_tree_destroy);
  g_clear_pointer (&self->tensors, g_tree_destroy);
  g_clear_pointer (&self->unwinder, tide_unwinder_free);
  g_clear_pointer (&self->python, tide_attach_python_free);
  g_free (self);
}
