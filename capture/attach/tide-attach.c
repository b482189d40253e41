/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The loader of `tidemark attach`: open the skeleton, set its rodata, load,
 * attach, then drain the ring buffer on one poll loop with a signalfd and a
 * timer, and clean up through one path, as libbpf-tools' loaders do.
 *
 * Detaching is destroying the links: the kernel removes the uprobes'
 * breakpoints and the tracepoints' programs, and the target, which never
 * knew, keeps running as it was.
 */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <linux/capability.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <gio/gio.h>

#include "tide-attach-private.h"
#include "tide-attach.skel.h"
#include "tide-wire.h"

#define TICK_NS (G_GINT64_CONSTANT (100000000))

typedef enum
{
  MARK_VICTIM_NONE,   /* no oom:mark_victim tracepoint in this kernel */
  MARK_VICTIM_PID,    /* TP_PROTO (int pid), as in Linux 6.1 */
  MARK_VICTIM_TASK,   /* TP_PROTO (struct task_struct *task, uid_t uid) */
} MarkVictim;

typedef struct
{
  TideAttach              base;
  struct tide_attach     *skel;
  struct ring_buffer     *rb;
  GPtrArray              *links;          /* struct bpf_link* */
  GHashTable             *probed_paths;   /* binaries already given a step uprobe */
  int                     signal_fd;
  int                     timer_fd;
  int                     pidfd;
  gint64                  deadline_ns;
  gint64                  next_interval_step_ns;
  guint                   n_step_probes;  /* binaries with the step uprobe */
  guint                   n_grad_probes;  /* libc10s with the optimizer-step uprobe */
  guint                   n_c10_probes;   /* libc10s with the CPU allocator's uprobes */
  MarkVictim              mark_victim;    /* what oom:mark_victim passes, if any */
  gboolean                announced;      /* "attached" said on the ready fd */
  gboolean                stop;
} Loader;

static gboolean verbose_libbpf;

static int
libbpf_print (enum libbpf_print_level level,
              const char             *format,
              va_list                 args)
{
  /* Probing binaries for the step symbol makes libbpf warn on each miss. */
  if (!verbose_libbpf)
    return 0;
  fputs ("tidemark: libbpf: ", stderr);
  return vfprintf (stderr, format, args);
}

/* ---- privileges ------------------------------------------------------------ */

static guint64
effective_caps (void)
{
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2] = { { 0 } };

  if (syscall (SYS_capget, &header, data) != 0)
    return 0;
  return data[0].effective | ((guint64) data[1].effective << 32);
}

static gboolean
has_cap (guint64 caps,
         int     cap)
{
  return (caps & (G_GUINT64_CONSTANT (1) << cap)) != 0;
}

gboolean
tide_attach_check_privileges (pid_t    pid,
                              GError **error)
{
  guint64 caps = effective_caps ();
  gboolean root = geteuid () == 0;
  g_autofree char *proc = g_strdup_printf ("/proc/%d", pid);
  struct stat st;

  if (!root && !has_cap (caps, CAP_SYS_ADMIN) &&
      !(has_cap (caps, CAP_BPF) && has_cap (caps, CAP_PERFMON)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "attaching needs root, or the CAP_BPF and CAP_PERFMON capabilities "
                   "(try: sudo tidemark attach -p %d)", pid);
      return FALSE;
    }
  if (pid <= 0 || stat (proc, &st) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no process with pid %d", pid);
      return FALSE;
    }
  if (!root && st.st_uid != getuid () && !has_cap (caps, CAP_SYS_PTRACE))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "process %d belongs to another user (uid %u): attaching to it needs root "
                   "or CAP_SYS_PTRACE", pid, (guint) st.st_uid);
      return FALSE;
    }
  return TRUE;
}

/* ---- uprobes --------------------------------------------------------------- */

static gboolean
attach_uprobe (Loader                *self,
               struct bpf_program    *prog,
               pid_t                  pid,
               const char            *path,
               const char            *function,
               gboolean               retprobe)
{
  LIBBPF_OPTS (bpf_uprobe_opts, opts, .func_name = function, .retprobe = retprobe);
  struct bpf_link *link = bpf_program__attach_uprobe_opts (prog, pid, path, 0, &opts);

  if (link == NULL)
    return FALSE;
  g_ptr_array_add (self->links, link);
  return TRUE;
}

/* The step function in every binary the process maps that has it.  pid -1:
 * children that run the same binaries are followed too; the program
 * ignores processes that are not followed. */
static guint
attach_step_probes (Loader *self,
                    pid_t   pid)
{
  const char *symbol = self->base.options->step_symbol;
  g_autoptr(GArray) maps = tide_proc_maps_read_paths (pid);
  guint n = 0;

  if (maps == NULL || self->base.options->step_interval_ms > 0)
    return 0;
  for (guint i = 0; i < maps->len; i++)
    {
      const char *path = g_array_index (maps, TideProcMapping, i).path;

      if (g_hash_table_contains (self->probed_paths, path))
        continue;
      g_hash_table_add (self->probed_paths, g_strdup (path));
      if (attach_uprobe (self, self->skel->progs.tide_step, -1, path,
                         symbol ? symbol : TIDE_ATTACH_STEP_MARKER, FALSE))
        n++;
    }
  self->n_step_probes += n;
  return n;
}

static char *
find_mapped (pid_t       pid,
             const char *prefix)
{
  g_autoptr(GArray) maps = tide_proc_maps_read_paths (pid);

  for (guint i = 0; maps != NULL && i < maps->len; i++)
    {
      const char *path = g_array_index (maps, TideProcMapping, i).path;
      g_autofree char *base = g_path_get_basename (path);

      if (g_str_has_prefix (base, prefix))
        return g_strdup (path);
    }
  return NULL;
}

static gboolean
attach_malloc_probes (Loader  *self,
                      pid_t    pid,
                      GError **error)
{
  g_autofree char *libc = find_mapped (pid, "libc.so");

  if (libc == NULL ||
      !attach_uprobe (self, self->skel->progs.tide_malloc_enter, pid, libc, "malloc", FALSE) ||
      !attach_uprobe (self, self->skel->progs.tide_malloc_exit, pid, libc, "malloc", TRUE) ||
      !attach_uprobe (self, self->skel->progs.tide_free_enter, pid, libc, "free", FALSE))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "--uprobes malloc: cannot find malloc and free in the C library of process %d",
                   pid);
      return FALSE;
    }
  return TRUE;
}

/* ---- optimizer steps -------------------------------------------------------- */

#define GRAD_MODE_SET_ENABLED "_ZN3c108GradMode11set_enabledEb"

/* PyTorch's grad-mode switch (c10::GradMode::set_enabled) in the libc10 of
 * @pid, once per library: torch.optim's optimizers call it before and
 * after every step() (tide_attach_python_ends_step), and only a few times
 * per step in all, so a uprobe there costs the job nothing measurable.
 * FALSE when @pid has no libc10 (@libc10 NULL) or it lacks the function. */
static gboolean
attach_grad_mode_probe (Loader     *self,
                        pid_t       pid,
                        const char *libc10)
{
  g_autofree char *key = NULL;

  if (!self->base.optimizer_steps || libc10 == NULL)
    return FALSE;
  key = g_strconcat ("grad-mode:", libc10, NULL);
  if (g_hash_table_contains (self->probed_paths, key))
    return TRUE;
  if (!attach_uprobe (self, self->skel->progs.tide_grad_mode, pid, libc10,
                      GRAD_MODE_SET_ENABLED, FALSE))
    return FALSE;
  g_hash_table_add (self->probed_paths, g_steal_pointer (&key));
  self->n_grad_probes++;
  return TRUE;
}

#define C10_ALLOC_CPU "_ZN3c109alloc_cpuEm"
#define C10_FREE_CPU  "_ZN3c108free_cpuEPv"

/* PyTorch's CPU allocator (c10::alloc_cpu, c10::free_cpu) in the libc10
 * of @pid, once per library: every CPU tensor's memory, so that a tensor
 * is blamed on the line that made it, not on whichever stack first
 * touched its pages (which the allocator hands out again and again).
 * Without them, one line says that page faults alone blame. */
static void
attach_c10_alloc_probes (Loader     *self,
                         pid_t       pid,
                         const char *libc10)
{
  g_autofree char *key = NULL;

  if (libc10 == NULL)
    return;
  key = g_strconcat ("c10-alloc:", libc10, NULL);
  if (g_hash_table_contains (self->probed_paths, key))
    return;
  g_hash_table_add (self->probed_paths, g_steal_pointer (&key));
  if (attach_uprobe (self, self->skel->progs.tide_c10_alloc_enter, pid, libc10, C10_ALLOC_CPU,
                     FALSE) &&
      attach_uprobe (self, self->skel->progs.tide_c10_alloc_exit, pid, libc10, C10_ALLOC_CPU,
                     TRUE) &&
      attach_uprobe (self, self->skel->progs.tide_c10_free_enter, pid, libc10, C10_FREE_CPU,
                     FALSE))
    {
      self->n_c10_probes++;
      return;
    }
  if (!self->base.options->quiet)
    g_printerr ("tidemark: attach: %s has no c10::alloc_cpu and c10::free_cpu: PyTorch's "
                "tensors are blamed on the stack that first touched their pages\n", libc10);
}

/* PyTorch's probes, once @pid maps its libc10: looked for once, for
 * both. */
static void
attach_torch_probes (Loader *self,
                     pid_t   pid)
{
  g_autofree char *libc10 = find_mapped (pid, "libc10.so");

  attach_grad_mode_probe (self, pid, libc10);
  attach_c10_alloc_probes (self, pid, libc10);
}

/* One line on why a Python target gets no optimizer steps; a native one
 * has its step marker. */
static void
say_no_optimizer_steps (Loader     *self,
                        pid_t       pid,
                        const char *libc10)
{
  TideAttachProcess *p = tide_attach_find_process (&self->base, pid);

  if (self->base.options->quiet || p == NULL)
    return;
  if (libc10 == NULL && p->python != NULL)
    g_printerr ("tidemark: attach: process %d has not loaded PyTorch (no libc10): optimizer "
                "steps count once it does; --step-interval MS marks steps by time\n", pid);
  else if (libc10 != NULL && p->python == NULL)
    g_printerr ("tidemark: attach: optimizer steps are told by the Python frames, which "
                "process %d does not give: no steps; --step-interval MS marks steps by time\n",
                pid);
  else if (libc10 != NULL)
    g_printerr ("tidemark: attach: %s has no c10::GradMode::set_enabled: no optimizer steps; "
                "--step-interval MS marks steps by time\n", libc10);
}

/* ---- CUDA uprobes ------------------------------------------------------------ */

typedef struct
{
  const char *function;
  guint32     cookie;   /* TideBpfCudaOp | TIDE_BPF_CUDA_* (tide-attach-event.h) */
} CudaProbe;

#define RT  TIDE_BPF_CUDA_RUNTIME
#define H2D ((guint32) TIDE_TRANSFER_TO_DEVICE << TIDE_BPF_CUDA_DIR_SHIFT)
#define D2H ((guint32) TIDE_TRANSFER_TO_HOST << TIDE_BPF_CUDA_DIR_SHIFT)

static const CudaProbe cudart_probes[] = {
  { "cudaSetDevice",    TIDE_BPF_CUDA_SET_DEV | RT },
  { "cudaMalloc",       TIDE_BPF_CUDA_ALLOC | RT },
  { "cudaMallocAsync",  TIDE_BPF_CUDA_ALLOC | RT },
  { "cudaMallocManaged", TIDE_BPF_CUDA_ALLOC | RT },
  { "cudaFree",         TIDE_BPF_CUDA_FREE | RT },
  { "cudaFreeAsync",    TIDE_BPF_CUDA_FREE | RT },
  { "cudaMallocHost",   TIDE_BPF_CUDA_ALLOC | TIDE_BPF_CUDA_PINNED | RT },
  { "cudaHostAlloc",    TIDE_BPF_CUDA_ALLOC | TIDE_BPF_CUDA_PINNED | RT },
  { "cudaFreeHost",     TIDE_BPF_CUDA_FREE | TIDE_BPF_CUDA_PINNED | RT },
  { "cudaMemcpy",       TIDE_BPF_CUDA_COPY | TIDE_BPF_CUDA_KIND_ARG | RT },
  { "cudaMemcpyAsync",  TIDE_BPF_CUDA_COPY | TIDE_BPF_CUDA_KIND_ARG | RT },
};

static const CudaProbe cuda_probes[] = {
  { "cuMemAlloc_v2",        TIDE_BPF_CUDA_ALLOC },
  { "cuMemAllocAsync",      TIDE_BPF_CUDA_ALLOC },
  { "cuMemFree_v2",         TIDE_BPF_CUDA_FREE },
  { "cuMemFreeAsync",       TIDE_BPF_CUDA_FREE },
  { "cuMemHostAlloc",       TIDE_BPF_CUDA_ALLOC | TIDE_BPF_CUDA_PINNED },
  { "cuMemAllocHost_v2",    TIDE_BPF_CUDA_ALLOC | TIDE_BPF_CUDA_PINNED },
  { "cuMemFreeHost",        TIDE_BPF_CUDA_FREE | TIDE_BPF_CUDA_PINNED },
  { "cuMemcpyHtoD_v2",      TIDE_BPF_CUDA_COPY | H2D },
  { "cuMemcpyHtoDAsync_v2", TIDE_BPF_CUDA_COPY | H2D },
  { "cuMemcpyDtoH_v2",      TIDE_BPF_CUDA_COPY | D2H },
  { "cuMemcpyDtoHAsync_v2", TIDE_BPF_CUDA_COPY | D2H },
};

#undef RT
#undef H2D
#undef D2H

/* Entry and return probes on one function; a library without it (an older
 * CUDA) just has fewer probes. */
static guint
attach_cuda_probe (Loader          *self,
                   pid_t            pid,
                   const char      *path,
                   const CudaProbe *probe)
{
  LIBBPF_OPTS (bpf_uprobe_opts, opts, .func_name = probe->function, .bpf_cookie = probe->cookie);
  struct bpf_link *link;
  guint n = 0;

  link = bpf_program__attach_uprobe_opts (self->skel->progs.tide_cuda_enter, pid, path, 0, &opts);
  if (link == NULL)
    return 0;
  g_ptr_array_add (self->links, link);
  n++;
  if ((probe->cookie & TIDE_BPF_CUDA_OP_MASK) == TIDE_BPF_CUDA_SET_DEV)
    return n;
  opts.retprobe = TRUE;
  link = bpf_program__attach_uprobe_opts (self->skel->progs.tide_cuda_exit, pid, path, 0, &opts);
  if (link != NULL)
    {
      g_ptr_array_add (self->links, link);
      n++;
    }
  return n;
}

/* libcudart.so* and libcuda.so* as the process maps them.  The probes are
 * for this process only: other jobs on the machine that use the same
 * libraries must not pay a breakpoint on each call.  (A forked child keeps
 * its parent's breakpoints only until it execs.) */
static guint
attach_cuda_probes (Loader *self,
                    pid_t   pid)
{
  g_autoptr(GArray) maps = tide_proc_maps_read_paths (pid);
  guint n = 0;

  for (guint i = 0; maps != NULL && i < maps->len; i++)
    {
      const char *path = g_array_index (maps, TideProcMapping, i).path;
      g_autofree char *base = g_path_get_basename (path);
      g_autofree char *key = g_strdup_printf ("cuda:%d:%s", pid, path);
      const CudaProbe *probes;
      gsize n_probes;

      if (g_str_has_prefix (base, "libcudart.so"))
        probes = cudart_probes, n_probes = G_N_ELEMENTS (cudart_probes);
      else if (g_str_has_prefix (base, "libcuda.so"))
        probes = cuda_probes, n_probes = G_N_ELEMENTS (cuda_probes);
      else
        continue;
      if (g_hash_table_contains (self->probed_paths, key))
        continue;
      g_hash_table_add (self->probed_paths, g_steal_pointer (&key));
      for (gsize j = 0; j < n_probes; j++)
        n += attach_cuda_probe (self, pid, path, &probes[j]);
    }
  return n;
}

/* ---- events ---------------------------------------------------------------- */

/* A line on the ready fd, for whoever started the attach and waits on it.
 * A reader that has gone away is no error (SIGPIPE is ignored when there
 * is a ready fd). */
static void
tell_ready (Loader     *self,
            const char *line)
{
  int fd = self->base.options->ready_fd;

  if (fd >= 0 && write (fd, line, strlen (line)) < 0)
    return;
}

/* Where the BPF program finds the Python frames of @p's threads (a fork's
 * child has its parent's entry already, from the BPF program).  An image
 * found after the attach (a fork, an exec) is told on the ready fd: until
 * then, its samples have no Python frames. */
static void
follow_python (Loader            *self,
               TideAttachProcess *p)
{
  guint32 tgid = (guint32) tide_capture_process_get_pid (p->core);
  g_autofree char *line = NULL;

  if (p->python == NULL)
    return;
  bpf_map__update_elem (self->skel->maps.py_targets, &tgid, sizeof tgid, &p->py_target,
                        sizeof p->py_target, BPF_ANY);
  if (self->announced)
    {
      line = g_strdup_printf ("python %d\n", tide_capture_process_get_pid (p->core));
      tell_ready (self, line);
    }
}

static TideAttachProcess *
new_image (Loader            *self,
           pid_t              pid,
           TideAttachProcess *parent,
           gint64             ts_ns)
{
  TideAttachProcess *p = tide_attach_process_new (&self->base, pid, parent, ts_ns);

  follow_python (self, p);
  return p;
}

static void
on_fork (Loader            *self,
         const TideBpfFork *ev)
{
  TideAttachProcess *parent = tide_attach_find_process (&self->base, ev->h.tgid);

  if (ev->is_thread || tide_attach_find_process (&self->base, ev->child_tgid) != NULL)
    return;
  new_image (self, ev->child_tgid, parent, ev->h.time_ns);
}

static void
on_exec (Loader              *self,
         const TideBpfHeader *h)
{
  TideAttachProcess *old = tide_attach_find_process (&self->base, h->tgid);

  if (old != NULL)
    tide_capture_process_end_as (old->core, h->time_ns, TIDE_END_EXEC);
  new_image (self, h->tgid, old, h->time_ns);
  attach_step_probes (self, h->tgid);
  attach_torch_probes (self, h->tgid);
  attach_cuda_probes (self, h->tgid);
}

static void
on_exit_event (Loader            *self,
               const TideBpfExit *ev)
{
  TideAttachProcess *p = tide_attach_find_process (&self->base, ev->h.tgid);

  /* Without the tracepoint, a victim is not known: -1. */
  if (p != NULL)
    tide_attach_process_end (p, ev->h.time_ns, ev->exit_code,
                             self->mark_victim == MARK_VICTIM_NONE ? -1 : (int) ev->oom_victim);
  if (ev->h.tgid == (guint32) self->base.options->pid)
    self->stop = TRUE;
}

/* A file mapped executable: a library loaded with dlopen, which may be
 * CUDA's (torch loads libcudart so). */
static gboolean
maps_code (const TideBpfHeader *h)
{
  const TideBpfSyscall *ev = (const TideBpfSyscall *) h;

  return h->type == TIDE_BPF_SYSCALL && ev->nr == 9 /* mmap */ && (ev->args[2] & PROT_EXEC) &&
         (gint32) ev->args[4] >= 0 && !(ev->ret < 0 && ev->ret > -4096);
}

static int
handle_event (void   *ctx,
              void   *data,
              size_t  size)
{
  Loader *self = ctx;
  const TideBpfHeader *h = data;
  TideAttachProcess *p;

  if (size < sizeof *h || h->len > size)
    return 0;
  switch (h->type)
    {
    case TIDE_BPF_FORK:
      on_fork (self, data);
      return 0;
    case TIDE_BPF_EXEC:
      on_exec (self, h);
      return 0;
    case TIDE_BPF_EXIT:
      on_exit_event (self, data);
      return 0;
    default:
      break;
    }
  p = tide_attach_find_process (&self->base, h->tgid);
  if (p == NULL)
    p = new_image (self, h->tgid, NULL, h->time_ns);
  tide_attach_process_event (p, h);
  if (maps_code (h))
    {
      attach_torch_probes (self, h->tgid);
      attach_cuda_probes (self, h->tgid);
    }
  return 0;
}

/* ---- setup ----------------------------------------------------------------- */

static gboolean
set_errno_error (GError     **error,
                 int          err,
                 const char  *what)
{
  if (err != EPERM && err != EACCES)
    return tide_capture_set_errno_error (error, err, what);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               "%s: %s (attaching needs root, or the CAP_BPF and CAP_PERFMON capabilities)",
               what, g_strerror (err));
  return FALSE;
}

/* What the kernel's oom:mark_victim passes, read from its BTF: the
 * prototype of btf_trace_mark_victim, whose first parameter is the
 * tracepoint's context. */
static MarkVictim
find_mark_victim (void)
{
  struct btf *btf = btf__load_vmlinux_btf ();
  const struct btf_type *t;
  MarkVictim found = MARK_VICTIM_NONE;
  int id;

  if (btf == NULL)
    return MARK_VICTIM_NONE;
  id = btf__find_by_name_kind (btf, "btf_trace_mark_victim", BTF_KIND_TYPEDEF);
  t = id > 0 ? btf__type_by_id (btf, id) : NULL;
  t = t != NULL ? btf__type_by_id (btf, t->type) : NULL;
  t = t != NULL && btf_is_ptr (t) ? btf__type_by_id (btf, t->type) : NULL;
  if (t != NULL && btf_is_func_proto (t) && btf_vlen (t) >= 2)
    {
      const struct btf_type *arg = btf__type_by_id (btf, btf_params (t)[1].type);

      found = arg != NULL && btf_is_ptr (arg) ? MARK_VICTIM_TASK : MARK_VICTIM_PID;
    }
  btf__free (btf);
  return found;
}

/* Quantiles of the exponential of mean TIDE_DEFAULT_SAMPLE_BYTES, at the
 * middle of TIDE_BPF_EXP_DRAWS equal slices of probability: a pick at
 * random is an exponential draw, to a slice's width, as the BPF side has
 * no logarithm. */
static gboolean
fill_exp_draws (Loader  *self,
                GError **error)
{
  for (guint32 i = 0; i < TIDE_BPF_EXP_DRAWS; i++)
    {
      gint64 draw = (gint64) (-log ((i + 0.5) / TIDE_BPF_EXP_DRAWS) * TIDE_DEFAULT_SAMPLE_BYTES);

      draw = MAX (draw, 1);
      if (bpf_map__update_elem (self->skel->maps.exp_draws, &i, sizeof i, &draw, sizeof draw,
                                BPF_ANY) != 0)
        return set_errno_error (error, errno, "cannot fill the BPF sampler's draws");
    }
  return TRUE;
}

static gboolean
open_and_load (Loader  *self,
               GError **error)
{
  const TideAttachOptions *o = self->base.options;
  int err;

  self->skel = tide_attach__open ();
  if (self->skel == NULL)
    return set_errno_error (error, errno, "cannot open the BPF programs");
  self->skel->rodata->sample_pages = self->base.sample_pages;
  self->skel->rodata->c10_sample_bytes = TIDE_DEFAULT_SAMPLE_BYTES;
  /* Which process the OOM killer chose, where the kernel says: else the
   * OOM kill counters alone tell (tide-oom-watch.h). */
  self->mark_victim = find_mark_victim ();
  self->skel->rodata->mark_victim_task = self->mark_victim == MARK_VICTIM_TASK;
  bpf_program__set_autoload (self->skel->progs.tide_oom_victim,
                             self->mark_victim != MARK_VICTIM_NONE);
  bpf_program__set_autoload (self->skel->progs.tide_malloc_enter, o->uprobes_malloc);
  bpf_program__set_autoload (self->skel->progs.tide_malloc_exit, o->uprobes_malloc);
  bpf_program__set_autoload (self->skel->progs.tide_free_enter, o->uprobes_malloc);
  err = tide_attach__load (self->skel);
  if (err != 0)
    return set_errno_error (error, -err, "cannot load the BPF programs (is this kernel built "
                            "with BTF, CONFIG_DEBUG_INFO_BTF?)");
  return fill_exp_draws (self, error);
}

static gboolean
attach_all (Loader  *self,
            GError **error)
{
  const TideAttachOptions *o = self->base.options;
  g_autofree char *libc10 = NULL;
  guint32 tgid = o->pid, one = 1;
  int err;

  /* Followed before anything is attached, so no event is missed. */
  if (bpf_map__update_elem (self->skel->maps.targets, &tgid, sizeof tgid, &one, sizeof one,
                            BPF_ANY) != 0)
    return set_errno_error (error, errno, "cannot follow the process");
  err = tide_attach__attach (self->skel);
  if (err != 0)
    return set_errno_error (error, -err, "cannot attach the BPF programs");
  if (attach_step_probes (self, o->pid) == 0 && o->step_symbol != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "--step-symbol: no binary of process %d has a function named %s", o->pid,
                   o->step_symbol);
      return FALSE;
    }
  libc10 = find_mapped (o->pid, "libc10.so");
  if (self->base.optimizer_steps && !attach_grad_mode_probe (self, o->pid, libc10))
    say_no_optimizer_steps (self, o->pid, libc10);
  attach_c10_alloc_probes (self, o->pid, libc10);
  if (o->uprobes_malloc && !attach_malloc_probes (self, o->pid, error))
    return FALSE;
  attach_cuda_probes (self, o->pid);
  self->rb = ring_buffer__new (bpf_map__fd (self->skel->maps.events), handle_event, self, NULL);
  if (self->rb == NULL)
    return set_errno_error (error, errno, "cannot open the ring buffer");
  return TRUE;
}

static void
stop_signals (sigset_t *mask)
{
  sigemptyset (mask);
  sigaddset (mask, SIGINT);
  sigaddset (mask, SIGTERM);
  sigaddset (mask, SIGHUP);
}

/* Before any thread starts: a thread created earlier would keep these
 * signals unblocked and could take one that the signalfd must see. */
static gboolean
block_stop_signals (GError **error)
{
  sigset_t mask;

  stop_signals (&mask);
  if (sigprocmask (SIG_BLOCK, &mask, NULL) != 0)
    return set_errno_error (error, errno, "cannot block signals");
  return TRUE;
}

static gboolean
open_fds (Loader  *self,
          GError **error)
{
  struct itimerspec period = { { 0, TICK_NS }, { 0, TICK_NS } };
  sigset_t mask;

  stop_signals (&mask);
  self->signal_fd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  self->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (self->signal_fd < 0 || self->timer_fd < 0 ||
      timerfd_settime (self->timer_fd, 0, &period, NULL) != 0)
    return set_errno_error (error, errno, "cannot create the signal and timer descriptors");
  /* Readable once the whole process has exited, even if its exit record
   * was lost. */
  self->pidfd = (int) syscall (SYS_pidfd_open, self->base.options->pid, 0);
  return TRUE;
}

/* ---- helper threads -------------------------------------------------------- */

/* While attached, the symbolizer and the trace writer run only on CPU time
 * that nothing else wants (SCHED_IDLE): on a machine the job keeps busy
 * they would otherwise take its cores (libdw inflating debug info), and
 * their work can wait.  The thread draining the ring buffer keeps its
 * normal priority so that records are not dropped; at detach the helpers
 * get theirs back to finish the trace. */
static void
set_helpers_idle (gboolean idle)
{
  struct sched_param param = { 0 };
  pid_t self_tid = (pid_t) syscall (SYS_gettid);
  DIR *dir = opendir ("/proc/self/task");
  struct dirent *entry;

  if (dir == NULL)
    return;
  while ((entry = readdir (dir)) != NULL)
    {
      pid_t tid = (pid_t) g_ascii_strtoll (entry->d_name, NULL, 10);

      if (tid > 0 && tid != self_tid)
        sched_setscheduler (tid, idle ? SCHED_IDLE : SCHED_OTHER, &param);
    }
  closedir (dir);
}

/* ---- loop ------------------------------------------------------------------ */

static void
on_tick (Loader *self)
{
  const TideAttachOptions *o = self->base.options;
  gint64 now = tide_capture_now_ns ();
  guint64 expirations;

  if (read (self->timer_fd, &expirations, sizeof expirations) < 0)
    return;
  /* Records that do not wake the loader (tide-attach.bpf.c) wait for this. */
  ring_buffer__consume (self->rb);
  if (self->deadline_ns > 0 && now >= self->deadline_ns)
    self->stop = TRUE;
  tide_recording_poll (self->base.recording, now);
  for (guint i = 0; i < self->base.images->len; i++)
    {
      TideAttachProcess *p = g_ptr_array_index (self->base.images, i);

      guint32 tgid = (guint32) tide_capture_process_get_pid (p->core);

      if (tide_attach_process_confirm_python (p))
        bpf_map__delete_elem (self->skel->maps.py_targets, &tgid, sizeof tgid, 0);
    }
  if (o->step_interval_ms > 0 && now >= self->next_interval_step_ns)
    {
      for (guint i = 0; i < self->base.images->len; i++)
        {
          TideAttachProcess *p = g_ptr_array_index (self->base.images, i);
          if (!tide_capture_process_has_ended (p->core))
            tide_attach_process_step (p, now, NULL);
        }
      self->next_interval_step_ns = now + (gint64) o->step_interval_ms * 1000000;
    }
}

static void
run_loop (Loader *self)
{
  while (!self->stop)
    {
      struct pollfd fds[] = {
        { ring_buffer__epoll_fd (self->rb), POLLIN, 0 },
        { self->signal_fd, POLLIN, 0 },
        { self->timer_fd, POLLIN, 0 },
        { self->pidfd, POLLIN, 0 },
      };

      if (poll (fds, self->pidfd >= 0 ? 4 : 3, 200) < 0 && errno != EINTR)
        break;
      if (fds[0].revents)
        ring_buffer__consume (self->rb);
      if (fds[1].revents)
        {
          struct signalfd_siginfo info;
          while (read (self->signal_fd, &info, sizeof info) == sizeof info)
            self->stop = TRUE;
        }
      if (fds[2].revents)
        on_tick (self);
      if (self->pidfd >= 0 && fds[3].revents)
        self->stop = TRUE;
    }
}

static guint64
read_stat (Loader *self,
           guint32 which)
{
  int n_cpus = libbpf_num_possible_cpus ();
  g_autofree guint64 *values = NULL;
  guint64 sum = 0;

  if (n_cpus <= 0)
    return 0;
  values = g_new0 (guint64, n_cpus);
  if (bpf_map__lookup_elem (self->skel->maps.stats, &which, sizeof which, values,
                            sizeof (guint64) * n_cpus, 0) != 0)
    return 0;
  for (int i = 0; i < n_cpus; i++)
    sum += values[i];
  return sum;
}

/* Detaches first, so nothing more arrives, then drains what is left. */
static void
detach (Loader *self)
{
  for (guint i = 0; i < self->links->len; i++)
    bpf_link__destroy (g_ptr_array_index (self->links, i));
  g_ptr_array_set_size (self->links, 0);
  if (self->skel != NULL)
    tide_attach__detach (self->skel);
  if (self->rb != NULL)
    ring_buffer__consume (self->rb);
}

static void
write_meta (Loader *self)
{
  g_autofree char *cmdline = tide_capture_read_cmdline (self->base.options->pid);
  guint sample_pages = self->base.sample_pages;

  tide_recording_write_run_meta (self->base.recording, "attach", cmdline,
                                 sample_pages == 1 ? 0 : sample_pages * 4096,
                                 sample_pages == 1);
  tide_recording_write_meta_int (self->base.recording, "attach_pid", self->base.options->pid);
  tide_recording_write_meta_int (self->base.recording, "sample_pages", sample_pages);
}

static gboolean
finish_trace (Loader  *self,
              GError **error)
{
  TideRecording *recording = self->base.recording;
  gint64 end_ns = tide_capture_now_ns ();
  guint64 dropped = read_stat (self, TIDE_BPF_STAT_DROPPED);
  guint64 shed = read_stat (self, TIDE_BPF_STAT_SHED);

  for (guint i = 0; i < self->base.images->len; i++)
    {
      TideAttachProcess *p = g_ptr_array_index (self->base.images, i);

      if (!tide_capture_process_has_ended (p->core))
        {
          tide_capture_process_sample_rss (p->core, end_ns, FALSE);
          tide_capture_process_end_as (p->core, end_ns, TIDE_END_RUNNING);
        }
      tide_attach_process_flush (p);
    }
  tide_recording_set_total_dropped (recording, (gint64) (dropped + shed));
  tide_recording_write_meta_int (recording, "faults_shed", (gint64) shed);
  tide_recording_write_meta_int (recording, "page_faults",
                                 (gint64) read_stat (self, TIDE_BPF_STAT_FAULTS));
  tide_recording_write_meta_int (recording, "unwound_stacks", self->base.n_unwound);
  tide_recording_write_meta_int (recording, "unwind_ns", self->base.unwind_ns);
  /* Which host memory PyTorch's allocator measured (report --suspects). */
  tide_recording_write_meta_int (recording, "c10_probes", self->n_c10_probes);
  if (dropped > 0 && !self->base.options->quiet)
    g_printerr ("tidemark: %" G_GUINT64_FORMAT " records were dropped because the ring buffer "
                "was full; sizes are low by that much\n", dropped);
  if (shed > 0 && !self->base.options->quiet)
    g_printerr ("tidemark: %" G_GUINT64_FORMAT " sampled page faults were left out while the ring "
                "buffer was half full; sizes are low by that much\n", shed);
  return tide_recording_finish (recording, end_ns, error);
}

static void
loader_clear (Loader *self)
{
  if (self->links != NULL)
    detach (self);
  g_clear_pointer (&self->rb, ring_buffer__free);
  g_clear_pointer (&self->skel, tide_attach__destroy);
  g_clear_pointer (&self->links, g_ptr_array_unref);
  g_clear_pointer (&self->probed_paths, g_hash_table_unref);
  g_clear_pointer (&self->base.images, g_ptr_array_unref);
  g_clear_pointer (&self->base.recording, tide_recording_free);
  tide_capture_close_fd (&self->signal_fd);
  tide_capture_close_fd (&self->timer_fd);
  tide_capture_close_fd (&self->pidfd);
}

/* What measures the job, as far as it is known: a library loaded later
 * (torch) adds its probes. */
static char *
describe_mechanisms (Loader *self)
{
  return g_strdup_printf ("1 page in %u sampled%s%s%s%s", self->base.sample_pages,
                          self->n_c10_probes ? ", PyTorch's CPU allocator" : "",
                          self->base.options->uprobes_malloc ? ", malloc uprobes" : "",
                          self->n_step_probes ? ", step uprobe" : "",
                          self->n_grad_probes ? ", optimizer steps" : "");
}

static void
announce (Loader *self)
{
  const TideAttachOptions *o = self->base.options;
  g_autofree char *mechanisms = describe_mechanisms (self);

  if (!o->quiet)
    g_printerr ("tidemark: attached to process %d (%s); Ctrl+C detaches\n", o->pid, mechanisms);
  tell_ready (self, "attached\n");
  self->announced = TRUE;
}

int
tide_attach_run (const TideAttachOptions  *options,
                 GError                  **error)
{
  Loader self = { .signal_fd = -1, .timer_fd = -1, .pidfd = -1 };
  gboolean created = FALSE;
  g_autofree char *early_end = NULL;
  g_autofree char *memory = NULL;
  g_autofree char *mechanisms = NULL;
  gint64 start_ns;
  int status = -1;

  self.base = (TideAttach) {
    .options = options,
    .sample_pages = options->sample_pages ? options->sample_pages
                                          : TIDE_ATTACH_DEFAULT_SAMPLE_PAGES,
    /* Steps asked for otherwise are the only steps. */
    .optimizer_steps = options->step_symbol == NULL && options->step_interval_ms <= 0,
  };
  self.base.images = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_attach_process_free);
  self.links = g_ptr_array_new ();
  self.probed_paths = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  verbose_libbpf = options->verbose;
  libbpf_set_print (libbpf_print);

  if (!tide_attach_check_privileges (options->pid, error))
    goto out;
  if (options->uprobes_malloc && !options->quiet)
    g_printerr ("tidemark: warning: --uprobes malloc puts a uprobe (a few microseconds) on every "
                "malloc and free of the process: expect it to run much slower\n");

  if (!block_stop_signals (error))
    goto out;
  if (options->ready_fd >= 0)
    signal (SIGPIPE, SIG_IGN);
  self.base.recording = tide_recording_new (options->output, options->symbol_cache_dir,
                                            error);
  if (self.base.recording == NULL)
    goto out;
  created = TRUE;
  if (!open_fds (&self, error) || !open_and_load (&self, error))
    goto out;

  /* Loading the programs took a while: the trace starts here. */
  start_ns = tide_capture_now_ns ();
  tide_recording_set_start_ns (self.base.recording, start_ns);
  write_meta (&self);
  new_image (&self, options->pid, NULL, start_ns);
  if (!attach_all (&self, error))
    goto out;
  tide_recording_open_nvml (self.base.recording);
  self.deadline_ns = options->duration_s > 0
                     ? start_ns + (gint64) (options->duration_s * 1e9) : 0;
  self.next_interval_step_ns = start_ns + (gint64) options->step_interval_ms * 1000000;
  set_helpers_idle (TRUE);
  announce (&self);

  run_loop (&self);
  detach (&self);
  set_helpers_idle (FALSE);
  if (!finish_trace (&self, error))
    goto out;
  status = 0;
  early_end = tide_recording_describe_early_end (self.base.recording);
  if (early_end != NULL)
    g_printerr ("tidemark: %s\n", early_end);
  memory = tide_recording_describe_peak (self.base.recording, options->output);
  mechanisms = describe_mechanisms (&self);
  if (!options->quiet)
    {
      g_autofree char *counts = tide_recording_describe_counts (self.base.recording);

      g_printerr ("tidemark: detached from process %d (%s); trace %s: %s, %s\n", options->pid,
                  mechanisms, options->output, counts, memory);
    }

out:
  loader_clear (&self);
  if (status < 0 && created)
    tide_capture_remove_trace (options->output);
  return status;
}
