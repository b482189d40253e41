/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-attach-pylayout.h: where each CPython version from 3.8 to 3.13
 * keeps its thread states, frames, code objects and strings, on a 64-bit
 * build, for `tidemark attach`: one row per version, or the offsets that
 * 3.13 publishes itself (_PyRuntime.debug_offsets).  The values are
 * private to CPython; the attach checks them against the target's own
 * thread states before it reads frames with them.
 */
#pragma once

#include <linux/types.h>

#include <glib.h>

#include "tide-attach-event.h"

G_BEGIN_DECLS

/* How a version maps instructions to lines. */
typedef enum
{
  TIDE_PY_LINES_LNOTAB,      /* 3.8, 3.9: co_lnotab, (bytes, signed lines) pairs */
  TIDE_PY_LINES_LINETABLE,   /* 3.10: co_linetable, (bytes, signed lines or -128) pairs */
  TIDE_PY_LINES_LOCATIONS,   /* 3.11+: co_linetable, the location table */
} TidePyLines;

typedef struct
{
  int     minor;                /* the versions of the row: 3.minor ... */
  int     last_minor;           /* ... to 3.last_minor */
  guint32 layout;               /* TIDE_BPF_PY_CFRAME ... (tide-attach-event.h) */
  guint16 runtime_interp_head;  /* _PyRuntimeState.interpreters.head */
  guint16 interp_tstate_head;   /* PyInterpreterState.threads.head (tstate_head) */
  guint16 tstate_next;
  guint16 tstate_interp;
  guint16 tstate_thread_id;     /* native_thread_id (3.11+), thread_id */
  guint16 tstate_frame;         /* frame, cframe, current_frame */
  guint16 cframe_current;       /* _PyCFrame.current_frame (3.11, 3.12) */
  guint16 frame_code;           /* f_code, f_executable */
  guint16 frame_previous;       /* previous, f_back */
  guint16 frame_instr;          /* prev_instr, instr_ptr, f_lasti */
  guint16 frame_entry;          /* is_entry (3.11), owner (3.12+) */
  guint16 frame_first_local;    /* localsplus, f_localsplus */
  guint16 code_firstlineno;
  guint16 code_filename;
  guint16 code_name;            /* co_qualname where there is one, else co_name */
  guint16 code_linetable;       /* co_linetable, co_lnotab */
  guint16 code_adaptive;        /* 3.11+: where the instructions start; 0 before */
  guint16 code_code;            /* 3.8-3.10: co_code, a bytes object; 0 after */
  guint16 str_ascii_data;       /* sizeof (PyASCIIObject) */
  guint16 str_compact_data;     /* sizeof (PyCompactUnicodeObject) */
  TidePyLines lines;
} TidePyLayout;

/* The row of CPython @major.@minor, NULL for a version without one. */
const TidePyLayout *tide_attach_pylayout_for          (int                  major,
                                                       int                  minor);

/* The words of _Py_DebugOffsets that 3.13 keeps at the start of its
 * _PyRuntime. */
#define TIDE_PY_DEBUG_OFFSETS_WORDS 73

typedef enum
{
  TIDE_PY_DEBUG_OFFSETS_ABSENT,   /* no cookie, or another version's: use the row */
  TIDE_PY_DEBUG_OFFSETS_TAKEN,    /* *@out has the offsets it publishes */
  TIDE_PY_DEBUG_OFFSETS_UNFIT,    /* a build whose offsets this reader cannot use */
} TidePyDebugOffsets;

/* @out (which starts as @row) with the offsets of the interpreter's own
 * _Py_DebugOffsets (@words, as read from the start of its _PyRuntime),
 * when they are those of a version of @row and fit what the readers assume: a frame
 * within the BPF program's window, objects with the usual headers, no
 * free-threaded build. */
TidePyDebugOffsets  tide_attach_pylayout_from_debug   (const TidePyLayout  *row,
                                                       const guint64       *words,
                                                       TidePyLayout        *out);

/* The BPF program's copy of @layout, for the interpreter whose _PyRuntime
 * is at @runtime. */
void                tide_attach_pylayout_fill_target  (const TidePyLayout  *layout,
                                                       guint64              runtime,
                                                       TideBpfPyTarget     *target);

G_END_DECLS
