/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The layouts of CPython 3.8 to 3.13 (tide-attach-pylayout.h).
 *
 * The rows hold the offsets of each version's headers on a 64-bit
 * release build (cpython/pystate.h, internal/pycore_interp.h,
 * internal/pycore_runtime.h, frameobject.h or internal/pycore_frame.h,
 * cpython/code.h, cpython/unicodeobject.h); 3.11's come from the table that
 * the preload shares (wire/tide-py311.h).  What changes across versions:
 *
 * - 3.8-3.10 chain heap PyFrameObjects (f_back), each run by a C call of
 *   the evaluation loop of its own, with the instruction in f_lasti (bytes
 *   in 3.8 and 3.9, code units in 3.10); their thread states name the
 *   thread by pthread_self () only.
 * - 3.11 and 3.12 chain _PyInterpreterFrames from tstate->cframe; 3.11
 *   marks an evaluation's first frame with is_entry, 3.12 pushes a shim
 *   frame owned by the C stack below it.  3.13 has no _PyCFrame.
 * - co_qualname exists from 3.11; the line tables have three formats.
 * - 3.12 dropped the wstr field of str objects: their headers shrank.
 */
#include "config.h"

#include "tide-attach-pylayout.h"

#include <string.h>

#include "tide-py311.h"

static const TidePyLayout layouts[] = {
  {
    .minor = 8, .last_minor = 9,   /* 3.9 kept 3.8's layout */
    .layout = TIDE_BPF_PY_FRAME_OBJECTS | TIDE_BPF_PY_PTHREAD_ID,
    .runtime_interp_head = 32, .interp_tstate_head = 8,
    .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 176, .tstate_frame = 24,
    .frame_code = 32, .frame_previous = 24, .frame_instr = 104, .frame_first_local = 360,
    .code_firstlineno = 40, .code_filename = 104, .code_name = 112, .code_linetable = 120,
    .code_code = 48,
    .str_ascii_data = 48, .str_compact_data = 72,
    .lines = TIDE_PY_LINES_LNOTAB,
  },
  {
    .minor = 10, .last_minor = 10,
    .layout = TIDE_BPF_PY_FRAME_OBJECTS | TIDE_BPF_PY_PTHREAD_ID | TIDE_BPF_PY_LASTI_UNITS,
    .runtime_interp_head = 32, .interp_tstate_head = 8,
    .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 176, .tstate_frame = 24,
    .frame_code = 32, .frame_previous = 24, .frame_instr = 96, .frame_first_local = 352,
    .code_firstlineno = 40, .code_filename = 104, .code_name = 112, .code_linetable = 120,
    .code_code = 48,
    .str_ascii_data = 48, .str_compact_data = 72,
    .lines = TIDE_PY_LINES_LINETABLE,
  },
  {
    .minor = 11, .last_minor = 11,
    .layout = TIDE_BPF_PY_CFRAME,
    .runtime_interp_head = TIDE_PY311_RUNTIME_INTERP_HEAD,
    .interp_tstate_head = TIDE_PY311_INTERP_TSTATE_HEAD,
    .tstate_next = TIDE_PY311_TSTATE_NEXT, .tstate_interp = TIDE_PY311_TSTATE_INTERP,
    .tstate_thread_id = TIDE_PY311_TSTATE_NATIVE_TID, .tstate_frame = TIDE_PY311_TSTATE_CFRAME,
    .cframe_current = TIDE_PY311_CFRAME_CURRENT,
    .frame_code = TIDE_PY311_FRAME_CODE, .frame_previous = TIDE_PY311_FRAME_PREVIOUS,
    .frame_instr = TIDE_PY311_FRAME_PREV_INSTR, .frame_entry = TIDE_PY311_FRAME_IS_ENTRY,
    .frame_first_local = TIDE_PY311_FRAME_LOCALSPLUS,
    .code_firstlineno = TIDE_PY311_CODE_FIRSTLINENO, .code_filename = TIDE_PY311_CODE_FILENAME,
    .code_name = TIDE_PY311_CODE_QUALNAME, .code_linetable = TIDE_PY311_CODE_LINETABLE,
    .code_adaptive = TIDE_PY311_CODE_ADAPTIVE,
    .str_ascii_data = TIDE_PY311_STR_ASCII_DATA, .str_compact_data = TIDE_PY311_STR_COMPACT_DATA,
    .lines = TIDE_PY_LINES_LOCATIONS,
  },
  {
    .minor = 12, .last_minor = 12,
    .layout = TIDE_BPF_PY_CFRAME | TIDE_BPF_PY_OWNER,
    .runtime_interp_head = 40, .interp_tstate_head = 72,
    .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 144, .tstate_frame = 56,
    .cframe_current = 0,
    .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_entry = 70,
    .frame_first_local = 72,
    .code_firstlineno = 68, .code_filename = 112, .code_name = 128, .code_linetable = 136,
    .code_adaptive = 192,
    .str_ascii_data = 40, .str_compact_data = 56,
    .lines = TIDE_PY_LINES_LOCATIONS,
  },
  {
    .minor = 13, .last_minor = 13,
    .layout = TIDE_BPF_PY_OWNER,
    .runtime_interp_head = 632, .interp_tstate_head = 7344,
    .tstate_next = 8, .tstate_interp = 16, .tstate_thread_id = 160, .tstate_frame = 72,
    .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_entry = 70,
    .frame_first_local = 72,
    .code_firstlineno = 68, .code_filename = 112, .code_name = 128, .code_linetable = 136,
    .code_adaptive = 200,
    .str_ascii_data = 40, .str_compact_data = 56,
    .lines = TIDE_PY_LINES_LOCATIONS,
  },
};

const TidePyLayout *
tide_attach_pylayout_for (int major,
                          int minor)
{
  for (guint i = 0; major == 3 && i < G_N_ELEMENTS (layouts); i++)
    if (minor >= layouts[i].minor && minor <= layouts[i].last_minor)
      return &layouts[i];
  return NULL;
}

/* The words of 3.13's _Py_DebugOffsets that the readers use (its
 * internal/pycore_runtime.h: each group starts with its struct's size). */
enum
{
  DEBUG_VERSION            = 1,    /* PY_VERSION_HEX */
  DEBUG_FREE_THREADED      = 2,
  DEBUG_INTERPRETERS_HEAD  = 5,
  DEBUG_THREADS_HEAD       = 9,
  DEBUG_TSTATE_NEXT        = 21,
  DEBUG_TSTATE_INTERP      = 22,
  DEBUG_TSTATE_FRAME       = 23,
  DEBUG_TSTATE_NATIVE_TID  = 25,
  DEBUG_FRAME_PREVIOUS     = 29,
  DEBUG_FRAME_EXECUTABLE   = 30,
  DEBUG_FRAME_INSTR_PTR    = 31,
  DEBUG_FRAME_LOCALSPLUS   = 32,
  DEBUG_FRAME_OWNER        = 33,
  DEBUG_CODE_FILENAME      = 35,
  DEBUG_CODE_QUALNAME      = 37,
  DEBUG_CODE_LINETABLE     = 38,
  DEBUG_CODE_FIRSTLINENO   = 39,
  DEBUG_CODE_ADAPTIVE      = 43,
  DEBUG_OB_TYPE            = 45,
  DEBUG_TP_NAME            = 47,
  DEBUG_BYTES_OB_SIZE      = 65,
  DEBUG_BYTES_OB_SVAL      = 66,
  DEBUG_STR_STATE          = 68,
  DEBUG_STR_LENGTH         = 69,
  DEBUG_STR_ASCII_SIZE     = 70,
};

G_STATIC_ASSERT (DEBUG_STR_ASCII_SIZE < TIDE_PY_DEBUG_OFFSETS_WORDS);

/* A pointer field of a frame that the BPF program reads from its window. */
static gboolean
fits_frame_window (guint64 offset)
{
  return offset % 8 == 0 && offset + 8 <= TIDE_BPF_PY_FRAME_WINDOW;
}

TidePyDebugOffsets
tide_attach_pylayout_from_debug (const TidePyLayout *row,
                                 const guint64      *words,
                                 TidePyLayout       *out)
{
  const guint64 *w = words;
  guint64 version = w[DEBUG_VERSION], minor = (version >> 16) & 0xff;
  guint64 state_fields[] = {
    w[DEBUG_INTERPRETERS_HEAD], w[DEBUG_THREADS_HEAD], w[DEBUG_TSTATE_NEXT],
    w[DEBUG_TSTATE_INTERP], w[DEBUG_TSTATE_FRAME], w[DEBUG_TSTATE_NATIVE_TID],
  };
  guint64 code_fields[] = {
    w[DEBUG_CODE_FILENAME], w[DEBUG_CODE_QUALNAME], w[DEBUG_CODE_LINETABLE],
    w[DEBUG_CODE_FIRSTLINENO], w[DEBUG_CODE_ADAPTIVE],
  };

  *out = *row;
  if (memcmp (w, "xdebugpy", 8) != 0 || (version >> 24) != 3 ||
      minor < (guint64) row->minor || minor > (guint64) row->last_minor)
    return TIDE_PY_DEBUG_OFFSETS_ABSENT;
  if (w[DEBUG_FREE_THREADED] != 0)
    return TIDE_PY_DEBUG_OFFSETS_UNFIT;
  for (guint i = 0; i < G_N_ELEMENTS (state_fields); i++)
    if (state_fields[i] % 8 != 0 || state_fields[i] > G_MAXUINT16 - 8)
      return TIDE_PY_DEBUG_OFFSETS_UNFIT;
  for (guint i = 0; i < G_N_ELEMENTS (code_fields); i++)
    if (code_fields[i] % 4 != 0 || code_fields[i] > 4096)
      return TIDE_PY_DEBUG_OFFSETS_UNFIT;
  if (!fits_frame_window (w[DEBUG_FRAME_PREVIOUS]) ||
      !fits_frame_window (w[DEBUG_FRAME_EXECUTABLE]) ||
      !fits_frame_window (w[DEBUG_FRAME_INSTR_PTR]) ||
      !fits_frame_window (w[DEBUG_FRAME_LOCALSPLUS]) ||
      w[DEBUG_FRAME_OWNER] >= TIDE_BPF_PY_FRAME_WINDOW)
    return TIDE_PY_DEBUG_OFFSETS_UNFIT;
  /* What every version has, and the readers take for granted. */
  if (w[DEBUG_OB_TYPE] != TIDE_PY311_OBJECT_TYPE || w[DEBUG_TP_NAME] != TIDE_PY311_TYPE_NAME ||
      w[DEBUG_BYTES_OB_SIZE] != TIDE_PY311_VAR_SIZE ||
      w[DEBUG_BYTES_OB_SVAL] != TIDE_PY311_BYTES_DATA ||
      w[DEBUG_STR_STATE] != TIDE_PY311_STR_STATE || w[DEBUG_STR_LENGTH] != TIDE_PY311_STR_LENGTH ||
      (w[DEBUG_STR_ASCII_SIZE] != 40 && w[DEBUG_STR_ASCII_SIZE] != 48))
    return TIDE_PY_DEBUG_OFFSETS_UNFIT;
  out->runtime_interp_head = (guint16) w[DEBUG_INTERPRETERS_HEAD];
  out->interp_tstate_head = (guint16) w[DEBUG_THREADS_HEAD];
  out->tstate_next = (guint16) w[DEBUG_TSTATE_NEXT];
  out->tstate_interp = (guint16) w[DEBUG_TSTATE_INTERP];
  out->tstate_frame = (guint16) w[DEBUG_TSTATE_FRAME];
  out->tstate_thread_id = (guint16) w[DEBUG_TSTATE_NATIVE_TID];
  out->frame_previous = (guint16) w[DEBUG_FRAME_PREVIOUS];
  out->frame_code = (guint16) w[DEBUG_FRAME_EXECUTABLE];
  out->frame_instr = (guint16) w[DEBUG_FRAME_INSTR_PTR];
  out->frame_first_local = (guint16) w[DEBUG_FRAME_LOCALSPLUS];
  out->frame_entry = (guint16) w[DEBUG_FRAME_OWNER];
  out->code_filename = (guint16) w[DEBUG_CODE_FILENAME];
  out->code_name = (guint16) w[DEBUG_CODE_QUALNAME];
  out->code_linetable = (guint16) w[DEBUG_CODE_LINETABLE];
  out->code_firstlineno = (guint16) w[DEBUG_CODE_FIRSTLINENO];
  out->code_adaptive = (guint16) w[DEBUG_CODE_ADAPTIVE];
  out->str_ascii_data = (guint16) w[DEBUG_STR_ASCII_SIZE];
  /* PyCompactUnicodeObject adds utf8_length and utf8 to it. */
  out->str_compact_data = out->str_ascii_data + 16;
  return TIDE_PY_DEBUG_OFFSETS_TAKEN;
}

void
tide_attach_pylayout_fill_target (const TidePyLayout *layout,
                                  guint64             runtime,
                                  TideBpfPyTarget    *target)
{
  *target = (TideBpfPyTarget) {
    .runtime = runtime,
    .runtime_interp_head = layout->runtime_interp_head,
    .interp_tstate_head = layout->interp_tstate_head,
    .tstate_next = layout->tstate_next,
    .tstate_thread_id = layout->tstate_thread_id,
    .tstate_frame = layout->tstate_frame,
    .cframe_current = layout->cframe_current,
    .frame_code = layout->frame_code,
    .frame_previous = layout->frame_previous,
    .frame_instr = layout->frame_instr,
    .frame_entry = layout->frame_entry,
    .frame_first_local = layout->frame_first_local,
    .code_adaptive = layout->code_adaptive,
    .layout = layout->layout,
  };
}
