/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-stack-table.h: turns the raw return addresses of a record into a
 * stack id of the trace: identical stacks share one.
 *
 * A frame is (ELF file, offset in it), shared by every process that maps the
 * file; a stack is its frames, outermost first.  Both are interned here, on
 * the recorder's event thread, and written at once: a frame with its module
 * and offset, a stack as one row of frame ids.
 * Function, file and line come from a symbolizer thread, so a large library
 * being indexed by libdw never stalls the sockets; it asks the symbol cache
 * (tide-symbol-cache.h) first and saves what it resolved once every frame
 * is written, while the trace's writer finishes.
 */
#pragma once

#include <glib.h>

#include "tide-address-space.h"
#include "tide-trace-writer.h"

G_BEGIN_DECLS

typedef struct _TideStackTable TideStackTable;

/* A return address of this value stands for frames the unwinder could not
 * recover: it is stored as one TIDE_FRAME_MISSING frame.  No user address,
 * and bit 63 (Python frames, tide-wire.h) is clear. */
#define TIDE_STACK_FRAMES_MISSING G_GUINT64_CONSTANT (0x7fffffffffffffff)

/* @symbol_cache_dir: where resolved frames are kept across recordings, or
 * NULL for none. */
TideStackTable *tide_stack_table_new     (TideTraceWriter  *writer,
                                          const char       *symbol_cache_dir);
gint64          tide_stack_table_intern  (TideStackTable   *self,
                                          TideAddressSpace *space,
                                          const guint64    *return_addresses,
                                          guint             n_frames);
/* Like tide_stack_table_intern, for stacks that may hold Python frames
 * (tide-wire.h, TIDE_WIRE_PYFRAME_BIT): @pycodes maps a process's
 * PYFRAME_DEF ids to TidePyCode*. */
typedef struct
{
  char       *file;
  char       *function;
  gint        first_line;
  GHashTable *frame_ids;   /* line -> frame id: the stack table's, made on first use */
} TidePyCode;

gint64          tide_stack_table_intern_mixed (TideStackTable   *self,
                                               TideAddressSpace *space,
                                               GHashTable       *pycodes,
                                               const guint64    *frames,
                                               guint             n_frames);
/* Like tide_stack_table_intern_mixed, for a stack whose outermost
 * @n_known frames are those of a stack interned before, in the same
 * address space and with the same Python code definitions: @path holds
 * that stack's frame ids, outermost first, and is given this stack's.  The
 * shared frames are not looked up again: consecutive stacks of a process
 * share most of their callers. */
gint64          tide_stack_table_intern_path (TideStackTable   *self,
                                              TideAddressSpace *space,
                                              GHashTable       *pycodes,
                                              const guint64    *frames,
                                              guint             n_frames,
                                              guint             n_known,
                                              GArray           *path);
void            tide_py_code_free        (TidePyCode       *code);
guint           tide_stack_table_get_n_frames (TideStackTable *self);
void            tide_stack_table_resolve_pending (TideStackTable   *self,
                                                  TideAddressSpace *space);
void            tide_stack_table_send_frames   (TideStackTable *self);
void            tide_stack_table_finish_frames (TideStackTable *self);
void            tide_stack_table_free    (TideStackTable   *self);

G_END_DECLS
