/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * inline-leak: a leak inside a static function that the compiler inlines.
 * Built at -O2 and without -fno-inline, unlike the other targets:
 * keep_copy() is called once, so it has no code of its own (the test
 * checks its symbol is absent) and its strdup() call sits in main.
 *
 * Steps 1..8, each ended by tidemark_step(), keep one strdup() copy of a
 * 65535-character string: 65536 bytes a step, from step 1 on.
 */
#include "tidemark.h"
#include "target-util.h"

#define STEPS     8
#define COPY_LEN  65535

static char *kept[STEPS];

static void
keep_copy (int         step,
           const char *text)
{
  kept[step] = strdup (text);  /* KEEP-LINE */
  target_keep (kept[step]);
}

int
main (void)
{
  static char text[COPY_LEN + 1];

  memset (text, 'x', COPY_LEN);
  for (int step = 0; step < STEPS; step++)
    {
      text[0] = (char) ('a' + step);
      keep_copy (step, text);  /* CALL-LINE */
      tidemark_step (NULL);
    }
  for (int step = 0; step < STEPS; step++)
    target_keep (kept[step]);
  return 0;
}
