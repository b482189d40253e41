/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * fork-on-cue: a child forked at a moment the test chooses, just before a
 * step end, as a DataLoader worker is forked just before a step.
 *
 *   step 1  the parent's 8 MiB written;
 *           then it writes a byte to the FIFO $TIDE_TEST_CUE_OUT, waits
 *           for one on $TIDE_TEST_CUE_IN (the test stops the recorder
 *           meanwhile), forks a child that waits, and sleeps 100 ms;
 *   step 2  ends with the child forked and idle;
 *   step 3  the child exits, and the parent waits for it.
 *
 * Prints "done".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target-util.h"
#include "tidemark.h"

#define PARENT_BYTES (8 * 1024 * 1024)

/* One byte through the FIFO at $@name, opened @flags. */
static void
cue (const char *name,
     int         flags)
{
  const char *path = getenv (name);
  char c = 'c';
  int fd;

  if (path == NULL || (fd = open (path, flags)) < 0)
    exit (2);
  if ((flags == O_WRONLY ? write (fd, &c, 1) : read (fd, &c, 1)) != 1)
    exit (2);
  close (fd);
}

int
main (void)
{
  char *pages = mmap (NULL, PARENT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
  int go[2];
  char c;
  pid_t pid;

  if (pages == MAP_FAILED || pipe (go) != 0)
    return 2;
  memset (pages, 1, PARENT_BYTES);
  tidemark_step ("written");

  cue ("TIDE_TEST_CUE_OUT", O_WRONLY);
  cue ("TIDE_TEST_CUE_IN", O_RDONLY);
  pid = fork ();
  if (pid == 0)
    {
      if (read (go[0], &c, 1) != 1)
        _exit (3);
      _exit (0);
    }
  target_sleep_ms (100);
  tidemark_step ("forked");

  if (write (go[1], "x", 1) != 1 || waitpid (pid, NULL, 0) != pid)
    return 2;
  tidemark_step ("reaped");
  printf ("done\n");
  return 0;
}
