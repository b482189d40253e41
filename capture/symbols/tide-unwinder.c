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
 * The Dwfl lives as long as the unwinder, so the call frame information
 * that libdw parsed (.eh_frame_hdr tables, CIEs, FDEs) is parsed once per
 * file, not once per sample as a new Dwfl per sample would.
 */
#include "config.h"

#include "tide-unwinder.h"

#include "tide-debuginfo.h"

#include <elfutils/libdwfl.h>
#include <string.h>

struct _TideUnwinder
{
  TideAddressSpace       *space;
  Dwfl                   *dwfl;
  guint64                 generation;   /* of the space when last reported */
  gboolean                reported;
  gboolean                attached;     /* dwfl_attach_state succeeded */
  const TideUnwindSample *sample;       /* during tide_unwinder_unwind */
  guint64                *frames;
  guint                   n_frames;
  guint                   max_frames;
  gboolean                left_space;   /* a frame outside every mapping */
};

static const Dwfl_Callbacks tide_unwinder_dwfl_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = tide_debuginfo_find_for_dwfl,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = NULL,
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

typedef struct
{
  Dwfl       *dwfl;
  GHashTable *seen;   /* interned paths already reported */
} ReportState;

static void
tide_unwinder_report_one (guint64     start,
                          guint64     end,
                          guint64     load_bias,
                          const char *path,
                          gpointer    user_data)
{
  ReportState *r = user_data;

  /* One module per file: its text may be mapped in several pieces.  A file
   * that cannot be opened, or whose addresses overlap another's, is left
   * out; frames in it stop the walk unless a frame pointer gets past. */
  if (path[0] != '/' || !g_hash_table_add (r->seen, (gpointer) path))
    return;
  dwfl_report_elf (r->dwfl, path, path, -1, load_bias, true);
}

/* Reports the space's files again when its mappings changed; libdwfl keeps
 * a module reported again at the same place, with what it parsed. */
static void
tide_unwinder_sync_modules (TideUnwinder *self)
{
  guint64 generation = tide_address_space_get_generation (self->space);
  g_autoptr(GHashTable) seen = NULL;
  ReportState r;

  if (self->reported && generation == self->generation)
    return;
  seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  r = (ReportState) { self->dwfl, seen };
  dwfl_report_begin (self->dwfl);
  tide_address_space_foreach (self->space, tide_unwinder_report_one, &r);
  dwfl_report_end (self->dwfl, NULL, NULL);
  self->generation = generation;
  self->reported = TRUE;
  /* The architecture comes from the first module; there is none before
   * the first report. */
  if (!self->attached && g_hash_table_size (seen) > 0)
    self->attached = dwfl_attach_state (self->dwfl, NULL, 1, &tide_unwinder_thread_callbacks,
                                        self);
}

/* ---- unwinding ------------------------------------------------------------- */

TideUnwinder *
tide_unwinder_new (TideAddressSpace *space)
{
  TideUnwinder *self = g_new0 (TideUnwinder, 1);

  self->space = space;
  self->dwfl = dwfl_begin (&tide_unwinder_dwfl_callbacks);
  return self;
}

void
tide_unwinder_free (TideUnwinder *self)
{
  if (self == NULL)
    return;
  if (self->dwfl != NULL)
    dwfl_end (self->dwfl);
  g_free (self);
}

static int
tide_unwinder_on_frame (Dwfl_Frame *state,
                        void       *arg)
{
  TideUnwinder *self = arg;
  Dwarf_Addr pc;
  bool activation;

  if (!dwfl_frame_pc (state, &pc, &activation))
    return DWARF_CB_ABORT;
  /* A pc in no mapping is where a guess went wrong (or code made at run
   * time, which has no unwind information): nothing past it is trusted. */
  if (!tide_address_space_resolve (self->space, pc, NULL, NULL))
    {
      self->left_space = TRUE;
      return DWARF_CB_ABORT;
    }
  self->frames[self->n_frames++] = pc;
  return self->n_frames < self->max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

guint
tide_unwinder_unwind (TideUnwinder           *self,
                      const TideUnwindSample *sample,
                      guint64                *frames,
                      guint                   max_frames,
                      gboolean               *complete)
{
  int status;

  *complete = FALSE;
  if (self->dwfl == NULL || max_frames == 0)
    return 0;
  tide_unwinder_sync_modules (self);
  if (!self->attached)
    return 0;
  self->sample = sample;
  self->frames = frames;
  self->n_frames = 0;
  self->max_frames = max_frames;
  self->left_space = FALSE;
  status = dwfl_getthread_frames (self->dwfl, sample->tid, tide_unwinder_on_frame, self);
  /* 0: the call frame information ended the stack (an undefined return
   * address: _start, clone); -1 an error (a read outside the copy, no
   * unwind information); DWARF_CB_ABORT: stopped here. */
  *complete = status == 0 && self->n_frames > 0;
  self->sample = NULL;
  self->frames = NULL;
  return self->n_frames;
}
