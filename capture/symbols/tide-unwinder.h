/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-unwinder.h: native stacks from a copy of a thread's registers and
 * of the top of its stack, taken elsewhere (attach's eBPF programs), walked
 * with the DWARF call frame information of the code as libdw's unwinder
 * reads it, as `perf --call-graph dwarf` does.  Code built without frame
 * pointers unwinds as well as code built with them; code without call
 * frame information falls back on libdw's frame-pointer guess.
 *
 * One TideUnwinder follows one TideAddressSpace (not owned): the ELF files
 * it maps are reported to libdw again whenever its generation changes.
 * Recorder side only.  Not thread-safe: one thread owns an unwinder.
 */
#pragma once

#include <sys/types.h>

#include "tide-address-space.h"

G_BEGIN_DECLS

typedef struct _TideUnwinder TideUnwinder;

/* x86_64 DWARF registers 0 (rax) to 16 (rip), as the ABI numbers them. */
#define TIDE_UNWIND_N_REGS 17

typedef struct
{
  pid_t          tid;
  const guint64 *regs;         /* TIDE_UNWIND_N_REGS registers */
  guint64        stack_start;  /* user address of stack[0] */
  const guint8  *stack;        /* the copy of the stack */
  gsize          stack_len;
} TideUnwindSample;

TideUnwinder *tide_unwinder_new    (TideAddressSpace       *space);
void          tide_unwinder_free   (TideUnwinder           *self);

/* Writes the stack of @sample into @frames, innermost first: the pc, then
 * return addresses (as they are, not minus 1), each inside a mapping of
 * the address space.  Returns how many; *@complete is TRUE when the walk
 * reached the thread's first frame (where the call frame information says
 * there is no caller), FALSE when it stopped early: the copy of the stack
 * ended, code had no unwind information, @max_frames was reached. */
guint         tide_unwinder_unwind (TideUnwinder           *self,
                                    const TideUnwindSample *sample,
                                    guint64                *frames,
                                    guint                   max_frames,
                                    gboolean               *complete);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideUnwinder, tide_unwinder_free)

G_END_DECLS
