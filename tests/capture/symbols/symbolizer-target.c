/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * symbolizer-target.c: known functions for test-symbolizer, compiled -O0 -g
 * into the test itself and, stripped, into libtide-symtest-stripped.so.
 * test-symbolizer reads the MARK comments below to learn the expected lines,
 * so keep each MARK on the line it describes.
 */
#include "symbolizer-target.h"

void *symtest_captured_pc;

__attribute__ ((noinline)) void
symtest_capture_pc (void)
{
  symtest_captured_pc = __builtin_return_address (0);
}

__attribute__ ((noinline)) int
symtest_alpha (int x)
{                                           /* MARK:alpha-entry */
  symtest_capture_pc ();                    /* MARK:alpha-first */
  return x * 3 + 1;
}

/* Not exported: a stripped library has no name for it. */
static __attribute__ ((noinline)) int
symtest_hidden_beta (int x)
{                                           /* MARK:beta-entry */
  return x * 7 + 2;
}

int (*symtest_beta_pointer) (int) = symtest_hidden_beta;

/* Emitted under a C++ mangled name, to test demangling. */
int symtest_mangled (int x) __asm__ ("_ZN4tide7symtest7mangledEi");

__attribute__ ((noinline)) int
symtest_mangled (int x)
{                                           /* MARK:mangled-entry */
  return x - 1;
}
