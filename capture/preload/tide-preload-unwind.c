/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-unwind.c: native stacks with libunwind, and a per-thread
 * memo of the last stack walked.
 *
 * libunwind is loaded with dlopen(RTLD_LOCAL) instead of being linked: the
 * shared libunwind also exports the _Unwind_* ABI, and linked into a
 * preloaded library it would come early in the global scope and take C++
 * exception handling over from libgcc_s in the target.  Loaded locally, its
 * symbols are seen only by us.  Without it, stacks are empty.
 *
 * The first frames are libunwind's and ours (the hook, the record path);
 * they are cut by address: everything up to and including the last frame of
 * the innermost run inside libtidemark-preload.so.
 *
 * The memo.  A program allocates in loops, from the same stack again and
 * again, and unw_backtrace walks it again every time, the larger part of
 * what a sample costs.  So each thread keeps its last walk with everything
 * that walk read.  The walk starts at the program's frame that called the
 * hook, found through our own frame pointers, and runs in libunwind's
 * generic unwinder over an address space of ours, whose accessors hand it
 * the registers and memory it asks for and log them.  A walk is a function
 * of what it read: while no object was unloaded (dlclose is counted), and
 * the registers and stack words it read hold the same values, walking again
 * gives the same frames, so the memo gives them.  What it read in segments
 * of loaded objects that are never written (their unwind tables) is not
 * logged; the head of libunwind's list of dynamic unwind info is.  A walk
 * that read any other memory (a stack switched by sigaltstack or a
 * coroutine, a DWARF expression that follows a pointer), a register that
 * the context does not hold, or more words than the log holds, is not kept.
 * The words logged lie between the walk's stack pointer and the top of the
 * thread's stack, which stays mapped while the thread runs: reading them
 * again is safe.
 *
 * TIDEMARK_UNWIND_MEMO=0 turns the memo off; TIDEMARK_UNWIND_CHECK=1 walks
 * with unw_backtrace too, compares, and prints the counts at exit.
 */
#include "config.h"

#include "tide-preload-unwind.h"

#include "tide-preload-objects.h"
#include "tide-preload-private.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <libunwind.h>

#define TIDE_STR_(x) #x
#define TIDE_STR(x)  TIDE_STR_ (x)

#define MEMO_MAX_READS 128
#define MEMO_MAX_IPS   (TIDE_WIRE_MAX_FRAMES + TIDE_UNWIND_SLACK)
#define MEMO_N_REGS    (UNW_X86_64_RIP + 1)
/* A logged walk through the generic unwinder costs about as much as
 * MEMO_WALK_COST walks of unw_backtrace (deep Python stacks, --all), and a
 * memo that holds saves one.  So each thread keeps a credit: a hit earns
 * one, up to MEMO_CREDIT_CAP, a logged walk spends MEMO_WALK_COST.  While
 * the credit is spent, misses walk with unw_backtrace, and one miss in
 * MEMO_RETRY_EVERY with the log, to find out whether the memo would hold
 * again: an interpreter that allocates from a new stack each time costs
 * little more than without the memo, and a loop pays for its first walk
 * within MEMO_WALK_COST samples. */
#define MEMO_WALK_COST   8
#define MEMO_CREDIT_CAP  (8 * MEMO_WALK_COST)
#define MEMO_RETRY_EVERY 128
#define MEMO_MAX_STATICS 16

typedef struct
{
  uintptr_t  addr;
  unw_word_t value;
} MemoRead;

/* One thread's last walk, and its stack. */
typedef struct
{
  bool       valid;
  bool       unchecked;       /* the walk read what cannot be read again:
                               * memory off the stack, a register the
                               * context lacks, more than reads[] holds */
  uint64_t   unloads;         /* tide_unwind_unloads when walked */
  uintptr_t  sp;              /* the walk's first stack pointer */
  uintptr_t  stack_lo;        /* the thread's stack, once known */
  uintptr_t  stack_hi;
  bool       stack_asked;     /* once per thread, known or not */
  uint32_t   reg_mask;        /* 1 << UNW_X86_64_*: registers it read */
  unw_word_t regs[MEMO_N_REGS];
  uint32_t   n_reads;
  MemoRead   reads[MEMO_MAX_READS];
  int        n_ips;
  void      *ips[MEMO_MAX_IPS];
  int32_t    credit;          /* see MEMO_WALK_COST */
  uint32_t   skipped;         /* misses not walked with the log */
  uint64_t   static_unloads;  /* tide_unwind_unloads when statics[] was filled */
  uint32_t   n_statics;
  struct { uintptr_t lo, hi; } statics[MEMO_MAX_STATICS];
  const ucontext_t *context;  /* during a walk */
} Memo;

int (*tide_unw_backtrace) (void **, int);
_Atomic uint64_t tide_unwind_unloads;

static struct
{
  int  (*init_remote) (unw_cursor_t *, unw_addr_space_t, void *);
  int  (*step) (unw_cursor_t *);
  int  (*get_reg) (unw_cursor_t *, int, unw_word_t *);
  unw_addr_space_t space;     /* ours; NULL: no memo */
  uintptr_t dyn_list_lo;      /* libunwind's list of dynamic unwind info */
  uintptr_t dyn_list_hi;
  bool check;                 /* TIDEMARK_UNWIND_CHECK: compare every memo */
  _Atomic uint64_t hits, walks, mismatches;
} memo_lib;

/* A thread's first walk is on credit. */
static __thread Memo memo __attribute__ ((tls_model ("initial-exec"))) = {
  .credit = MEMO_WALK_COST,
};

/* The context's slot of a register the program's context holds, or -1:
 * its return address, stack pointer and frame pointer. */
static int
greg_of (unw_regnum_t reg)
{
  switch (reg)
    {
    case UNW_X86_64_RIP:
      return REG_RIP;
    case UNW_X86_64_RSP:
      return REG_RSP;
    case UNW_X86_64_RBP:
      return REG_RBP;
    default:
      return -1;
    }
}

typedef struct
{
  uintptr_t addr;
  uintptr_t lo, hi;
} FindSegment;

static int
find_segment_cb (struct dl_phdr_info *info,
                 size_t               size,
                 void                *data)
{
  FindSegment *find = data;

  (void) size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

      if (ph->p_type == PT_LOAD && find->addr >= lo && find->addr < lo + ph->p_memsz)
        {
          if (!(ph->p_flags & PF_W))
            {
              find->lo = lo;
              find->hi = lo + ph->p_memsz;
            }
          return 1;
        }
    }
  return 0;
}

/* Whether @addr lies in a segment of a loaded object that is never
 * written (its unwind tables, its symbols): what a walk reads there holds
 * while the object stays loaded, and dlclose is counted. */
static bool
memo_is_static (uintptr_t addr)
{
  FindSegment find = { .addr = addr };
  uint64_t unloads = atomic_load_explicit (&tide_unwind_unloads, memory_order_acquire);

  if (memo.static_unloads != unloads)
    {
      memo.n_statics = 0;
      memo.static_unloads = unloads;
    }
  for (uint32_t i = 0; i < memo.n_statics; i++)
    if (addr >= memo.statics[i].lo && addr < memo.statics[i].hi)
      return true;
  dl_iterate_phdr (find_segment_cb, &find);
  if (find.hi == 0)
    return false;
  if (memo.n_statics < MEMO_MAX_STATICS)
    {
      memo.statics[memo.n_statics].lo = find.lo;
      memo.statics[memo.n_statics].hi = find.hi;
      memo.n_statics++;
    }
  return true;
}

static int
memo_access_mem (unw_addr_space_t  as,
                 unw_word_t        addr,
                 unw_word_t       *value,
                 int               write,
                 void             *arg)
{
  Memo *m = arg;

  (void) as;
  if (write)
    return -UNW_EINVAL;
  /* The generic unwinder reads through here what the local one reads
   * directly, the unwind tables included. */
  *value = *(const unw_word_t *) addr;
  if ((addr < m->sp || addr + sizeof *value > m->stack_hi)
      && (addr < memo_lib.dyn_list_lo || addr + sizeof *value > memo_lib.dyn_list_hi))
    {
      if (!memo_is_static (addr))
        m->unchecked = true;
    }
  else if (m->n_reads < MEMO_MAX_READS)
    m->reads[m->n_reads++] = (MemoRead) { addr, *value };
  else
    m->unchecked = true;
  return 0;
}

static int
memo_access_reg (unw_addr_space_t  as,
                 unw_regnum_t      reg,
                 unw_word_t       *value,
                 int               write,
                 void             *arg)
{
  Memo *m = arg;
  int slot = greg_of (reg);

  (void) as;
  if (write || slot < 0)
    {
      m->unchecked = true;
      return -UNW_EBADREG;
    }
  *value = (unw_word_t) m->context->uc_mcontext.gregs[slot];
  m->reg_mask |= 1u << reg;
  m->regs[reg] = *value;
  return 0;
}

static int
memo_access_fpreg (unw_addr_space_t  as,
                   unw_regnum_t      reg,
                   unw_fpreg_t      *value,
                   int               write,
                   void             *arg)
{
  (void) as, (void) reg, (void) value, (void) write, (void) arg;
  return -UNW_EBADREG;
}

/* The generic library (libunwind-x86_64.so.8, in the same package as
 * libunwind.so.8) with an address space of ours; without it, no memo. */
static void
memo_init (void)
{
  void *lib = tide_real.dlopen ("libunwind-x86_64.so.8", RTLD_NOW | RTLD_LOCAL);
  unw_accessors_t *(*get_accessors) (unw_addr_space_t);
  unw_addr_space_t (*create_space) (unw_accessors_t *, int);
  int (*set_policy) (unw_addr_space_t, unw_caching_policy_t);
  unw_addr_space_t *local_space;
  static unw_accessors_t ours;
  unw_word_t dyn_list;
  const char *env = getenv ("TIDEMARK_UNWIND_MEMO");

  if (lib == NULL || (env != NULL && strcmp (env, "0") == 0))
    return;
  *(void **) &get_accessors = dlsym (lib, "_Ux86_64_get_accessors");
  *(void **) &create_space = dlsym (lib, "_Ux86_64_create_addr_space");
  *(void **) &set_policy = dlsym (lib, "_Ux86_64_set_caching_policy");
  local_space = dlsym (lib, "_Ux86_64_local_addr_space");
  *(void **) &memo_lib.init_remote = dlsym (lib, "_Ux86_64_init_remote");
  *(void **) &memo_lib.step = dlsym (lib, "_Ux86_64_step");
  *(void **) &memo_lib.get_reg = dlsym (lib, "_Ux86_64_get_reg");
  if (get_accessors == NULL || create_space == NULL || set_policy == NULL
      || local_space == NULL || memo_lib.init_remote == NULL
      || memo_lib.step == NULL || memo_lib.get_reg == NULL)
    return;
  /* Its own accessors find the unwind info; ours give it the registers and
   * the memory of the stack. */
  ours = *get_accessors (*local_space);
  /* The generic unwinder reads the head of the list of unwind info that
   * JITs register (libunwind-dynamic.h) as it reads the stack: that is
   * logged too, and stays mapped as long as libunwind does. */
  if (ours.get_dyn_info_list_addr (*local_space, &dyn_list, NULL) < 0)
    return;
  memo_lib.dyn_list_lo = (uintptr_t) dyn_list;
  memo_lib.dyn_list_hi = (uintptr_t) dyn_list + sizeof (unw_dyn_info_list_t);
  ours.access_mem = memo_access_mem;
  ours.access_reg = memo_access_reg;
  ours.access_fpreg = memo_access_fpreg;
  ours.resume = NULL;
  memo_lib.space = create_space (&ours, 0);
  if (memo_lib.space != NULL)
    set_policy (memo_lib.space, UNW_CACHE_PER_THREAD);
  env = getenv ("TIDEMARK_UNWIND_CHECK");
  memo_lib.check = env != NULL && strcmp (env, "1") == 0;
}

/* Learns the calling thread's stack.  The main thread's is learnt in the
 * constructor (@may_read_maps), as glibc reads /proc/self/maps for it with
 * stdio, which a hook must not; another thread's comes from its
 * descriptor.  Asked once per thread, so that a thread whose stack is not
 * known costs no system call a sample.  A stack stays mapped from any stack
 * pointer inside it up to its top while the thread runs. */
static bool
memo_know_stack (bool may_read_maps)
{
  pthread_attr_t attr;
  void *addr;
  size_t size;

  if (memo.stack_hi != 0 || memo.stack_asked)
    return memo.stack_hi != 0;
  memo.stack_asked = true;
  if (!may_read_maps && tide_thread_tid () == (uint32_t) getpid ())
    return false;
  if (pthread_getattr_np (pthread_self (), &attr) != 0)
    return false;
  if (pthread_attr_getstack (&attr, &addr, &size) == 0)
    {
      memo.stack_lo = (uintptr_t) addr;
      memo.stack_hi = (uintptr_t) addr + size;
    }
  pthread_attr_destroy (&attr);
  return memo.stack_hi != 0;
}

void
tide_unwind_init (void)
{
  static const char *const names[] = { "libunwind.so.8", "libunwind.so" };
  int (*set_policy) (unw_addr_space_t, unw_caching_policy_t);
  unw_addr_space_t *space;
  void *lib = NULL;

  if (tide_unw_backtrace != NULL || tide_real.dlopen == NULL)
    return;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++)
    lib = tide_real.dlopen (names[i], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return;
  *(void **) &set_policy = dlsym (lib, TIDE_STR (unw_set_caching_policy));
  space = dlsym (lib, TIDE_STR (unw_local_addr_space));
  if (set_policy != NULL && space != NULL)
    set_policy (*space, UNW_CACHE_PER_THREAD);
  *(void **) &tide_unw_backtrace = dlsym (lib, "unw_backtrace");
  if (tide_unw_backtrace != NULL)
    memo_init ();
  memo_know_stack (true);
}

/* Whether the memo's walk would read what it read before. */
static bool
memo_still_holds (const ucontext_t *context)
{
  if (!memo.valid || (uintptr_t) context->uc_mcontext.gregs[REG_RSP] != memo.sp
      || atomic_load_explicit (&tide_unwind_unloads, memory_order_acquire) != memo.unloads)
    return false;
  for (uint32_t mask = memo.reg_mask; mask != 0; mask &= mask - 1)
    {
      int reg = __builtin_ctz (mask);

      if ((unw_word_t) context->uc_mcontext.gregs[greg_of (reg)] != memo.regs[reg])
        return false;
    }
  for (uint32_t i = 0; i < memo.n_reads; i++)
    if (*(const unw_word_t *) memo.reads[i].addr != memo.reads[i].value)
      return false;
  return true;
}

/* Walks from @context, logging what the walk reads into the memo. */
static int
memo_walk (const ucontext_t *context,
           void            **ips,
           int               max)
{
  unw_cursor_t cursor;
  unw_word_t ip;
  int n = 0;

  memo.valid = false;
  memo.unchecked = false;
  memo.unloads = atomic_load_explicit (&tide_unwind_unloads, memory_order_acquire);
  memo.sp = (uintptr_t) context->uc_mcontext.gregs[REG_RSP];
  memo.reg_mask = 0;
  memo.n_reads = 0;
  memo.context = context;
  if (memo_lib.init_remote (&cursor, memo_lib.space, &memo) < 0)
    n = -1;
  else
    do
      {
        if (memo_lib.get_reg (&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
          break;
        ips[n++] = (void *) ip;
      }
    while (n < max && memo_lib.step (&cursor) > 0);
  memo.context = NULL;
  if (n >= 0 && !memo.unchecked)
    {
      memo.n_ips = n;
      memcpy (memo.ips, ips, (size_t) n * sizeof *ips);
      memo.valid = true;
    }
  return n;
}

/* TIDEMARK_UNWIND_CHECK: the memo's frames against unw_backtrace's, as
 * tide_unwind() keeps them (the frames above the program's differ:
 * libunwind's own, and where each walk started). */
static void
memo_check (void **ips,
            int    n)
{
  void *truth[MEMO_MAX_IPS];
  int m = tide_unw_backtrace (truth, MEMO_MAX_IPS);
  uint64_t a[TIDE_WIRE_MAX_FRAMES], b[TIDE_WIRE_MAX_FRAMES];
  uint32_t n_a = tide_unwind_strip (ips, n, true, a, TIDE_WIRE_MAX_FRAMES);
  uint32_t n_b = tide_unwind_strip (truth, m, false, b, TIDE_WIRE_MAX_FRAMES);

  if (n_a != n_b || memcmp (a, b, n_a * sizeof *a) != 0)
    atomic_fetch_add (&memo_lib.mismatches, 1);
}

/* The registers of the program's frame that called into the profiler.
 * This library keeps frame pointers (meson.build), so its frames are a
 * chain of saved frame pointers and return addresses on the stack; the
 * first return address outside it is the program's.  Starting there keeps
 * our own frames, which change with every call, out of what a walk reads,
 * and leaves the program's other registers unknown: a walk that asks for
 * one is not memoized. */
static bool
memo_program_context (ucontext_t *uc)
{
  const uintptr_t *frame = __builtin_frame_address (0);

  for (int depth = 0; depth < TIDE_UNWIND_SLACK; depth++)
    {
      if ((uintptr_t) frame < memo.stack_lo || (uintptr_t) (frame + 2) > memo.stack_hi
          || (uintptr_t) frame % sizeof *frame != 0)
        return false;
      if (!tide_objects_is_self (frame[1]))
        {
          uc->uc_mcontext.gregs[REG_RIP] = (greg_t) frame[1];
          uc->uc_mcontext.gregs[REG_RSP] = (greg_t) (uintptr_t) (frame + 2);
          uc->uc_mcontext.gregs[REG_RBP] = (greg_t) frame[0];
          return true;
        }
      frame = (const uintptr_t *) frame[0];
    }
  return false;
}

int
tide_unwind_raw (void **ips,
                 int    max,
                 bool  *in_program)
{
  ucontext_t uc;
  int n;

  *in_program = false;
  if (memo_lib.space == NULL || max > MEMO_MAX_IPS || !memo_know_stack (false)
      || !memo_program_context (&uc))
    return tide_unw_backtrace (ips, max);
  if (memo_still_holds (&uc))
    {
      if (memo.credit < MEMO_CREDIT_CAP)
        memo.credit++;
      n = memo.n_ips < max ? memo.n_ips : max;
      memcpy (ips, memo.ips, (size_t) n * sizeof *ips);
      if (memo_lib.check)
        atomic_fetch_add (&memo_lib.hits, 1);
    }
  else if (memo.credit > 0 || ++memo.skipped % MEMO_RETRY_EVERY == 0)
    {
      /* In debt by one walk at most, so that a memo that holds again after
       * a retry is trusted again within MEMO_WALK_COST hits. */
      memo.credit = memo.credit > 0 ? memo.credit - MEMO_WALK_COST : -MEMO_WALK_COST;
      n = memo_walk (&uc, ips, max);
      if (n < 0)
        return tide_unw_backtrace (ips, max);
      if (memo_lib.check)
        atomic_fetch_add (&memo_lib.walks, 1);
    }
  else
    return tide_unw_backtrace (ips, max);
  if (memo_lib.check)
    memo_check (ips, n);
  *in_program = true;
  return n;
}

/* TIDEMARK_UNWIND_CHECK's count, on stderr at exit, for the tests. */
__attribute__ ((destructor)) static void
memo_report (void)
{
  char line[160];
  int len;

  if (!memo_lib.check)
    return;
  len = snprintf (line, sizeof line, "tidemark: unwind memo: %lu hits, %lu walks, %lu mismatches\n",
                  (unsigned long) memo_lib.hits, (unsigned long) memo_lib.walks,
                  (unsigned long) memo_lib.mismatches);
  if (len > 0)
    (void) !write (STDERR_FILENO, line, (size_t) len);
}
