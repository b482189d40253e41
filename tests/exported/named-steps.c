/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * named-steps: a program that marks steps and scopes as a caller in another
 * language would, by looking the documented names up with dlsym (no
 * tidemark.h).  NAMED_STEPS steps; in each, one block of NAMED_BLOCK bytes
 * allocated inside the scope "named.block" and kept.  Exits 3 when a name
 * is not there, so that a recording of it fails.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "named-steps.h"

int
main (void)
{
  void (*step) (const char *) = (void (*) (const char *)) dlsym (RTLD_DEFAULT, "tidemark_step");
  void (*push) (const char *) = (void (*) (const char *)) dlsym (RTLD_DEFAULT,
                                                                  "tidemark_scope_push");
  void (*pop) (void) = (void (*) (void)) dlsym (RTLD_DEFAULT, "tidemark_scope_pop");
  static char *blocks[NAMED_STEPS];

  if (step == NULL || push == NULL || pop == NULL)
    {
      fprintf (stderr, "named-steps: tidemark_step, tidemark_scope_push or tidemark_scope_pop "
                       "is not there\n");
      return 3;
    }
  for (int i = 0; i < NAMED_STEPS; i++)
    {
      char label[32];

      push ("named.block");
      blocks[i] = malloc (NAMED_BLOCK);
      memset (blocks[i], i + 1, NAMED_BLOCK);
      pop ();
      snprintf (label, sizeof label, "named-%d", i + 1);
      step (label);
    }
  printf ("named-steps: %d steps, first byte %d\n", NAMED_STEPS, blocks[NAMED_STEPS - 1][0]);
  return 0;
}
