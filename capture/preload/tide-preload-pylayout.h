/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-pylayout.h: CPython's own frames, read in place.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a code object is named from, read without the GIL: its co_filename
 * and co_qualname str objects, which are immutable, and co_firstlineno. */
typedef struct
{
  const void *file_obj;
  const void *name_obj;
  int32_t     first_line;
} TidePyCodeNames;

/* What tide_pylayout_check compares the layout with: the C API, and the
 * names of the code that the checked frame runs. */
typedef struct
{
  int        (*addr2line) (void *code, int offset);   /* PyCode_Addr2Line */
  int        (*frame_line) (void *frame);             /* PyFrame_GetLineNumber */
  void      *(*frame_code) (void *frame);             /* PyFrame_GetCode: new reference */
  void      *(*frame_back) (void *frame);             /* PyFrame_GetBack: new reference */
  void       (*decref) (void *obj);
  const char  *code_file;                             /* co_filename */
  const char  *code_name;                             /* co_qualname */
  long         first_line;                            /* co_firstlineno */
} TidePyLayoutTruth;

/* Checks the layout on the running interpreter, from @frame_obj
 * (PyEval_GetFrame: a Python function that a Python function called) of
 * @tstate; GIL held.  True: the frames can be read in place from now on. */
bool        tide_pylayout_check      (const void              *tstate,
                                      void                    *frame_obj,
                                      const TidePyLayoutTruth *truth);

/* The frame that @tstate runs now, innermost, or NULL. */
const void *tide_pylayout_top        (const void *tstate);

/* The frame that called @frame, or NULL. */
const void *tide_pylayout_previous   (const void *frame);

/* True for the first frame that a C-level evaluation ran. */
bool        tide_pylayout_is_entry   (const void *frame);

/* The code object of @frame (borrowed: the frame holds it). */
void       *tide_pylayout_code       (const void *frame);

/* The line that @frame runs, 0 where unknown. */
uint32_t    tide_pylayout_line       (const void *frame);

/* The same in two halves: the byte offset of the instruction that @frame
 * runs in its code (-1 before the first; TIDE_PYLAYOUT_NO_OFFSET where it
 * is past the code), and the line of @code at that offset. */
#define TIDE_PYLAYOUT_NO_OFFSET INT32_MIN
int32_t     tide_pylayout_offset     (const void *frame);
uint32_t    tide_pylayout_line_at    (void       *code,
                                      int32_t     offset);

void        tide_pylayout_code_names (const void      *code,
                                      TidePyCodeNames *out);

/* The characters of a str as UTF-8 into @out (room for @cap bytes, NUL
 * included), cut short where they do not fit; "?" for a str that is not
 * compact (never a code object's name).  Reads only the object. */
void        tide_pylayout_str_utf8   (const void *str,
                                      char       *out,
                                      size_t      cap);
