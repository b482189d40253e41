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
 * The offsets are those of 3.11's headers (cpython/pystate.h,
 * internal/pycore_frame.h, cpython/code.h, cpython/unicodeobject.h) on a
 * 64-bit build.  They are private, so they are checked against the C API
 * on the running interpreter before they are trusted (tide_pylayout_check):
 * a build they do not fit keeps the profile function.
 */
#include "config.h"

#include "tide-preload-pylayout.h"

#include <stddef.h>
#include <string.h>

enum
{
  TSTATE_CFRAME         = 56,   /* PyThreadState.cframe */
  CFRAME_CURRENT_FRAME  = 8,    /* _PyCFrame.current_frame */
  FRAME_CODE            = 32,   /* _PyInterpreterFrame.f_code */
  FRAME_PREVIOUS        = 48,   /* _PyInterpreterFrame.previous */
  FRAME_PREV_INSTR      = 56,   /* _PyInterpreterFrame.prev_instr */
  FRAME_IS_ENTRY        = 68,   /* _PyInterpreterFrame.is_entry */
  FRAME_OBJECT_FRAME    = 24,   /* PyFrameObject.f_frame */
  VAR_SIZE              = 16,   /* PyVarObject.ob_size */
  CODE_FIRSTLINENO      = 72,   /* PyCodeObject.co_firstlineno */
  CODE_FILENAME         = 112,  /* PyCodeObject.co_filename */
  CODE_QUALNAME         = 128,  /* PyCodeObject.co_qualname */
  CODE_ADAPTIVE         = 184,  /* PyCodeObject.co_code_adaptive */
  CODE_UNIT             = 2,    /* sizeof (_Py_CODEUNIT) */
  STR_LENGTH            = 16,   /* PyASCIIObject.length */
  STR_STATE             = 32,   /* PyASCIIObject.state */
  STR_ASCII_DATA        = 48,   /* sizeof (PyASCIIObject) */
  STR_COMPACT_DATA      = 72,   /* sizeof (PyCompactUnicodeObject) */
  STR_STATE_KIND_SHIFT  = 2,
  STR_STATE_COMPACT     = 1u << 5,
  STR_STATE_ASCII       = 1u << 6,
};

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
  const void *cframe = field_ptr (tstate, TSTATE_CFRAME);

  return cframe != NULL ? field_ptr (cframe, CFRAME_CURRENT_FRAME) : NULL;
}

const void *
tide_pylayout_previous (const void *frame)
{
  return field_ptr (frame, FRAME_PREVIOUS);
}

bool
tide_pylayout_is_entry (const void *frame)
{
  return *((const char *) frame + FRAME_IS_ENTRY) != 0;
}

void *
tide_pylayout_code (const void *frame)
{
  return (void *) field_ptr (frame, FRAME_CODE);
}

uint32_t
tide_pylayout_line (const void *frame)
{
  void *code = tide_pylayout_code (frame);
  const char *instr = field_ptr (frame, FRAME_PREV_INSTR);
  const char *start = (const char *) code + CODE_ADAPTIVE;
  ptrdiff_t size, offset;
  int line;

  memcpy (&size, (const char *) code + VAR_SIZE, sizeof size);
  offset = instr - start;
  /* A frame that has not run its first instruction points one unit before
   * its code: its first line, as the interpreter itself reports. */
  if (offset >= size * CODE_UNIT)
    return 0;
  line = tide_pylayout_addr2line (code, offset < 0 ? -1 : (int) offset);
  return line > 0 ? (uint32_t) line : 0;
}

/* Appends code point @c as UTF-8 at out[n], if it fits before cap - 1. */
static size_t
put_utf8 (char     *out,
          size_t    n,
          size_t    cap,
          uint32_t  c)
{
  unsigned char b[4];
  size_t len;

  if (c < 0x80)
    b[0] = (unsigned char) c, len = 1;
  else if (c < 0x800)
    b[0] = 0xc0 | (c >> 6), b[1] = 0x80 | (c & 0x3f), len = 2;
  else if (c < 0x10000)
    b[0] = 0xe0 | (c >> 12), b[1] = 0x80 | ((c >> 6) & 0x3f), b[2] = 0x80 | (c & 0x3f), len = 3;
  else
    b[0] = 0xf0 | (c >> 18), b[1] = 0x80 | ((c >> 12) & 0x3f),
    b[2] = 0x80 | ((c >> 6) & 0x3f), b[3] = 0x80 | (c & 0x3f), len = 4;
  if (n + len >= cap)
    return n;
  memcpy (out + n, b, len);
  return n + len;
}

/* A compact str keeps its characters after its header: 1, 2 or 4 bytes
 * each (its kind), after the ASCII header when all are ASCII. */
void
tide_pylayout_str_utf8 (const void *str,
                        char       *out,
                        size_t      cap)
{
  uint32_t state, kind;
  ptrdiff_t length;
  const unsigned char *data;
  size_t n = 0;

  out[0] = '\0';
  if (str == NULL || cap < 2)
    return;
  memcpy (&state, (const char *) str + STR_STATE, sizeof state);
  memcpy (&length, (const char *) str + STR_LENGTH, sizeof length);
  kind = (state >> STR_STATE_KIND_SHIFT) & 7;
  if (!(state & STR_STATE_COMPACT) || (kind != 1 && kind != 2 && kind != 4) || length < 0)
    {
      memcpy (out, "?", 2);
      return;
    }
  data = (const unsigned char *) str + ((state & STR_STATE_ASCII) ? STR_ASCII_DATA
                                                                  : STR_COMPACT_DATA);
  for (ptrdiff_t i = 0; i < length && n + 1 < cap; i++)
    {
      uint32_t c = kind == 1 ? data[i] : 0;
      size_t before = n;

      if (kind == 2)
        {
          uint16_t c16;

          memcpy (&c16, data + 2 * i, sizeof c16);
          c = c16;
        }
      else if (kind == 4)
        memcpy (&c, data + 4 * i, sizeof c);
      n = put_utf8 (out, n, cap, c);
      if (n == before)
        break;
    }
  out[n] = '\0';
}

void
tide_pylayout_code_names (const void      *code,
                          TidePyCodeNames *out)
{
  int32_t first_line;

  memcpy (&first_line, (const char *) code + CODE_FIRSTLINENO, sizeof first_line);
  out->file_obj = field_ptr (code, CODE_FILENAME);
  out->name_obj = field_ptr (code, CODE_QUALNAME);
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
  frame = field_ptr (back, FRAME_OBJECT_FRAME);
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
  if (top == NULL || top != field_ptr (frame_obj, FRAME_OBJECT_FRAME))
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
