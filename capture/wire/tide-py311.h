/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-py311.h: where CPython 3.11 keeps its frames, code objects and
 * strings, on a 64-bit build.  One table for both readers: the preload reads
 * them in place in the target (preload/tide-preload-pylayout.c, which checks
 * them against the C API first), and `tidemark attach` hands them to its BPF
 * program and reads code objects from outside (attach/tide-attach-python.c,
 * which checks them against the target's thread states first).
 *
 * The values are those of 3.11's headers (cpython/pystate.h,
 * internal/pycore_runtime.h, internal/pycore_interp.h,
 * internal/pycore_frame.h, cpython/code.h, cpython/unicodeobject.h,
 * cpython/bytesobject.h).  They are private to CPython, hence the checks.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum
{
  TIDE_PY311_RUNTIME_INTERP_HEAD = 40,   /* _PyRuntimeState.interpreters.head */
  TIDE_PY311_INTERP_TSTATE_HEAD  = 16,   /* PyInterpreterState.threads.head */
  TIDE_PY311_TSTATE_NEXT         = 8,    /* PyThreadState.next */
  TIDE_PY311_TSTATE_INTERP       = 16,   /* PyThreadState.interp */
  TIDE_PY311_TSTATE_CFRAME       = 56,   /* PyThreadState.cframe */
  TIDE_PY311_TSTATE_NATIVE_TID   = 160,  /* PyThreadState.native_thread_id */
  TIDE_PY311_CFRAME_CURRENT      = 8,    /* _PyCFrame.current_frame */
  TIDE_PY311_FRAME_CODE          = 32,   /* _PyInterpreterFrame.f_code */
  TIDE_PY311_FRAME_PREVIOUS      = 48,   /* _PyInterpreterFrame.previous */
  TIDE_PY311_FRAME_PREV_INSTR    = 56,   /* _PyInterpreterFrame.prev_instr */
  TIDE_PY311_FRAME_IS_ENTRY      = 68,   /* _PyInterpreterFrame.is_entry */
  TIDE_PY311_FRAME_LOCALSPLUS    = 72,   /* _PyInterpreterFrame.localsplus */
  TIDE_PY311_FRAME_OBJECT_FRAME  = 24,   /* PyFrameObject.f_frame */
  TIDE_PY311_OBJECT_TYPE         = 8,    /* PyObject.ob_type */
  TIDE_PY311_VAR_SIZE            = 16,   /* PyVarObject.ob_size */
  TIDE_PY311_TYPE_NAME           = 24,   /* PyTypeObject.tp_name */
  TIDE_PY311_CODE_FIRSTLINENO    = 72,   /* PyCodeObject.co_firstlineno */
  TIDE_PY311_CODE_FILENAME       = 112,  /* PyCodeObject.co_filename */
  TIDE_PY311_CODE_QUALNAME       = 128,  /* PyCodeObject.co_qualname */
  TIDE_PY311_CODE_LINETABLE      = 136,  /* PyCodeObject.co_linetable */
  TIDE_PY311_CODE_ADAPTIVE       = 184,  /* PyCodeObject.co_code_adaptive */
  TIDE_PY311_CODE_UNIT           = 2,    /* sizeof (_Py_CODEUNIT) */
  TIDE_PY311_BYTES_DATA          = 32,   /* PyBytesObject.ob_sval */
  TIDE_PY311_STR_LENGTH          = 16,   /* PyASCIIObject.length */
  TIDE_PY311_STR_STATE           = 32,   /* PyASCIIObject.state */
  TIDE_PY311_STR_ASCII_DATA      = 48,   /* sizeof (PyASCIIObject) */
  TIDE_PY311_STR_COMPACT_DATA    = 72,   /* sizeof (PyCompactUnicodeObject) */
  TIDE_PY311_STR_KIND_SHIFT      = 2,
  TIDE_PY311_STR_COMPACT         = 1u << 5,
  TIDE_PY311_STR_ASCII           = 1u << 6,
};

/* Appends code point @c as UTF-8 at out[n], if it fits before cap - 1. */
static inline size_t
tide_py311_put_utf8 (char     *out,
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

/* The characters of a str as UTF-8 into @out (room for @cap bytes, NUL
 * included), cut short where they do not fit or where the @readable bytes
 * of the object end; "?" for a str that is not compact (never a code
 * object's name).  A compact str keeps its characters after its header: 1,
 * 2 or 4 bytes each (its kind), after the ASCII header (@ascii_data bytes)
 * when all are ASCII, else after the compact one (@compact_data bytes).
 * Length and state are where 3.11 has them in every 64-bit CPython from
 * 3.8 to 3.13; only the header sizes differ (3.12 dropped wstr). */
static inline void
tide_py_str_utf8 (const void *str,
                  size_t      readable,
                  size_t      ascii_data,
                  size_t      compact_data,
                  char       *out,
                  size_t      cap)
{
  uint32_t state, kind;
  ptrdiff_t length;
  const unsigned char *data;
  size_t header, n = 0;

  out[0] = '\0';
  if (str == NULL || cap < 2 || readable < compact_data)
    return;
  memcpy (&state, (const char *) str + TIDE_PY311_STR_STATE, sizeof state);
  memcpy (&length, (const char *) str + TIDE_PY311_STR_LENGTH, sizeof length);
  kind = (state >> TIDE_PY311_STR_KIND_SHIFT) & 7;
  if (!(state & TIDE_PY311_STR_COMPACT) || (kind != 1 && kind != 2 && kind != 4) || length < 0)
    {
      memcpy (out, "?", 2);
      return;
    }
  header = (state & TIDE_PY311_STR_ASCII) ? ascii_data : compact_data;
  data = (const unsigned char *) str + header;
  for (ptrdiff_t i = 0; i < length && n + 1 < cap; i++)
    {
      uint32_t c = kind == 1 ? data[i] : 0;
      size_t before = n;

      if (header + (size_t) (i + 1) * kind > readable)
        break;
      if (kind == 2)
        {
          uint16_t c16;

          memcpy (&c16, data + 2 * i, sizeof c16);
          c = c16;
        }
      else if (kind == 4)
        memcpy (&c, data + 4 * i, sizeof c);
      n = tide_py311_put_utf8 (out, n, cap, c);
      if (n == before)
        break;
    }
  out[n] = '\0';
}

static inline void
tide_py311_str_utf8 (const void *str,
                     size_t      readable,
                     char       *out,
                     size_t      cap)
{
  tide_py_str_utf8 (str, readable, TIDE_PY311_STR_ASCII_DATA, TIDE_PY311_STR_COMPACT_DATA, out,
                    cap);
}
