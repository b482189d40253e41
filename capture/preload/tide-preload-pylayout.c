/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-pylayout.c: CPython 3.11's frames, read in place.
 *
 * A profile function costs the program far more than the allocations it
 * serves: with any profile function set, 3.11 runs every instruction through
 * its tracing path, unspecialized.  On 3.11 the frames can instead be read
 * where the interpreter keeps them, at a sampled allocation only: the
 * thread state's current _PyCFrame names the innermost _PyInterpreterFrame,
 * and each frame names its code, the instruction it runs and the frame that
 * called it.  This is what tracemalloc reads inside its allocator hook.
 *
 * No GIL is needed: a thread's frames live in its own data stack, and only
 * that thread pushes or pops them; while it is inside malloc, from Python
 * code or from a C function that released the GIL, its frames are suspended
 * under it, and each holds a reference to its code object.
 *
 * The offsets are those of 3.11's headers on a 64-bit build, in the table
 * that attach shares (wire/tide-py311.h).  They are private, so they are
 * checked against the C API on the running interpreter before they are
 * trusted (tide_pylayout_check): a build they do not fit keeps the profile
 * function.
 */
#include "config.h"

#include "tide-preload-pylayout.h"
#include "tide-py311.h"

#include <stddef.h>
#include <string.h>

static int (*tide_pylayout_addr2line) (void *, int);

static inline const void *
field_ptr (const void *obj,
           size_t      offset)
{
  const void *value;

  memcpy (&value, (const char *) obj + offset, sizeof value);
  return value;
}

const void *
tide_pylayout_top (const void *tstate)
{
  const void *cframe = field_ptr (tstate, TIDE_PY311_TSTATE_CFRAME);

  return cframe != NULL ? field_ptr (cframe, TIDE_PY311_CFRAME_CURRENT) : NULL;
}

const void *
tide_pylayout_previous (const void *frame)
{
  return field_ptr (frame, TIDE_PY311_FRAME_PREVIOUS);
}

bool
tide_pylayout_is_entry (const void *frame)
{
  return *((const char *) frame + TIDE_PY311_FRAME_IS_ENTRY) != 0;
}

void *
tide_pylayout_code (const void *frame)
{
  return (void *) field_ptr (frame, TIDE_PY311_FRAME_CODE);
}

int32_t
tide_pylayout_offset (const void *frame)
{
  const void *code = tide_pylayout_code (frame);
  const char *instr = field_ptr (frame, TIDE_PY311_FRAME_PREV_INSTR);
  const char *start = (const char *) code + TIDE_PY311_CODE_ADAPTIVE;
  ptrdiff_t size, offset;

  memcpy (&size, (const char *) code + TIDE_PY311_VAR_SIZE, sizeof size);
  offset = instr - start;
  /* A frame that has not run its first instruction points one unit before
   * its code: its first line, as the interpreter itself reports. */
  if (offset >= size * TIDE_PY311_CODE_UNIT || offset > INT32_MAX)
    return TIDE_PYLAYOUT_NO_OFFSET;
  return offset < 0 ? -1 : (int32_t) offset;
}

uint32_t
tide_pylayout_line_at (void    *code,
                       int32_t  offset)
{
  int line;

  if (offset == TIDE_PYLAYOUT_NO_OFFSET)
    return 0;
  line = tide_pylayout_addr2line (code, offset);
  return line > 0 ? (uint32_t) line : 0;
}

uint32_t
tide_pylayout_line (const void *frame)
{
  return tide_pylayout_line_at (tide_pylayout_code (frame), tide_pylayout_offset (frame));
}

void
tide_pylayout_str_utf8 (const void *str,
                        char       *out,
                        size_t      cap)
{
  /* In place: the whole object can be read. */
  tide_py311_str_utf8 (str, SIZE_MAX, out, cap);
}

void
tide_pylayout_code_names (const void      *code,
                          TidePyCodeNames *out)
{
  int32_t first_line;

  memcpy (&first_line, (const char *) code + TIDE_PY311_CODE_FIRSTLINENO, sizeof first_line);
  out->file_obj = field_ptr (code, TIDE_PY311_CODE_FILENAME);
  out->name_obj = field_ptr (code, TIDE_PY311_CODE_QUALNAME);
  out->first_line = first_line;
}

static bool
same_string (const void *str,
             const char *truth)
{
  char read[1024];

  tide_pylayout_str_utf8 (str, read, sizeof read);
  return truth != NULL && strcmp (read, truth) == 0;
}

/* The frame that called @frame_obj's, as the C API sees it. */
static const void *
caller_of (void                    *frame_obj,
           const TidePyLayoutTruth *truth)
{
  void *back = truth->frame_back (frame_obj);
  const void *frame;

  if (back == NULL)
    return NULL;
  frame = field_ptr (back, TIDE_PY311_FRAME_OBJECT_FRAME);
  truth->decref (back);
  return frame;
}

bool
tide_pylayout_check (const void              *tstate,
                     void                    *frame_obj,
                     const TidePyLayoutTruth *truth)
{
  const void *top;
  void *code;
  TidePyCodeNames names;
  bool ok;

  if (tstate == NULL || frame_obj == NULL || truth->addr2line == NULL
      || truth->frame_line == NULL || truth->frame_code == NULL || truth->frame_back == NULL)
    return false;
  tide_pylayout_addr2line = truth->addr2line;
  top = tide_pylayout_top (tstate);
  if (top == NULL || top != field_ptr (frame_obj, TIDE_PY311_FRAME_OBJECT_FRAME))
    return false;
  /* Called from Python code, in the same C evaluation. */
  if (tide_pylayout_is_entry (top) || tide_pylayout_previous (top) != caller_of (frame_obj, truth))
    return false;
  code = truth->frame_code (frame_obj);
  ok = code != NULL && code == tide_pylayout_code (top);
  if (ok)
    {
      tide_pylayout_code_names (code, &names);
      ok = (int) tide_pylayout_line (top) == truth->frame_line (frame_obj)
           && same_string (names.file_obj, truth->code_file)
           && same_string (names.name_obj, truth->code_name)
           && names.first_line == truth->first_line;
    }
  if (code != NULL)
    truth->decref (code);
  return ok;
}
