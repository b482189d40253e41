/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * exec-while-stopped: one pid, three images, two of which connect to the
 * recorder while it cannot accept them, so that it takes both in at once.
 *
 *   first   ends a step, stops its parent, the recorder (SIGSTOP), and
 *           execs itself;
 *   middle  execs itself again;
 *   last    keeps 1 MiB, lets the recorder go on (SIGCONT) 100 ms later,
 *           ends a step and exits 0.
 *
 * Each image's preload connects and says HELLO as the image starts.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tidemark.h"

static int
exec_self (const char *argv0,
           const char *next)
{
  execl ("/proc/self/exe", argv0, next, (char *) NULL);
  /* Never leave the recorder stopped. */
  kill (getppid (), SIGCONT);
  perror ("execl");
  return 2;
}

int
main (int    argc,
      char **argv)
{
  const char *image = argc > 1 ? argv[1] : "first";
  volatile char *kept;

  if (strcmp (image, "first") == 0)
    {
      /* Met by the recorder before it stops: with --sync-steps the step
       * waits for it. */
      tidemark_step ("first");
      if (kill (getppid (), SIGSTOP) != 0)
        return 2;
      return exec_self (argv[0], "middle");
    }
  if (strcmp (image, "middle") == 0)
    return exec_self (argv[0], "last");
  /* Kept before the recorder goes on, and long enough before it that its
   * poll is due then, before it meets the first image's end: whatever it
   * reads of this pid differs from what the first image held. */
  kept = malloc (1024 * 1024);
  memset ((char *) kept, 1, 1024 * 1024);
  usleep (100 * 1000);
  if (kill (getppid (), SIGCONT) != 0)
    return 2;
  tidemark_step ("last");
  printf ("done\n");
  return kept[0] == 1 ? 0 : 3;
}
