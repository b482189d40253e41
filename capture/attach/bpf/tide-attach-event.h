/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-attach-event.h: the records that tide-attach.bpf.c puts in its ring
 * buffer for `tidemark attach`.  Plain fixed-size types and nothing from the
 * kernel, so both sides can include it: the BPF side after vmlinux.h, the
 * loader after <linux/types.h>.
 *
 * Every record starts with TideBpfHeader, is 8-byte aligned and has a fixed
 * size per type (the ring buffer wants a constant size to reserve).
 */
#pragma once

#define TIDE_BPF_MAX_FRAMES   128  /* frames the recorder unwinds from a stack window */
#define TIDE_BPF_LABEL_LEN    64
#define TIDE_BPF_MAX_TARGETS  1024

typedef enum
{
  TIDE_BPF_FAULT   = 1,   /* a sampled first touch of a page, with a user stack */
  TIDE_BPF_SYSCALL = 2,   /* mmap, munmap, mremap, brk or madvise returned */
  TIDE_BPF_RSS     = 3,   /* rss_stat changed the resident set noticeably */
  TIDE_BPF_FORK    = 4,   /* a followed process made a child or a thread */
  TIDE_BPF_EXIT    = 5,   /* a followed process's last thread exited */
  TIDE_BPF_EXEC    = 6,   /* a followed process exec'd */
  TIDE_BPF_STEP    = 7,   /* the step uprobe fired */
  TIDE_BPF_MALLOC  = 8,   /* --uprobes malloc: a block was returned (TideBpfMalloc) */
  TIDE_BPF_FREE    = 9,   /* --uprobes malloc: a block was freed */
  TIDE_BPF_CUDA    = 10,  /* a CUDA allocation, free or copy (TideBpfCuda) */
  TIDE_BPF_GRAD_MODE = 11, /* PyTorch switched gradients on or off (TideBpfGradMode) */
  TIDE_BPF_C10_SAMPLE = 12, /* c10::alloc_cpu returned a sampled block (TideBpfMalloc) */
  TIDE_BPF_C10_BLOCK  = 13, /* c10::alloc_cpu returned a block not sampled (TideBpfBlock) */
  TIDE_BPF_C10_FREE   = 14, /* c10::free_cpu was called (TideBpfFree) */
} TideBpfType;

/* The exponential draws that space PyTorch's sampled tensors: the loader
 * fills the `exp_draws` map with this many quantiles of the exponential
 * of mean c10_sample_bytes, and the BPF side picks one at random. */
#define TIDE_BPF_EXP_DRAWS 4096

/* What a CUDA uprobe does, and which library level it sits in: the attach
 * cookie of each uprobe (TIDE_BPF_CUDA_OP | TIDE_BPF_CUDA_* flags). */
typedef enum
{
  TIDE_BPF_CUDA_ALLOC    = 1,   /* (void **out, size_t size, ...) */
  TIDE_BPF_CUDA_FREE     = 2,   /* (void *ptr, ...) */
  TIDE_BPF_CUDA_COPY     = 3,   /* (dst, src, size_t n, [kind]) */
  TIDE_BPF_CUDA_SET_DEV  = 4,   /* cudaSetDevice (int device) */
} TideBpfCudaOp;

#define TIDE_BPF_CUDA_OP_MASK   0xffu
#define TIDE_BPF_CUDA_PINNED    0x100u   /* page-locked host memory */
#define TIDE_BPF_CUDA_RUNTIME   0x200u   /* libcudart: driver calls inside it are not counted again */
#define TIDE_BPF_CUDA_KIND_ARG  0x400u   /* copy direction from the cudaMemcpyKind argument */
#define TIDE_BPF_CUDA_DIR_SHIFT 12       /* else the direction: a TideTransferDirection */

/* The top of a thread's user stack, copied at a sample for the recorder to
 * unwind with the DWARF call frame information of the code, as `perf
 * --call-graph dwarf` does: the frame-pointer walk of the kernel stops in
 * the first library built without frame pointers.  The window is whole
 * pages, from the page holding sp up: TIDE_BPF_STACK_PAGES pages, so
 * between TIDE_BPF_STACK_PAGES - 1 pages and that many above sp.  Copying
 * stops at the first page that cannot be read (the top of the stack). */
#define TIDE_BPF_STACK_PAGE   4096
#define TIDE_BPF_STACK_PAGES  5
#define TIDE_BPF_STACK_BYTES  (TIDE_BPF_STACK_PAGES * TIDE_BPF_STACK_PAGE)

/* x86_64 DWARF register numbers, the order of TideBpfUserStack.regs. */
typedef enum
{
  TIDE_BPF_REG_AX = 0, TIDE_BPF_REG_DX, TIDE_BPF_REG_CX, TIDE_BPF_REG_BX,
  TIDE_BPF_REG_SI, TIDE_BPF_REG_DI, TIDE_BPF_REG_BP, TIDE_BPF_REG_SP,
  TIDE_BPF_REG_R8, TIDE_BPF_REG_R9, TIDE_BPF_REG_R10, TIDE_BPF_REG_R11,
  TIDE_BPF_REG_R12, TIDE_BPF_REG_R13, TIDE_BPF_REG_R14, TIDE_BPF_REG_R15,
  TIDE_BPF_REG_IP,
  TIDE_BPF_N_REGS
} TideBpfReg;

/* CPython's frames of the sampled thread, read in the kernel at the sample
 * (the interpreter frames live in the thread's own data stack, so they are
 * gone by the time the recorder could read them): innermost first, at most
 * TIDE_BPF_PY_FRAMES.  The recorder names each code object by reading it
 * from the process, once, and splices the frames in place of the
 * evaluation loop's C frames. */
#define TIDE_BPF_PY_FRAMES 32

/* The bytes of a _PyInterpreterFrame (3.11+) that the program reads in one
 * piece: up to localsplus[0], included.  Every field it reads of such a
 * frame must lie inside. */
#define TIDE_BPF_PY_FRAME_WINDOW 80

#define TIDE_BPF_PY_ENTRY  1u   /* the first frame of a C-level evaluation */
#define TIDE_BPF_PY_SHIM   2u   /* 3.12+: the C stack's own frame below an evaluation's first */

typedef struct
{
  __u64 code;          /* the PyCodeObject */
  __u64 first_local;   /* localsplus[0]: `self` of a method */
  __s32 instr;         /* byte offset of the instruction it runs, -2: before its first */
  __u32 flags;         /* TIDE_BPF_PY_* */
} TideBpfPyFrame;

/* What a stack's Python frames say of their walk (TideBpfUserStack.py_state). */
#define TIDE_BPF_PY_NONE      0u   /* not a Python process, or a thread without Python */
#define TIDE_BPF_PY_WHOLE     1u   /* every frame of the thread, to its first */
#define TIDE_BPF_PY_TRUNCATED 2u   /* more frames than TIDE_BPF_PY_FRAMES, or a read failed */

/* How a version chains its frames (TideBpfPyTarget.layout). */
#define TIDE_BPF_PY_CFRAME        1u    /* 3.11, 3.12: tstate_frame is a _PyCFrame*, the
                                         * frame is at cframe_current in it */
#define TIDE_BPF_PY_FRAME_OBJECTS 2u    /* 3.8-3.10: PyFrameObjects, each run by a C-level
                                         * evaluation of its own; frame_instr is f_lasti */
#define TIDE_BPF_PY_LASTI_UNITS   4u    /* 3.10: f_lasti counts code units, not bytes */
#define TIDE_BPF_PY_OWNER         8u    /* 3.12+: frame_entry is `owner`, 3 for a shim */
#define TIDE_BPF_PY_PTHREAD_ID    16u   /* 3.8-3.10: tstate_thread_id is pthread_self () */

/* Where an interpreter keeps its thread states and frames in one process:
 * the address of its _PyRuntime and the offsets of its version
 * (attach/tide-attach-pylayout.c), set by the loader per process in the
 * `py_targets` map. */
typedef struct
{
  __u64 runtime;              /* &_PyRuntime in the process */
  __u16 runtime_interp_head;  /* _PyRuntimeState.interpreters.head */
  __u16 interp_tstate_head;   /* PyInterpreterState.threads.head (tstate_head) */
  __u16 tstate_next;
  __u16 tstate_thread_id;     /* native_thread_id, or thread_id with TIDE_BPF_PY_PTHREAD_ID */
  __u16 tstate_frame;         /* frame, cframe or current_frame */
  __u16 cframe_current;
  __u16 frame_code;           /* f_code, f_executable */
  __u16 frame_previous;       /* previous, f_back */
  __u16 frame_instr;          /* prev_instr, instr_ptr, f_lasti */
  __u16 frame_entry;          /* is_entry, owner */
  __u16 frame_first_local;
  __u16 code_adaptive;        /* where the instructions start in a code object */
  __u32 layout;               /* TIDE_BPF_PY_CFRAME ... */
  __u32 reserved;
} TideBpfPyTarget;

typedef struct
{
  __u64 regs[TIDE_BPF_N_REGS];   /* the thread's user registers (TideBpfReg) */
  __u64 start;                   /* user address of data[0]: sp's page */
  __u32 n_bytes;                 /* bytes of data copied; 0: no stack */
  __u32 reserved;
  __u32 n_py;                    /* Python frames in py */
  __u32 py_state;                /* TIDE_BPF_PY_* */
  TideBpfPyFrame py[TIDE_BPF_PY_FRAMES];
  __u8  data[TIDE_BPF_STACK_BYTES];
} TideBpfUserStack;

/* Where the stack of a TideBpfFault came from (flags). */
#define TIDE_BPF_FAULT_KERNEL 1u   /* the kernel faulted on a user address (copy_to_user) */

typedef struct
{
  __u16 type;       /* TideBpfType */
  __u16 len;        /* whole record */
  __u32 tgid;       /* the process */
  __u32 tid;        /* the thread */
  __u32 reserved;
  __u64 time_ns;    /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
} TideBpfHeader;

typedef struct
{
  TideBpfHeader h;
  __u64 addr;                          /* faulting address */
  __u32 flags;                         /* TIDE_BPF_FAULT_* */
  __u32 reserved2;
  TideBpfUserStack stack;
} TideBpfFault;

typedef struct
{
  TideBpfHeader h;
  __u32 nr;          /* x86_64 syscall number */
  __u32 reserved;
  __u64 args[5];     /* as the target passed them */
  __s64 ret;
  __u64 old_brk;     /* brk only: mm->brk before the call */
} TideBpfSyscall;

typedef struct
{
  TideBpfHeader h;
  __u64 rss_bytes;   /* anonymous + file + shmem pages, from the mm counters */
} TideBpfRss;

typedef struct
{
  TideBpfHeader h;   /* tgid/tid: the parent */
  __u32 child_tgid;
  __u32 child_tid;
  __u32 is_thread;
  __u32 reserved;
} TideBpfFork;

typedef struct
{
  TideBpfHeader h;
  __s32 exit_code;   /* wait status: (code << 8) | signal */
  __u32 oom_victim;  /* 1: the OOM killer chose one of its threads (oom:mark_victim) */
} TideBpfExit;

typedef struct
{
  TideBpfHeader h;
  char label[TIDE_BPF_LABEL_LEN];
} TideBpfStep;

typedef struct
{
  TideBpfHeader h;
  __u64 addr;
  __u64 size;
  TideBpfUserStack stack;
} TideBpfMalloc;

/* TIDE_BPF_FREE, TIDE_BPF_C10_FREE: which block. */
typedef struct
{
  TideBpfHeader h;
  __u64 addr;
} TideBpfFree;

/* TIDE_BPF_C10_BLOCK: a block without a stack. */
typedef struct
{
  TideBpfHeader h;
  __u64 addr;
  __u64 size;
} TideBpfBlock;

typedef struct
{
  TideBpfHeader h;
  __u32 op;            /* TideBpfCudaOp */
  __u32 kind;          /* TIDE_KIND_DEVICE or TIDE_KIND_PINNED (tide-wire.h); copies: direction */
  __s32 device;        /* -1: host memory */
  __u32 reserved;
  __u64 addr;
  __u64 size;          /* bytes allocated or copied */
  __u64 duration_ns;   /* copies: the call */
  TideBpfUserStack stack;   /* n_bytes 0 for frees */
} TideBpfCuda;

/* The Python frames a TideBpfGradMode carries: the grad_mode.py frames
 * that make the call, and the caller that tells what it is. */
#define TIDE_BPF_GRAD_MODE_FRAMES 8

/* Where a tuple's first item is, in CPython 3.8 to 3.13 (PyTupleObject's
 * ob_item, after PyObject_VAR_HEAD). */
#define TIDE_BPF_PY_TUPLE_ITEMS 24

typedef struct
{
  TideBpfHeader h;
  __u32 enabled;       /* set_enabled's argument */
  __u32 n_py;          /* Python frames in py, innermost first */
  __u32 py_state;      /* TIDE_BPF_PY_* */
  __u32 reserved;
  TideBpfPyFrame py[TIDE_BPF_GRAD_MODE_FRAMES];
  /* Of each frame, the first item of its first local where that local is
   * a tuple: a wrapper's `*args`, whose first is the method's `self`.
   * Read at the switch, since the tuple is gone when the loader reads the
   * record; meaningless for a frame whose first local is no tuple. */
  __u64 first_arg[TIDE_BPF_GRAD_MODE_FRAMES];
} TideBpfGradMode;

/* Counters the BPF side keeps in the `stats` array map. */
typedef enum
{
  TIDE_BPF_STAT_DROPPED = 0,   /* ring buffer full: records lost */
  TIDE_BPF_STAT_FAULTS  = 1,   /* page faults of followed processes */
  TIDE_BPF_STAT_SAMPLED = 2,   /* of which sampled */
  TIDE_BPF_STAT_SHED    = 3,   /* of which left out: the ring buffer was half full */
  TIDE_BPF_N_STATS      = 4,
} TideBpfStat;

_Static_assert (sizeof (TideBpfHeader) == 24, "TideBpfHeader layout");
_Static_assert (sizeof (TideBpfPyFrame) == 24, "TideBpfPyFrame layout");
_Static_assert (sizeof (TideBpfPyTarget) == 40, "TideBpfPyTarget layout");
_Static_assert (sizeof (TideBpfUserStack) == 8 * TIDE_BPF_N_REGS + 24
                + sizeof (TideBpfPyFrame) * TIDE_BPF_PY_FRAMES + TIDE_BPF_STACK_BYTES,
                "TideBpfUserStack layout");
_Static_assert (sizeof (TideBpfFault) == 40 + sizeof (TideBpfUserStack), "TideBpfFault layout");
_Static_assert (sizeof (TideBpfFault) < 65536, "a record's length fits TideBpfHeader.len");
_Static_assert (sizeof (TideBpfSyscall) == 88, "TideBpfSyscall layout");
_Static_assert (sizeof (TideBpfRss) == 32, "TideBpfRss layout");
_Static_assert (sizeof (TideBpfFork) == 40, "TideBpfFork layout");
_Static_assert (sizeof (TideBpfExit) == 32, "TideBpfExit layout");
_Static_assert (sizeof (TideBpfStep) == 24 + TIDE_BPF_LABEL_LEN, "TideBpfStep layout");
_Static_assert (sizeof (TideBpfMalloc) == 40 + sizeof (TideBpfUserStack), "TideBpfMalloc layout");
_Static_assert (sizeof (TideBpfFree) == 32, "TideBpfFree layout");
_Static_assert (sizeof (TideBpfBlock) == 40, "TideBpfBlock layout");
_Static_assert (sizeof (TideBpfCuda) == 64 + sizeof (TideBpfUserStack), "TideBpfCuda layout");
_Static_assert (sizeof (TideBpfGradMode) == 40 + (sizeof (TideBpfPyFrame) + 8) * TIDE_BPF_GRAD_MODE_FRAMES,
                "TideBpfGradMode layout");
_Static_assert (sizeof (TideBpfSyscall) % 8 == 0 && sizeof (TideBpfFork) % 8 == 0,
                "records are 8-byte aligned");
