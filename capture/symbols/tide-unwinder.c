/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-unwinder.c: libdwfl's unwinder (dwfl_getthread_frames) on a Dwfl
 * whose modules are the ELF files of the address space at their runtime
 * addresses, and whose "process" is the one sample being unwound: its
 * registers are the thread's initial state and its stack copy the only
 * memory there is.  A read outside the copy fails, which ends the walk
 * there: the stack is cut, never made up.
 *
 * The Dwfl lives as long as the address space does not change, so the
 * call frame information that libdw parsed (.eh_frame_hdr tables, CIEs,
 * FDEs) is parsed once per file, not once per sample as a new Dwfl per
 * sample would.  Files are reported when a stack first reaches them, not
 * all at once: each holds an open file, and a process that maps hundreds
 * of libraries (PyTorch) has a few dozen on its stacks.
 */
#include "config.h"

#include "tide-unwinder.h"

#include "tide-debuginfo.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

struct _TideUnwinder
{
  TideAddressSpace       *space;
  Dwfl                   *dwfl;
  guint64                 generation;    /* of the space when the Dwfl was made */
  gboolean                attached;      /* dwfl_attach_state succeeded */
  guint                   n_modules;     /* reported to the Dwfl */
  GHashTable             *unreportable;  /* interned paths libdwfl could not open */
  const TideUnwindSample *sample;        /* during tide_unwinder_unwind */
  guint64                *frames;
  guint                   n_frames;
  guint                   max_frames;
  guint64                 missing_pc;    /* a frame's file is not reported yet */
  guint64                 last_lookup;   /* the last frame's pc, minus 1 if returned to */
};

/* ---- the sample as libdwfl's process ------------------------------------- */

static pid_t
tide_unwinder_next_thread (Dwfl   *dwfl,
                           void   *dwfl_arg,
                           void  **thread_argp)
{
  TideUnwinder *self = dwfl_arg;

  /* One thread, once: the sample's. */
  if (*thread_argp != NULL || self->sample == NULL)
    return 0;
  *thread_argp = self;
  return self->sample->tid;
}

static bool
tide_unwinder_get_thread (Dwfl   *dwfl,
                          pid_t   tid,
                          void   *dwfl_arg,
                          void  **thread_argp)
{
  TideUnwinder *self = dwfl_arg;

  *thread_argp = self;
  return self->sample != NULL && self->sample->tid == tid;
}

static bool
tide_unwinder_memory_read (Dwfl       *dwfl,
                           Dwarf_Addr  addr,
                           Dwarf_Word *result,
                           void       *dwfl_arg)
{
  TideUnwinder *self = dwfl_arg;
  const TideUnwindSample *s = self->sample;

  if (s == NULL || addr < s->stack_start || addr - s->stack_start > s->stack_len ||
      s->stack_len - (addr - s->stack_start) < sizeof *result)
    return false;
  memcpy (result, s->stack + (addr - s->stack_start), sizeof *result);
  return true;
}

static bool
tide_unwinder_set_initial_registers (Dwfl_Thread *thread,
                                     void        *thread_arg)
{
  TideUnwinder *self = thread_arg;
  Dwarf_Word regs[TIDE_UNWIND_N_REGS];

  for (guint i = 0; i < TIDE_UNWIND_N_REGS; i++)
    regs[i] = self->sample->regs[i];
  if (!dwfl_thread_state_registers (thread, 0, TIDE_UNWIND_N_REGS, regs))
    return false;
  /* rip is register 16, the return address column; said once more as the
   * pc, which libdwfl otherwise derives from it. */
  dwfl_thread_state_register_pc (thread, regs[TIDE_UNWIND_N_REGS - 1]);
  return true;
}

static const Dwfl_Thread_Callbacks tide_unwinder_thread_callbacks = {
  .next_thread = tide_unwinder_next_thread,
  .get_thread = tide_unwinder_get_thread,
  .memory_read = tide_unwinder_memory_read,
  .set_initial_registers = tide_unwinder_set_initial_registers,
  .detach = NULL,
  .thread_detach = NULL,
};

/* ---- modules --------------------------------------------------------------- */

/* Reports the file mapped at @pc, at its runtime place.  A file that
 * cannot be opened is remembered, so it costs one try: frames in it are
 * left to libdw's frame-pointer guess. */
static gboolean
tide_unwinder_report (TideUnwinder *self,
                      guint64       pc)
{
  const char *path;
  guint64 bias;
  Dwfl_Module *module;

  if (!tide_address_space_resolve (self->space, pc, &path, &bias) ||
      g_hash_table_contains (self->unreportable, path))
    return FALSE;
  dwfl_report_begin_add (self->dwfl);
  module = dwfl_report_elf (self->dwfl, path, path, -1, bias, true);
  dwfl_report_end (self->dwfl, NULL, NULL);
  /* A file whose segments do not cover the pc (mapped some other way)
   * counts as one that did not open. */
  if (module == NULL || dwfl_addrmodule (self->dwfl, pc) == NULL)
    {
      g_hash_table_add (self->unreportable, (gpointer) path);
      return FALSE;
    }
  self->n_modules++;
  return TRUE;
}

/* A Dwfl made when first needed, and again when the address space has
 * changed since (a library unmapped or mapped over): modules are only
 * ever added to it. */
static gboolean
tide_unwinder_ready (TideUnwinder *self,
                     guint64       pc)
{
  guint64 generation = tide_address_space_get_generation (self->space);

  if (self->dwfl != NULL && generation != self->generation)
    g_clear_pointer (&self->dwfl, dwfl_end);
  if (self->dwfl == NULL)
    {
      self->dwfl = dwfl_begin (&tide_debuginfo_dwfl_callbacks);
      self->generation = generation;
      self->attached = FALSE;
      self->n_modules = 0;
      g_hash_table_remove_all (self->unreportable);
    }
  if (self->dwfl == NULL)
    return FALSE;
  /* The architecture comes from a module: the one of the first pc. */
  if (!self->attached && (self->n_modules > 0 || tide_unwinder_report (self, pc)))
    self->attached = dwfl_attach_state (self->dwfl, NULL, 1, &tide_unwinder_thread_callbacks,
                                        self);
  return self->attached;
}

/* ---- unwinding ------------------------------------------------------------- */

TideUnwinder *
tide_unwinder_new (TideAddressSpace *space)
{
  TideUnwinder *self = g_new0 (TideUnwinder, 1);

  self->space = space;
  self->unreportable = g_hash_table_new (g_direct_hash, g_direct_equal);
  return self;
}

void
tide_unwinder_free (TideUnwinder *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->dwfl, dwfl_end);
  g_hash_table_unref (self->unreportable);
  g_free (self);
}

static int
tide_unwinder_on_frame (Dwfl_Frame *state,
                        void       *arg)
{
  TideUnwinder *self = arg;
  Dwarf_Addr pc, lookup;
  bool activation;
  const char *path;

  if (!dwfl_frame_pc (state, &pc, &activation))
    return DWARF_CB_ABORT;
  /* A pc in no mapping is where a guess went wrong (or code made at run
   * time, which has no unwind information): nothing past it is trusted. */
  if (!tide_address_space_resolve (self->space, pc, &path, NULL))
    return DWARF_CB_ABORT;
  /* libdw unwinds this frame next, with the call frame information of
   * its file: a file not reported yet is, and the walk starts again.  A
   * return address may be one past its function's file: the call is one
   * byte back. */
  lookup = activation || pc == 0 ? pc : pc - 1;
  if (dwfl_addrmodule (self->dwfl, lookup) == NULL &&
      !g_hash_table_contains (self->unreportable, path))
    {
      self->missing_pc = lookup;
      return DWARF_CB_ABORT;
    }
  self->frames[self->n_frames++] = pc;
  self->last_lookup = lookup;
  return self->n_frames < self->max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether the call frame information of @pc says that its frame has no
 * caller: the return address is "undefined" there (_start, clone3), which
 * is how libdw's walk ends on its own.  libdw also just stops, without an
 * error, where it cannot go on, so its status cannot tell. */
static gboolean
tide_unwinder_is_outermost (TideUnwinder *self,
                            Dwarf_Addr    lookup)
{
  Dwfl_Module *module = dwfl_addrmodule (self->dwfl, lookup);
  Dwarf_CFI *cfi;
  Dwarf_Frame *frame = NULL;
  Dwarf_Op ops_mem[3], *ops = NULL;
  Dwarf_Addr bias = 0;
  size_t n_ops = 1;
  gboolean outermost;

  if (module == NULL)
    return FALSE;
  cfi = dwfl_module_eh_cfi (module, &bias);
  if (cfi == NULL || dwarf_cfi_addrframe (cfi, lookup - bias, &frame) != 0)
    {
      cfi = dwfl_module_dwarf_cfi (module, &bias);
      if (cfi == NULL || dwarf_cfi_addrframe (cfi, lookup - bias, &frame) != 0)
        return FALSE;
    }
  outermost = dwarf_frame_register (frame, TIDE_UNWIND_N_REGS - 1, ops_mem, &ops, &n_ops) == 0 &&
              n_ops == 0 && ops == ops_mem;
  free (frame);
  return outermost;
}

guint
tide_unwinder_unwind (TideUnwinder           *self,
                      const TideUnwindSample *sample,
                      guint64                *frames,
                      guint                   max_frames,
                      gboolean               *complete)
{
  *complete = FALSE;
  if (max_frames == 0 || !tide_unwinder_ready (self, sample->regs[TIDE_UNWIND_N_REGS - 1]))
    return 0;
  self->sample = sample;
  self->frames = frames;
  self->max_frames = max_frames;
  /* Each pass adds at most one file, and a stack has at most max_frames. */
  for (guint pass = 0; pass <= max_frames; pass++)
    {
      self->n_frames = 0;
      self->missing_pc = 0;
      dwfl_getthread_frames (self->dwfl, sample->tid, tide_unwinder_on_frame, self);
      if (self->missing_pc == 0)
        break;
      /* Reported, or known now not to open: the next pass goes past it. */
      tide_unwinder_report (self, self->missing_pc);
    }
  /* Whatever made the walk stop, the stack is whole only where the last
   * frame has no caller. */
  *complete = self->n_frames > 0 && self->n_frames < max_frames &&
              tide_unwinder_is_outermost (self, self->last_lookup);
  self->sample = NULL;
  self->frames = NULL;
  return self->n_frames;
}
