/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * attach-gate: an LD_PRELOAD library for tests that attach to a program
 * they cannot change (cuda-trainer).  Its constructor runs once the
 * program's libraries are mapped and before main: it prints "waiting" on
 * stderr and blocks until a line arrives on stdin, so that the test can
 * attach to a process that is loaded but has not started its work.
 */
#include <stdio.h>
#include <unistd.h>

__attribute__ ((constructor)) static void
attach_gate_wait (void)
{
  char c = 0;

  fputs ("waiting\n", stderr);
  fflush (stderr);
  while (read (STDIN_FILENO, &c, 1) == 1 && c != '\n')
    ;
}
