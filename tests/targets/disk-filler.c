/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * disk-filler: a job whose trace outgrows its disk (test-disk-full.c).
 *
 *   disk-filler GO_FIFO
 *
 * Steps 1-5 each allocate and free FILLER_BLOCKS blocks of
 * FILLER_SIZE (step, k) bytes: a little, known data.  Then it waits until
 * the test writes a line to GO_FIFO (the test has seen those five steps in
 * the trace), and steps 6-8 churn FILLER_CHURN blocks each: with --all,
 * far more rows than the test's small disk holds.  It prints
 * "disk-filler: 8 steps" and exits with FILLER_STATUS, so that the test
 * can tell the job's status from the recorder's.
 */
#include <fcntl.h>

#include "target-util.h"
#include "tidemark.h"

#define FILLER_BLOCKS  3
#define FILLER_SIZE(step, k) (70000 + 10 * (step) + (k))
#define FILLER_CHURN   300000
#define FILLER_STATUS  7

TARGET_NOINLINE static void
small_step (int step)
{
  void *blocks[FILLER_BLOCKS];

  for (int k = 0; k < FILLER_BLOCKS; k++)
    {
      blocks[k] = malloc (FILLER_SIZE (step, k));
      target_keep (blocks[k]);
    }
  for (int k = 0; k < FILLER_BLOCKS; k++)
    free (blocks[k]);
}

TARGET_NOINLINE static void
churn_step (void)
{
  for (int i = 0; i < FILLER_CHURN; i++)
    {
      void *p = malloc (64);

      target_keep (p);
      free (p);
    }
}

static void
wait_for_go (const char *fifo)
{
  char line[16];
  int fd = open (fifo, O_RDONLY | O_CLOEXEC);

  if (fd < 0 || read (fd, line, sizeof line) <= 0)
    {
      perror ("disk-filler: no go");
      exit (1);
    }
  close (fd);
}

int
main (int    argc,
      char **argv)
{
  if (argc != 2)
    return 2;
  for (int step = 1; step <= 5; step++)
    {
      small_step (step);
      tidemark_step (NULL);
    }
  wait_for_go (argv[1]);
  for (int step = 6; step <= 8; step++)
    {
      churn_step ();
      tidemark_step (NULL);
    }
  printf ("disk-filler: 8 steps\n");
  return FILLER_STATUS;
}
