/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideUnwinder on this test's own stack, as attach's eBPF programs copy
 * one: the registers at a point of unwind_leaf, three calls under the test
 * function, and a copy of the stack above their sp.  This file is built at
 * -O2 without frame pointers (tests/capture/meson.build), so only the call
 * frame information finds the callers.  A copy of the whole stack unwinds
 * to _start; a copy too small to hold the leaf's return address gives the
 * leaf alone, marked as cut.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tide-proc-maps.h"
#include "tide-symbolizer.h"
#include "tide-unwinder.h"

#define MAX_FRAMES 128

/* Functions expected by name: never inlined, never cloned under another
 * name (".isra.0"). */
#define UNWIND_NOINLINE __attribute__ ((noinline, noclone))

typedef struct
{
  gsize      window;     /* bytes of stack to copy above sp; G_MAXSIZE: all */
  GPtrArray *functions;  /* the unwound frames' names, innermost first */
  gboolean   complete;
} Unwound;

static volatile guint sink;

/* The top of the main thread's stack, from /proc/self/maps. */
static guint64
stack_top (void)
{
  FILE *maps = fopen ("/proc/self/maps", "r");
  char line[512];
  guint64 start, end, top = 0;

  g_assert_nonnull (maps);
  while (fgets (line, sizeof line, maps) != NULL)
    if (strstr (line, "[stack]") != NULL &&
        sscanf (line, "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x", &start, &end) == 2)
      top = end;
  fclose (maps);
  g_assert_cmpuint (top, >, 0);
  return top;
}

static char *
frame_function (TideSymbolizer   *symbolizer,
                TideAddressSpace *space,
                guint64           pc,
                gboolean          is_return_address)
{
  TideSymbol symbol = { 0 };
  const char *path;
  guint64 bias;
  char *name;

  g_assert_true (tide_address_space_resolve (space, pc, &path, &bias));
  if (!tide_symbolizer_lookup (symbolizer, path, pc - bias - (is_return_address ? 1 : 0),
                               &symbol))
    return g_strdup_printf ("%s+0x%" G_GINT64_MODIFIER "x", path, pc - bias);
  name = g_strdup (symbol.function);
  tide_symbol_clear (&symbol);
  return name;
}

/* A copy that no sanitizer checks: the stack holds ASan's redzones, and
 * the eBPF programs copy it as it is too.  Volatile, so that it does not
 * become a call to memcpy. */
#if defined(__SANITIZE_ADDRESS__)
__attribute__ ((no_sanitize_address))
#endif
static UNWIND_NOINLINE void
copy_stack (guint8       *dest,
            guint64       src,
            gsize         len)
{
  const volatile guint8 *from = (const volatile guint8 *) src;

  for (gsize i = 0; i < len; i++)
    dest[i] = from[i];
}

/* Unwinds from @regs, with @unwound->window bytes of the stack copied. */
static UNWIND_NOINLINE void
unwind_from (const guint64 *regs,
             Unwound       *unwound)
{
  g_autoptr(TideAddressSpace) space = tide_address_space_new ();
  g_autoptr(TideSymbolizer) symbolizer = tide_symbolizer_new ();
  g_autoptr(TideUnwinder) unwinder = NULL;
  guint64 sp = regs[7], frames[MAX_FRAMES];
  gsize len = MIN (unwound->window, stack_top () - sp);
  g_autofree guint8 *copy = g_malloc (len + 1);
  TideUnwindSample sample = {
    .tid = getpid (), .regs = regs, .stack_start = sp, .stack = copy, .stack_len = len,
  };
  guint n;

  copy_stack (copy, sp, len);
  g_assert_cmpuint (tide_proc_maps_load (space, getpid ()), >, 0);
  unwinder = tide_unwinder_new (space);
  n = tide_unwinder_unwind (unwinder, &sample, frames, MAX_FRAMES, &unwound->complete);
  for (guint i = 0; i < n; i++)
    {
      char *name = frame_function (symbolizer, space, frames[i], i > 0);

      g_test_message ("frame %u: %s", i, name);
      g_ptr_array_add (unwound->functions, name);
    }
}

/* The registers at this point of the function that runs it: rax to r15 in
 * DWARF order, then rip (the instruction after the lea).  rax is stored
 * before the lea reuses it. */
#define CAPTURE_REGISTERS(regs)                                             \
  __asm__ volatile ("movq %%rax, 0(%0)\n\t"   "movq %%rdx, 8(%0)\n\t"       \
                    "movq %%rcx, 16(%0)\n\t"  "movq %%rbx, 24(%0)\n\t"      \
                    "movq %%rsi, 32(%0)\n\t"  "movq %%rdi, 40(%0)\n\t"      \
                    "movq %%rbp, 48(%0)\n\t"  "movq %%rsp, 56(%0)\n\t"      \
                    "movq %%r8, 64(%0)\n\t"   "movq %%r9, 72(%0)\n\t"       \
                    "movq %%r10, 80(%0)\n\t"  "movq %%r11, 88(%0)\n\t"      \
                    "movq %%r12, 96(%0)\n\t"  "movq %%r13, 104(%0)\n\t"     \
                    "movq %%r14, 112(%0)\n\t" "movq %%r15, 120(%0)\n\t"     \
                    "leaq 0(%%rip), %%rax\n\t" "movq %%rax, 128(%0)\n\t"    \
                    : : "r" (regs) : "rax", "memory")

static UNWIND_NOINLINE void
unwind_leaf (Unwound *unwound)
{
  guint64 regs[TIDE_UNWIND_N_REGS];

  CAPTURE_REGISTERS (regs);
  /* Not a tail call: regs lives in this frame. */
  unwind_from (regs, unwound);
}

static UNWIND_NOINLINE void
unwind_middle (Unwound *unwound)
{
  unwind_leaf (unwound);
  sink++;
}

static UNWIND_NOINLINE void
unwind_outer (Unwound *unwound)
{
  unwind_middle (unwound);
  sink++;
}

static void
test_unwinder_whole_stack (void)
{
  Unwound unwound = { G_MAXSIZE, g_ptr_array_new_with_free_func (g_free), FALSE };
  const char *expected[] = {
    "unwind_leaf", "unwind_middle", "unwind_outer", "test_unwinder_whole_stack",
  };

  unwind_outer (&unwound);
  g_assert_true (unwound.complete);
  g_assert_cmpuint (unwound.functions->len, >, G_N_ELEMENTS (expected) + 1);
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (g_ptr_array_index (unwound.functions, i), ==, expected[i]);
  g_assert_cmpstr (g_ptr_array_index (unwound.functions, unwound.functions->len - 1), ==,
                   "_start");
  g_ptr_array_unref (unwound.functions);
}

/* No stack copied: the leaf's return address is out of reach. */
static void
test_unwinder_cut (void)
{
  Unwound unwound = { 0, g_ptr_array_new_with_free_func (g_free), TRUE };

  unwind_outer (&unwound);
  g_assert_false (unwound.complete);
  g_assert_cmpuint (unwound.functions->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (unwound.functions, 0), ==, "unwind_leaf");
  g_ptr_array_unref (unwound.functions);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/unwinder/whole-stack", test_unwinder_whole_stack);
  g_test_add_func ("/unwinder/cut", test_unwinder_cut);
  return g_test_run ();
}
