/* SPDX-License-Identifier: MIT
 * Copyright 2026 The Tidemark authors
 *
 * tidemark.h: mark training steps and scopes for the Tidemark memory profiler.
 *
 * Header-only.  Each call looks its implementation up once with dlsym; the
 * implementation lives in libtidemark-preload.so, which `tidemark record`
 * preloads.  A program that is not profiled finds nothing and every call is a
 * cheap no-op, so the header can stay in production code.  Link with -ldl on
 * glibc older than 2.34.
 *
 *   for (int i = 0; i < n_steps; i++)
 *     {
 *       tidemark_scope_push ("forward");
 *       forward ();
 *       tidemark_scope_pop ();
 *       tidemark_step (NULL);      // end of one training step
 *     }
 */
#pragma once

#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The symbols that libtidemark-preload.so exports. */
void tidemark_preload_step (const char *label);
void tidemark_preload_scope_push (const char *name);
void tidemark_preload_scope_pop (void);

#ifndef TIDEMARK_PRELOAD_IMPLEMENTATION

/* `tidemark attach` finds this function by name in the binary and puts a
 * uprobe on it, so that steps are seen in a process that was started
 * without the preload library.  It does nothing.  Weak, so that every file
 * that includes this header may define it and the linker keeps one; noinline,
 * used and the empty asm keep the function and the call to it. */
void tidemark_attach_step_marker (const char *label);

__attribute__ ((weak, noinline, used)) void
tidemark_attach_step_marker (const char *label)
{
  __asm__ __volatile__ ("" : : "r" (label) : "memory");
}

static inline void *
tidemark__lookup (const char *symbol)
{
  /* RTLD_DEFAULT searches the preloaded library first; NULL when absent. */
  return dlsym (RTLD_DEFAULT, symbol);
}

/* Ends the current step of this process.  label may be NULL. */
static inline void
tidemark_step (const char *label)
{
  static void (*fn) (const char *);
  static int looked_up;

  tidemark_attach_step_marker (label);
  if (!looked_up)
    {
      *(void **) &fn = tidemark__lookup ("tidemark_preload_step");
      looked_up = 1;
    }
  if (fn != NULL)
    fn (label);
}

/* Enters a named scope on this thread; allocations made inside carry it. */
static inline void
tidemark_scope_push (const char *name)
{
  static void (*fn) (const char *);
  static int looked_up;

  if (!looked_up)
    {
      *(void **) &fn = tidemark__lookup ("tidemark_preload_scope_push");
      looked_up = 1;
    }
  if (fn != NULL)
    fn (name);
}

/* Leaves the innermost scope of this thread. */
static inline void
tidemark_scope_pop (void)
{
  static void (*fn) (void);
  static int looked_up;

  if (!looked_up)
    {
      *(void **) &fn = tidemark__lookup ("tidemark_preload_scope_pop");
      looked_up = 1;
    }
  if (fn != NULL)
    fn ();
}

#endif /* TIDEMARK_PRELOAD_IMPLEMENTATION */

#ifdef __cplusplus
}
#endif
