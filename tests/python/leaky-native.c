/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A native library that leaks: each call of tide_test_native_leak keeps the
 * block it allocated.  Called from Python through ctypes.
 */
#include <stdlib.h>
#include <string.h>

__attribute__ ((visibility ("default"), noinline)) void *
tide_test_native_leak (size_t n_bytes)
{
  void *block = malloc (n_bytes);

  if (block != NULL)
    memset (block, 0x5a, n_bytes);
  /* The caller forgets it: leaked. */
  return block;
}
