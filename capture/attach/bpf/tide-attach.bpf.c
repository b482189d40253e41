/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-attach.bpf.c: the kernel side of `tidemark attach`.
 *
 * Every program first asks whether the current process is followed (the
 * `targets` map, filled by the loader and by fork).  Page faults are sampled
 * by page, stratified: of every aligned block of sample_pages pages exactly
 * one page, chosen by a hash of the block, is sampled, so a run of touched
 * pages is counted within one block whatever its stride.  A sampled fault,
 * like an allocation seen by a uprobe, carries the user registers and a
 * bounded copy of the top of the user stack (TideBpfUserStack), which the
 * recorder unwinds with the code's call frame information.
 *
 * Only BTF-typed tracepoints (tp_btf) and uprobes are used, so nothing here
 * needs tracefs mounted.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tide-attach-event.h"
#include "tide-kinds.h"

char LICENSE[] SEC ("license") = "GPL";

/* Set by the loader before load (rodata). */
const volatile __u32 sample_pages = 16;        /* 1 in N pages carries a stack */
const volatile __u64 rss_granularity = 1 << 20; /* report RSS moves of at least this */
const volatile __u64 rss_interval_ns = 20000000;
const volatile __u64 c10_sample_bytes = 65536;  /* mean spacing of PyTorch's sampled bytes */

/* x86_64 syscall numbers */
#define NR_MMAP     9
#define NR_MUNMAP   11
#define NR_BRK      12
#define NR_MREMAP   25
#define NR_MADVISE  28

#define PROT_EXEC_BIT 4

#define USER_ADDR_LIMIT 0x0000800000000000ULL

/* Room for about 1500 stack samples (TideBpfUserStack) between two drains. */
#define RING_BYTES (32 << 20)

struct
{
  __uint (type, BPF_MAP_TYPE_RINGBUF);
  __uint (max_entries, RING_BYTES);
} events SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, TIDE_BPF_MAX_TARGETS);
  __type (key, __u32);     /* tgid */
  __type (value, __u32);   /* 1 */
} targets SEC (".maps");

typedef struct
{
  __u32 nr;
  __u32 reserved;
  __u64 old_brk;
} SyscallEntry;

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 16384);
  __type (key, __u32);     /* tid */
  __type (value, SyscallEntry);
} in_syscall SEC (".maps");

typedef struct
{
  __u64 rss_bytes;
  __u64 time_ns;
} RssState;

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, TIDE_BPF_MAX_TARGETS);
  __type (key, __u32);     /* tgid */
  __type (value, RssState);
} last_rss SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 16384);
  __type (key, __u32);     /* tid */
  __type (value, __u64);   /* size passed to malloc */
} malloc_size SEC (".maps");

/* A CUDA call under way on a thread: what its return probe needs. */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 16384);
  __type (key, __u32);     /* tid */
  __type (value, __u64);   /* size passed to c10::alloc_cpu */
} c10_size SEC (".maps");

/* Bytes to the next sample point of PyTorch's CPU allocations, per CPU:
 * the points of any share of a Poisson process's stream are one too. */
struct
{
  __uint (type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint (max_entries, 1);
  __type (key, __u32);
  __type (value, __s64);
} c10_countdown SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_ARRAY);
  __uint (max_entries, TIDE_BPF_EXP_DRAWS);
  __type (key, __u32);
  __type (value, __s64);
} exp_draws SEC (".maps");

typedef struct
{
  __u64 out;        /* allocations: where the pointer is returned */
  __u64 size;
  __u64 start_ns;
  __u32 cookie;
  __u32 direction;
} CudaCall;

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 16384);
  __type (key, __u32);     /* tid */
  __type (value, CudaCall);
} cuda_call SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 16384);
  __type (key, __u32);     /* tid */
  __type (value, __s32);   /* cudaSetDevice's device; 0 when never set */
} cuda_device SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint (max_entries, TIDE_BPF_N_STATS);
  __type (key, __u32);
  __type (value, __u64);
} stats SEC (".maps");

/* The thread whose user stack this CPU is copying, if any.  A read of the
 * copy that meets a page that is not there (past the top of the stack)
 * faults in the kernel, which fires page_fault_kernel inside our own
 * program: that fault is ours, not the process's. */
struct
{
  __uint (type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint (max_entries, 1);
  __type (key, __u32);
  __type (value, __u32);   /* tid, 0: none */
} copying SEC (".maps");

/* The Python interpreter of a followed process, where it has one that the
 * loader knows how to read (TideBpfPyTarget). */
struct
{
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, TIDE_BPF_MAX_TARGETS);
  __type (key, __u32);     /* tgid */
  __type (value, TideBpfPyTarget);
} py_targets SEC (".maps");

/* The PyThreadState of a thread, as the last walk of the thread list found
 * it; checked at each use, since thread states come and go. */
struct
{
  __uint (type, BPF_MAP_TYPE_LRU_HASH);
  __uint (max_entries, 16384);
  __type (key, __u32);     /* tid */
  __type (value, __u64);   /* PyThreadState* */
} py_tstates SEC (".maps");

static __always_inline void
count_stat (__u32 which)
{
  __u64 *value = bpf_map_lookup_elem (&stats, &which);

  if (value)
    *value += 1;
}

static __always_inline int
is_followed (__u32 tgid)
{
  return bpf_map_lookup_elem (&targets, &tgid) != NULL;
}

static __always_inline void *
reserve (__u32 size,
         __u16 type)
{
  __u64 id = bpf_get_current_pid_tgid ();
  TideBpfHeader *h = bpf_ringbuf_reserve (&events, size, 0);

  if (!h)
    {
      count_stat (TIDE_BPF_STAT_DROPPED);
      return NULL;
    }
  h->type = type;
  h->len = size;
  h->tgid = id >> 32;
  h->tid = (__u32) id;
  h->reserved = 0;
  h->time_ns = bpf_ktime_get_ns ();
  return h;
}

/* Waking the loader for each record costs the job a context switch on a
 * busy machine: frequent records (faults, system calls, RSS, malloc) wake
 * it only once WAKE_BYTES are waiting, and the loader also drains the ring
 * on its 100 ms tick.  Rare records that it must act on at once (a step,
 * whose RSS it reads from /proc; fork, exec, exit) wake it. */
#define WAKE_BYTES (256 << 10)

static __always_inline void
submit_lazy (void *ev)
{
  __u64 flags = bpf_ringbuf_query (&events, BPF_RB_AVAIL_DATA) >= WAKE_BYTES
                ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

  bpf_ringbuf_submit (ev, flags);
}

static __always_inline void
submit_now (void *ev)
{
  bpf_ringbuf_submit (ev, BPF_RB_FORCE_WAKEUP);
}

static __always_inline __u64
mix64 (__u64 x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* One page per aligned block of sample_pages pages. */
static __always_inline int
page_is_sampled (__u64 addr)
{
  __u64 n = sample_pages;
  __u64 page = addr >> 12;

  if (n <= 1)
    return 1;
  return page % n == mix64 (page / n) % n;
}

/* ---- Python frames -------------------------------------------------------
 *
 * A thread's CPython frames are found from its thread state: the
 * interpreter's list of thread states is walked (at most PY_MAX_THREADS)
 * for the one that names this thread, then the frame chain from the
 * thread's current frame (at most TIDE_BPF_PY_FRAMES frames).  One walker
 * serves every version; TideBpfPyTarget says where the fields are and how
 * the frames chain (its layout flags).  Each frame is read in one piece
 * (a window up to its last field that is read); every read is a
 * bpf_probe_read_user, so a chain that changes under us or memory that is
 * gone ends the walk early, never worse. */

#define PY_MAX_THREADS    64
#define PY_OBJECT_WINDOW  128   /* PyFrameObject up to f_lasti, included */
#define PY_WINDOW_WORDS   16
#define PY_OWNED_BY_CSTACK 3    /* _PyInterpreterFrame.owner of a shim frame */

static __always_inline __u64
read_user_u64 (__u64 addr)
{
  __u64 value = 0;

  if (bpf_probe_read_user (&value, sizeof value, (const void *) addr) != 0)
    return 0;
  return value;
}

/* How a thread state names its thread: by the native thread id or,
 * before 3.11, by pthread_self (), which glibc on x86_64 makes the
 * thread's fs base. */
static __always_inline __u64
py_thread_id (const TideBpfPyTarget *t,
              __u64                  pid_tgid)
{
  struct task_struct *task;

  if (!(t->layout & TIDE_BPF_PY_PTHREAD_ID))
    return (__u32) pid_tgid;
  task = bpf_get_current_task_btf ();
  return BPF_CORE_READ (task, thread.fsbase);
}

static __always_inline __u64
py_find_tstate (const TideBpfPyTarget *t,
                __u64                  pid_tgid)
{
  __u32 tid = (__u32) pid_tgid;
  __u64 *cached = bpf_map_lookup_elem (&py_tstates, &tid);
  __u64 want = py_thread_id (t, pid_tgid);
  __u64 interp, tstate;

  if (cached && *cached && read_user_u64 (*cached + t->tstate_thread_id) == want)
    return *cached;
  interp = read_user_u64 (t->runtime + t->runtime_interp_head);
  if (interp == 0)
    return 0;
  tstate = read_user_u64 (interp + t->interp_tstate_head);
  for (int i = 0; i < PY_MAX_THREADS && tstate != 0; i++)
    {
      if (read_user_u64 (tstate + t->tstate_thread_id) == want)
        {
          bpf_map_update_elem (&py_tstates, &tid, &tstate, BPF_ANY);
          return tstate;
        }
      tstate = read_user_u64 (tstate + t->tstate_next);
    }
  return 0;
}

/* The thread's innermost frame: tstate->frame (3.8-3.10),
 * tstate->cframe->current_frame (3.11, 3.12), tstate->current_frame
 * (3.13). */
static __always_inline __u64
py_current_frame (const TideBpfPyTarget *t,
                  __u64                  tstate)
{
  __u64 frame = read_user_u64 (tstate + t->tstate_frame);

  if ((t->layout & TIDE_BPF_PY_CFRAME) && frame != 0)
    frame = read_user_u64 (frame + t->cframe_current);
  return frame;
}

/* The word of a frame's window at byte @offset (8-aligned pointers). */
static __always_inline __u64
window_word (const __u64 *window,
             __u16        offset)
{
  return window[(offset >> 3) & (PY_WINDOW_WORDS - 1)];
}

static __always_inline __u32
window_u32 (const __u64 *window,
            __u16        offset)
{
  return (__u32) (window_word (window, offset) >> ((offset & 4) * 8));
}

static __always_inline __u32
window_byte (const __u64 *window,
             __u16        offset)
{
  return (window_word (window, offset) >> ((offset & 7) * 8)) & 0xff;
}

/* The byte offset in @code of the instruction a frame runs: from the
 * instruction pointer (3.11+), or f_lasti (3.8-3.10: bytes, or code
 * units in 3.10), -1 or -2 before the first. */
static __always_inline __s64
py_frame_instr (const TideBpfPyTarget *t,
                const __u64           *window,
                __u64                  code)
{
  __s64 lasti;

  if (!(t->layout & TIDE_BPF_PY_FRAME_OBJECTS))
    return (__s64) (window_word (window, t->frame_instr) - code - t->code_adaptive);
  lasti = (__s32) window_u32 (window, t->frame_instr);
  return (t->layout & TIDE_BPF_PY_LASTI_UNITS) ? lasti * 2 : lasti;
}

/* TIDE_BPF_PY_ENTRY for the first frame of a C-level evaluation (every
 * frame object is one), TIDE_BPF_PY_SHIM for the frame that 3.12+ pushes
 * below it. */
static __always_inline __u32
py_frame_flags (const TideBpfPyTarget *t,
                const __u64           *window)
{
  if (t->layout & TIDE_BPF_PY_FRAME_OBJECTS)
    return TIDE_BPF_PY_ENTRY;
  if (t->layout & TIDE_BPF_PY_OWNER)
    return window_byte (window, t->frame_entry) == PY_OWNED_BY_CSTACK ? TIDE_BPF_PY_SHIM : 0;
  return window_byte (window, t->frame_entry) ? TIDE_BPF_PY_ENTRY : 0;
}

/* The innermost @max_frames (a constant) Python frames of this thread into
 * @py; *@n_py and *@py_state say how many and how the walk ended. */
static __always_inline void
copy_python_frames (TideBpfPyFrame *py,
                    __u32          *n_py,
                    __u32          *py_state,
                    const int       max_frames)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid ();
  __u32 tgid = pid_tgid >> 32;
  const TideBpfPyTarget *t = bpf_map_lookup_elem (&py_targets, &tgid);
  __u64 window[PY_WINDOW_WORDS] = { 0 };
  __u64 tstate, frame;
  __u32 n = 0;

  *n_py = 0;
  *py_state = TIDE_BPF_PY_NONE;
  if (t == NULL || (tstate = py_find_tstate (t, pid_tgid)) == 0)
    return;
  frame = py_current_frame (t, tstate);
  *py_state = TIDE_BPF_PY_TRUNCATED;
  for (int i = 0; i < max_frames; i++)
    {
      TideBpfPyFrame *out = &py[i];
      __u64 code;
      __s64 instr;
      long err;

      if (frame == 0)
        {
          *py_state = TIDE_BPF_PY_WHOLE;
          break;
        }
      if (t->layout & TIDE_BPF_PY_FRAME_OBJECTS)
        err = bpf_probe_read_user (window, PY_OBJECT_WINDOW, (const void *) frame);
      else
        err = bpf_probe_read_user (window, TIDE_BPF_PY_FRAME_WINDOW, (const void *) frame);
      if (err != 0)
        break;
      code = window_word (window, t->frame_code);
      instr = py_frame_instr (t, window, code);
      out->code = code;
      /* Past the window in a frame object: one more read. */
      out->first_local = (t->layout & TIDE_BPF_PY_FRAME_OBJECTS)
                         ? read_user_u64 (frame + t->frame_first_local)
                         : window_word (window, t->frame_first_local);
      out->instr = instr >= -2 && instr < (1 << 30) ? (__s32) instr : -1;
      out->flags = py_frame_flags (t, window);
      frame = window_word (window, t->frame_previous);
      n++;
    }
  *n_py = n;
}

static __always_inline void
copy_python_stack (TideBpfUserStack *stack)
{
  copy_python_frames (stack->py, &stack->n_py, &stack->py_state, TIDE_BPF_PY_FRAMES);
}

/* The user registers of @regs and the stack above their sp, page by page
 * from sp's page, up to the top of the main thread's stack or the first
 * page that cannot be read without a fault (past the top of another
 * thread's stack, or swapped out).  Bounded: at most
 * TIDE_BPF_STACK_PAGES pages, into the ring buffer record itself, never
 * onto the 512-byte BPF stack. */
static __always_inline void
copy_user_stack (TideBpfUserStack *stack,
                 struct pt_regs   *regs)
{
  struct task_struct *task = bpf_get_current_task_btf ();
  struct pt_regs r;
  __u32 zero = 0, *copier;
  __u64 page, end, top;

  stack->n_bytes = 0;
  stack->reserved = 0;
  stack->start = 0;
  stack->n_py = 0;
  stack->py_state = TIDE_BPF_PY_NONE;
  if (bpf_probe_read_kernel (&r, sizeof r, regs) != 0)
    {
      __builtin_memset (stack->regs, 0, sizeof stack->regs);
      return;
    }
  stack->regs[TIDE_BPF_REG_AX] = r.ax;
  stack->regs[TIDE_BPF_REG_DX] = r.dx;
  stack->regs[TIDE_BPF_REG_CX] = r.cx;
  stack->regs[TIDE_BPF_REG_BX] = r.bx;
  stack->regs[TIDE_BPF_REG_SI] = r.si;
  stack->regs[TIDE_BPF_REG_DI] = r.di;
  stack->regs[TIDE_BPF_REG_BP] = r.bp;
  stack->regs[TIDE_BPF_REG_SP] = r.sp;
  stack->regs[TIDE_BPF_REG_R8] = r.r8;
  stack->regs[TIDE_BPF_REG_R9] = r.r9;
  stack->regs[TIDE_BPF_REG_R10] = r.r10;
  stack->regs[TIDE_BPF_REG_R11] = r.r11;
  stack->regs[TIDE_BPF_REG_R12] = r.r12;
  stack->regs[TIDE_BPF_REG_R13] = r.r13;
  stack->regs[TIDE_BPF_REG_R14] = r.r14;
  stack->regs[TIDE_BPF_REG_R15] = r.r15;
  stack->regs[TIDE_BPF_REG_IP] = r.ip;
  if (r.sp == 0 || r.sp >= USER_ADDR_LIMIT)
    return;
  page = r.sp & ~(__u64) (TIDE_BPF_STACK_PAGE - 1);
  stack->start = page;
  /* The main thread's stack ends a little above where it started, in the
   * page of argv: reading past it would fault in the kernel (a costly
   * exception), so the copy stops there. */
  end = page + TIDE_BPF_STACK_BYTES;
  top = BPF_CORE_READ (task, mm, start_stack);
  if (top >= r.sp && top < end)
    end = (top | (TIDE_BPF_STACK_PAGE - 1)) + 1;
  copier = bpf_map_lookup_elem (&copying, &zero);
  if (copier)
    *copier = (__u32) bpf_get_current_pid_tgid ();
#pragma unroll
  for (int i = 0; i < TIDE_BPF_STACK_PAGES; i++)
    {
      if (page + i * TIDE_BPF_STACK_PAGE >= end ||
          bpf_probe_read_user (stack->data + i * TIDE_BPF_STACK_PAGE, TIDE_BPF_STACK_PAGE,
                               (const void *) (page + i * TIDE_BPF_STACK_PAGE)) != 0)
        break;
      stack->n_bytes += TIDE_BPF_STACK_PAGE;
    }
  copy_python_stack (stack);
  if (copier)
    *copier = 0;
}

static __always_inline int
is_our_copy_fault (void)
{
  __u32 zero = 0;
  __u32 *copier = bpf_map_lookup_elem (&copying, &zero);

  return copier && *copier != 0 && *copier == (__u32) bpf_get_current_pid_tgid ();
}

static __always_inline int
handle_fault (void   *ctx,
              __u64   addr,
              __u32   flags)
{
  __u32 tgid = bpf_get_current_pid_tgid () >> 32;
  TideBpfFault *ev;

  if (!is_followed (tgid))
    return 0;
  count_stat (TIDE_BPF_STAT_FAULTS);
  if (addr >= USER_ADDR_LIMIT || !page_is_sampled (addr))
    return 0;
  count_stat (TIDE_BPF_STAT_SAMPLED);
  /* Sampled faults give way to the records that keep the trace whole
   * (steps, frees, unmaps, PyTorch's blocks): when the recorder falls
   * behind (a job importing torch touches a lot of pages at once) they
   * are left out first, with half of the buffer still free for the
   * others, which a slow loader under load may take seconds to reach. */
  if (bpf_ringbuf_query (&events, BPF_RB_AVAIL_DATA) > RING_BYTES / 2)
    {
      count_stat (TIDE_BPF_STAT_SHED);
      return 0;
    }
  ev = reserve (sizeof *ev, TIDE_BPF_FAULT);
  if (!ev)
    return 0;
  ev->addr = addr;
  ev->flags = flags;
  ev->reserved2 = 0;
  /* The saved user registers, also when the kernel faulted for the
   * process (then the tracepoint's own are the kernel's). */
  copy_user_stack (&ev->stack, (struct pt_regs *) bpf_task_pt_regs (bpf_get_current_task_btf ()));
  submit_lazy (ev);
  return 0;
}

SEC ("tp_btf/page_fault_user")
int
BPF_PROG (tide_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
  return handle_fault (ctx, address, 0);
}

/* The kernel touching a user page for the process (read() into a fresh
 * buffer): the user stack is the one that made the system call. */
SEC ("tp_btf/page_fault_kernel")
int
BPF_PROG (tide_fault_kernel, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
  if (is_our_copy_fault ())
    return 0;
  return handle_fault (ctx, address, TIDE_BPF_FAULT_KERNEL);
}

static __always_inline int
is_memory_syscall (long nr)
{
  return nr == NR_MMAP || nr == NR_MUNMAP || nr == NR_BRK || nr == NR_MREMAP ||
         nr == NR_MADVISE;
}

SEC ("tp_btf/sys_enter")
int
BPF_PROG (tide_sys_enter, struct pt_regs *regs, long id)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid ();
  __u32 tid = (__u32) pid_tgid;
  SyscallEntry entry = { .nr = (__u32) id };

  if (!is_memory_syscall (id) || !is_followed (pid_tgid >> 32))
    return 0;
  if (id == NR_BRK)
    {
      struct task_struct *task = bpf_get_current_task_btf ();
      entry.old_brk = BPF_CORE_READ (task, mm, brk);
    }
  bpf_map_update_elem (&in_syscall, &tid, &entry, BPF_ANY);
  return 0;
}

/* The saved user registers still hold the arguments at exit (only ax is
 * replaced by the return value), so the record is made here, once the
 * call has done its work. */
SEC ("tp_btf/sys_exit")
int
BPF_PROG (tide_sys_exit, struct pt_regs *regs, long ret)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid ();
  __u32 tid = (__u32) pid_tgid;
  SyscallEntry *entry;
  TideBpfSyscall *ev;

  if (!is_followed (pid_tgid >> 32))
    return 0;
  entry = bpf_map_lookup_elem (&in_syscall, &tid);
  if (!entry)
    return 0;
  ev = reserve (sizeof *ev, TIDE_BPF_SYSCALL);
  if (ev)
    {
      ev->nr = entry->nr;
      ev->reserved = 0;
      ev->args[0] = BPF_CORE_READ (regs, di);
      ev->args[1] = BPF_CORE_READ (regs, si);
      ev->args[2] = BPF_CORE_READ (regs, dx);
      ev->args[3] = BPF_CORE_READ (regs, r10);
      ev->args[4] = BPF_CORE_READ (regs, r8);
      ev->ret = ret;
      ev->old_brk = entry->old_brk;
      /* Code mapped from a file (dlopen): the loader looks at once for
       * CUDA libraries to probe, before their first call. */
      if (entry->nr == NR_MMAP && (ev->args[2] & PROT_EXEC_BIT) && (__s32) ev->args[4] >= 0)
        submit_now (ev);
      else
        submit_lazy (ev);
    }
  bpf_map_delete_elem (&in_syscall, &tid);
  return 0;
}

/* The resident set from the mm's counters (anon + file + shmem), recorded
 * when it moved by rss_granularity or rss_interval_ns passed. */
SEC ("tp_btf/rss_stat")
int
BPF_PROG (tide_rss_stat, struct mm_struct *mm, int member)
{
  struct task_struct *task = bpf_get_current_task_btf ();
  __u32 tgid = bpf_get_current_pid_tgid () >> 32;
  RssState *last, fresh = { 0 };
  TideBpfRss *ev;
  __s64 file, anon, shmem;
  __u64 rss, now, delta;

  if (task->mm != mm || !is_followed (tgid))
    return 0;
  file = BPF_CORE_READ (mm, rss_stat[0].count);
  anon = BPF_CORE_READ (mm, rss_stat[1].count);
  shmem = BPF_CORE_READ (mm, rss_stat[3].count);
  rss = (__u64) ((file > 0 ? file : 0) + (anon > 0 ? anon : 0) + (shmem > 0 ? shmem : 0)) << 12;
  now = bpf_ktime_get_ns ();

  last = bpf_map_lookup_elem (&last_rss, &tgid);
  if (last)
    {
      delta = rss > last->rss_bytes ? rss - last->rss_bytes : last->rss_bytes - rss;
      if (delta == 0 || (delta < rss_granularity && now - last->time_ns < rss_interval_ns))
        return 0;
      last->rss_bytes = rss;
      last->time_ns = now;
    }
  else
    {
      fresh.rss_bytes = rss;
      fresh.time_ns = now;
      bpf_map_update_elem (&last_rss, &tgid, &fresh, BPF_ANY);
    }
  ev = reserve (sizeof *ev, TIDE_BPF_RSS);
  if (!ev)
    return 0;
  ev->rss_bytes = rss;
  submit_lazy (ev);
  return 0;
}

SEC ("tp_btf/sched_process_fork")
int
BPF_PROG (tide_fork, struct task_struct *parent, struct task_struct *child)
{
  __u32 parent_tgid = parent->tgid;
  __u32 child_tgid = child->tgid;
  __u32 one = 1;
  TideBpfFork *ev;

  if (!is_followed (parent_tgid))
    return 0;
  /* Follow the child at once, before it can fault; a fork has its
   * parent's interpreter where its parent had it. */
  if (child_tgid != parent_tgid)
    {
      const TideBpfPyTarget *py = bpf_map_lookup_elem (&py_targets, &parent_tgid);

      bpf_map_update_elem (&targets, &child_tgid, &one, BPF_ANY);
      if (py)
        bpf_map_update_elem (&py_targets, &child_tgid, py, BPF_ANY);
    }
  ev = reserve (sizeof *ev, TIDE_BPF_FORK);
  if (!ev)
    return 0;
  ev->child_tgid = child_tgid;
  ev->child_tid = child->pid;
  ev->is_thread = child_tgid == parent_tgid;
  ev->reserved = 0;
  /* The loader only acts on new processes. */
  if (ev->is_thread)
    submit_lazy (ev);
  else
    submit_now (ev);
  return 0;
}

SEC ("tp_btf/sched_process_exec")
int
BPF_PROG (tide_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
  __u32 tgid = task->tgid;
  TideBpfHeader *ev;

  if (!is_followed (tgid))
    return 0;
  /* The new image's interpreter, if any, is the loader's to find. */
  bpf_map_delete_elem (&py_targets, &tgid);
  ev = reserve (sizeof *ev, TIDE_BPF_EXEC);
  if (ev)
    submit_now (ev);
  return 0;
}

/* oom:mark_victim: the OOM killer chose this thread's process.  Linux
 * 6.1's tracepoint passes the thread's pid, later ones its task; the
 * loader says which (mark_victim_task).  Kept by thread id, any process's
 * (a rare event; the LRU map forgets the ones nobody follows), until the
 * thread exits. */
const volatile bool mark_victim_task = true;

struct
{
  __uint (type, BPF_MAP_TYPE_LRU_HASH);
  __uint (max_entries, 256);
  __type (key, __u32);     /* tid the OOM killer chose */
  __type (value, __u32);   /* 1 */
} oom_victims SEC (".maps");

struct
{
  __uint (type, BPF_MAP_TYPE_LRU_HASH);
  __uint (max_entries, TIDE_BPF_MAX_TARGETS);
  __type (key, __u32);     /* tgid of a followed process whose thread was chosen */
  __type (value, __u32);   /* 1 */
} oom_groups SEC (".maps");

SEC ("tp_btf/mark_victim")
int
tide_oom_victim (__u64 *ctx)
{
  __u32 tid, one = 1;

  if (mark_victim_task)
    tid = BPF_CORE_READ ((struct task_struct *) ctx[0], pid);
  else
    tid = (__u32) ctx[0];
  bpf_map_update_elem (&oom_victims, &tid, &one, BPF_ANY);
  return 0;
}

SEC ("tp_btf/sched_process_exit")
int
BPF_PROG (tide_exit, struct task_struct *task)
{
  __u32 tgid = task->tgid, tid = task->pid, one = 1;
  TideBpfExit *ev;

  if (!is_followed (tgid))
    return 0;
  /* Each thread's exit, the victim's too, comes before the group's last. */
  if (bpf_map_lookup_elem (&oom_victims, &tid) != NULL)
    {
      bpf_map_delete_elem (&oom_victims, &tid);
      bpf_map_update_elem (&oom_groups, &tgid, &one, BPF_ANY);
    }
  /* signal->live drops to 0 before this tracepoint when the group dies. */
  if (BPF_CORE_READ (task, signal, live.counter) != 0)
    return 0;
  bpf_map_delete_elem (&targets, &tgid);
  bpf_map_delete_elem (&last_rss, &tgid);
  bpf_map_delete_elem (&py_targets, &tgid);
  ev = reserve (sizeof *ev, TIDE_BPF_EXIT);
  if (!ev)
    return 0;
  ev->exit_code = BPF_CORE_READ (task, signal, group_exit_code);
  if (ev->exit_code == 0)
    ev->exit_code = task->exit_code;
  ev->oom_victim = bpf_map_lookup_elem (&oom_groups, &tgid) != NULL;
  bpf_map_delete_elem (&oom_groups, &tgid);
  submit_now (ev);
  return 0;
}

/* Attached by the loader to tidemark_attach_step_marker (tidemark.h) or to
 * the function named by --step-symbol, in every process that maps the
 * binary; only followed processes make a record. */
SEC ("uprobe")
int
BPF_KPROBE (tide_step, const char *label)
{
  TideBpfStep *ev;

  if (!is_followed (bpf_get_current_pid_tgid () >> 32))
    return 0;
  ev = reserve (sizeof *ev, TIDE_BPF_STEP);
  if (!ev)
    return 0;
  ev->label[0] = '\0';
  if (label)
    bpf_probe_read_user_str (ev->label, sizeof ev->label, label);
  submit_now (ev);
  return 0;
}

/* Attached by the loader to c10::GradMode::set_enabled in PyTorch's libc10
 * of the followed process: torch.optim's optimizers switch gradients off
 * and back on around every step(), as `with torch.no_grad():` blocks do
 * too.  The record carries the innermost Python frames, which tell the
 * recorder which of them is an optimizer's step, and whose optimizer. */
SEC ("uprobe")
int
BPF_KPROBE (tide_grad_mode, __u64 enabled)
{
  TideBpfGradMode *ev;

  if (!is_followed (bpf_get_current_pid_tgid () >> 32))
    return 0;
  ev = reserve (sizeof *ev, TIDE_BPF_GRAD_MODE);
  if (!ev)
    return 0;
  /* A C++ bool: only the low byte of its register is set. */
  ev->enabled = (__u8) enabled;
  ev->reserved = 0;
  copy_python_frames (ev->py, &ev->n_py, &ev->py_state, TIDE_BPF_GRAD_MODE_FRAMES);
  for (int i = 0; i < TIDE_BPF_GRAD_MODE_FRAMES; i++)
    ev->first_arg[i] = i < ev->n_py && ev->py[i].first_local != 0
                       ? read_user_u64 (ev->py[i].first_local + TIDE_BPF_PY_TUPLE_ITEMS)
                       : 0;
  /* Only a switch back on can end a step, whose RSS the loader reads at
   * once; the others wait for its tick. */
  if (ev->enabled)
    submit_now (ev);
  else
    submit_lazy (ev);
  return 0;
}

SEC ("uprobe")
int
BPF_KPROBE (tide_malloc_enter, __u64 size)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid ();
  __u32 tid = (__u32) pid_tgid;

  if (is_followed (pid_tgid >> 32))
    bpf_map_update_elem (&malloc_size, &tid, &size, BPF_ANY);
  return 0;
}

SEC ("uretprobe")
int
BPF_KRETPROBE (tide_malloc_exit, void *ret)
{
  __u32 tid = (__u32) bpf_get_current_pid_tgid ();
  __u64 *size = bpf_map_lookup_elem (&malloc_size, &tid);
  TideBpfMalloc *ev;

  if (!size)
    return 0;
  if (ret && (ev = reserve (sizeof *ev, TIDE_BPF_MALLOC)))
    {
      ev->addr = (__u64) ret;
      ev->size = *size;
      /* At the return the registers are the caller's, after the call. */
      copy_user_stack (&ev->stack, ctx);
      submit_lazy (ev);
    }
  bpf_map_delete_elem (&malloc_size, &tid);
  return 0;
}

SEC ("uprobe")
int
BPF_KPROBE (tide_free_enter, void *ptr)
{
  TideBpfFree *ev;

  if (!ptr || !is_followed (bpf_get_current_pid_tgid () >> 32))
    return 0;
  ev = reserve (sizeof *ev, TIDE_BPF_FREE);
  if (!ev)
    return 0;
  ev->addr = (__u64) ptr;
  submit_lazy (ev);
  return 0;
}

/* ---- PyTorch's CPU allocator ---------------------------------------------------
 *
 * Attached by the loader to c10::alloc_cpu and c10::free_cpu in the
 * followed process's libc10: every CPU tensor's memory, once per tensor.
 * Sampled by bytes as `record` samples allocations (tide-preload-sampler.h):
 * a block of at least c10_sample_bytes always, a smaller one when it covers
 * a sample point.  Only a sampled block carries a stack; every block and
 * every free is sent, so that the recorder knows which pages the allocator
 * holds for tensors, whoever touched them first. */

/* The next spacing of sample points: one of the loader's quantiles of the
 * exponential, at random. */
static __always_inline __s64
c10_draw (void)
{
  __u32 i = bpf_get_prandom_u32 () % TIDE_BPF_EXP_DRAWS;
  __s64 *d = bpf_map_lookup_elem (&exp_draws, &i);

  return d && *d > 0 ? *d : (__s64) c10_sample_bytes;
}

static __always_inline int
c10_sampled (__u64 size)
{
  __u32 zero = 0;
  __s64 *countdown;

  if (size >= c10_sample_bytes)
    return 1;
  countdown = bpf_map_lookup_elem (&c10_countdown, &zero);
  if (!countdown)
    return 0;
  if (*countdown == 0)
    *countdown = c10_draw ();
  *countdown -= (__s64) size;
  if (*countdown > 0)
    return 0;
  *countdown = c10_draw ();
  return 1;
}

SEC ("uprobe")
int
BPF_KPROBE (tide_c10_alloc_enter, __u64 size)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid ();
  __u32 tid = (__u32) pid_tgid;

  if (is_followed (pid_tgid >> 32))
    bpf_map_update_elem (&c10_size, &tid, &size, BPF_ANY);
  return 0;
}

SEC ("uretprobe")
int
BPF_KRETPROBE (tide_c10_alloc_exit, void *ret)
{
  __u32 tid = (__u32) bpf_get_current_pid_tgid ();
  __u64 *found = bpf_map_lookup_elem (&c10_size, &tid);
  __u64 size;

  if (!found)
    return 0;
  size = *found;
  bpf_map_delete_elem (&c10_size, &tid);
  if (!ret)
    return 0;
  if (c10_sampled (size))
    {
      TideBpfMalloc *ev = reserve (sizeof *ev, TIDE_BPF_C10_SAMPLE);

      if (!ev)
        return 0;
      ev->addr = (__u64) ret;
      ev->size = size;
      copy_user_stack (&ev->stack, ctx);
      submit_lazy (ev);
    }
  else
    {
      TideBpfBlock *ev = reserve (sizeof *ev, TIDE_BPF_C10_BLOCK);

      if (!ev)
        return 0;
      ev->addr = (__u64) ret;
      ev->size = size;
      submit_lazy (ev);
    }
  return 0;
}

SEC ("uprobe")
int
BPF_KPROBE (tide_c10_free_enter, void *ptr)
{
  TideBpfFree *ev;

  if (!ptr || !is_followed (bpf_get_current_pid_tgid () >> 32))
    return 0;
  ev = reserve (sizeof *ev, TIDE_BPF_C10_FREE);
  if (!ev)
    return 0;
  ev->addr = (__u64) ptr;
  submit_lazy (ev);
  return 0;
}

/* ---- CUDA ------------------------------------------------------------------
 *
 * The same few programs go on every CUDA entry point; the attach cookie
 * says what the function does (tide-attach-event.h).  A driver call made
 * inside a runtime call (cudaMalloc -> cuMemAlloc_v2) finds the runtime's
 * call under way on its thread and is not counted again. */

static __always_inline __s32
cuda_current_device (__u32 tid)
{
  __s32 *device = bpf_map_lookup_elem (&cuda_device, &tid);

  return device ? *device : 0;
}

/* Direction of a copy, a TideTransferDirection, or 0 where it is not a
 * transfer (device to device on one device, or cudaMemcpyDefault, left
 * out).  The argument is a cudaMemcpyKind: 1 host to device, 2 device to
 * host. */
static __always_inline __u32
cuda_direction (__u32 cookie,
                __u64 kind_arg)
{
  if (cookie & TIDE_BPF_CUDA_KIND_ARG)
    return kind_arg == 1 ? TIDE_TRANSFER_TO_DEVICE : kind_arg == 2 ? TIDE_TRANSFER_TO_HOST : 0;
  return cookie >> TIDE_BPF_CUDA_DIR_SHIFT;
}

static __always_inline void
cuda_emit_free (__u64 addr,
                __u32 cookie)
{
  __u32 tid = (__u32) bpf_get_current_pid_tgid ();
  TideBpfCuda *ev;

  if (!addr || !(ev = reserve (sizeof *ev, TIDE_BPF_CUDA)))
    return;
  ev->op = TIDE_BPF_CUDA_FREE;
  ev->kind = cookie & TIDE_BPF_CUDA_PINNED ? TIDE_KIND_PINNED : TIDE_KIND_DEVICE;
  ev->device = cookie & TIDE_BPF_CUDA_PINNED ? -1 : cuda_current_device (tid);
  ev->reserved = 0;
  ev->addr = addr;
  ev->size = 0;
  ev->duration_ns = 0;
  ev->stack.n_bytes = 0;
  ev->stack.n_py = 0;
  ev->stack.py_state = TIDE_BPF_PY_NONE;
  submit_lazy (ev);
}

SEC ("uprobe")
int
BPF_KPROBE (tide_cuda_enter, __u64 a0, __u64 a1, __u64 a2, __u64 a3)
{
  __u64 pid_tgid = bpf_get_current_pid_tgid ();
  __u32 tid = (__u32) pid_tgid;
  __u32 cookie = (__u32) bpf_get_attach_cookie (ctx);
  __u32 op = cookie & TIDE_BPF_CUDA_OP_MASK;
  __s32 device;
  CudaCall call = { .cookie = cookie };

  if (!is_followed (pid_tgid >> 32) || bpf_map_lookup_elem (&cuda_call, &tid) != NULL)
    return 0;
  switch (op)
    {
    case TIDE_BPF_CUDA_SET_DEV:
      device = (__s32) a0;
      bpf_map_update_elem (&cuda_device, &tid, &device, BPF_ANY);
      return 0;
    case TIDE_BPF_CUDA_FREE:
      cuda_emit_free (a0, cookie);
      /* Keeps the driver's free under the runtime's from counting twice. */
      break;
    case TIDE_BPF_CUDA_ALLOC:
      call.out = a0;
      call.size = a1;
      break;
    case TIDE_BPF_CUDA_COPY:
      call.size = a2;
      call.direction = cuda_direction (cookie, a3);
      break;
    default:
      return 0;
    }
  call.start_ns = bpf_ktime_get_ns ();
  bpf_map_update_elem (&cuda_call, &tid, &call, BPF_ANY);
  return 0;
}

static __always_inline void
cuda_emit_done (void     *ctx,
                CudaCall *call)
{
  __u32 tid = (__u32) bpf_get_current_pid_tgid ();
  __u32 op = call->cookie & TIDE_BPF_CUDA_OP_MASK;
  int pinned = (call->cookie & TIDE_BPF_CUDA_PINNED) != 0;
  __u64 addr = 0;
  TideBpfCuda *ev;

  if (op == TIDE_BPF_CUDA_ALLOC &&
      (bpf_probe_read_user (&addr, sizeof addr, (void *) call->out) != 0 || addr == 0))
    return;
  if (op == TIDE_BPF_CUDA_COPY && call->direction == 0)
    return;
  if (op == TIDE_BPF_CUDA_FREE || !(ev = reserve (sizeof *ev, TIDE_BPF_CUDA)))
    return;
  ev->op = op;
  ev->kind = op == TIDE_BPF_CUDA_COPY ? call->direction
                                      : pinned ? TIDE_KIND_PINNED : TIDE_KIND_DEVICE;
  ev->device = pinned ? -1 : cuda_current_device (tid);
  ev->addr = addr;
  ev->size = call->size;
  ev->duration_ns = bpf_ktime_get_ns () - call->start_ns;
  ev->reserved = 0;
  /* At the return the stack starts in the caller of the CUDA function. */
  copy_user_stack (&ev->stack, ctx);
  submit_lazy (ev);
}

SEC ("uretprobe")
int
BPF_KRETPROBE (tide_cuda_exit, long ret)
{
  __u32 tid = (__u32) bpf_get_current_pid_tgid ();
  __u32 cookie = (__u32) bpf_get_attach_cookie (ctx);
  CudaCall *call = bpf_map_lookup_elem (&cuda_call, &tid);

  /* Another function's call (the runtime's, around this driver call). */
  if (!call || call->cookie != cookie)
    return 0;
  if ((int) ret == 0)
    cuda_emit_done (ctx, call);
  bpf_map_delete_elem (&cuda_call, &tid);
  return 0;
}
