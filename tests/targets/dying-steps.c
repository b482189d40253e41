/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * dying-steps: a training loop that ends badly.
 *
 *   dying-steps --keep-mib N [--steps S [--exit E]]
 *     keeps N MiB per step in keep_activations (touched, so resident) and
 *     ends a step after each; with S steps it then exits E (0), without it
 *     runs until something stops it: in a memory cgroup, the OOM killer.
 *   dying-steps --kill-child
 *     steps 3 times; in step 2 a forked child keeps 1 MiB and is killed by
 *     SIGKILL (its own), which is no OOM kill.  The parent reaps it a
 *     moment later, as a supervisor polling its workers would, and exits 0.
 */
#include <signal.h>
#include <sys/wait.h>

#include "tidemark.h"
#include "target-util.h"

#define MIB (1u << 20)

typedef struct Block
{
  struct Block *next;
} Block;

static Block *kept;

TARGET_NOINLINE void
keep_activations (long mib)
{
  Block *block = malloc ((size_t) mib * MIB);

  if (block == NULL)
    abort ();
  memset (block, 0x3c, (size_t) mib * MIB);
  block->next = kept;
  kept = block;
}

TARGET_NOINLINE void
child_dies (void)
{
  keep_activations (1);
  raise (SIGKILL);
}

static int
kill_child (void)
{
  for (int step = 1; step <= 3; step++)
    {
      if (step == 2)
        {
          pid_t pid = fork ();
          struct timespec pause = { 2, 0 };
          int status;

          if (pid == 0)
            child_dies ();
          nanosleep (&pause, NULL);
          if (waitpid (pid, &status, 0) != pid || !WIFSIGNALED (status))
            return 1;
        }
      keep_activations (1);
      tidemark_step (NULL);
    }
  return 0;
}

int
main (int   argc,
      char *argv[])
{
  long mib = target_int_option (argc, argv, "--keep-mib", 8);
  long n_steps = target_int_option (argc, argv, "--steps", 0);
  long exit_status = target_int_option (argc, argv, "--exit", 0);

  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--kill-child") == 0)
      return kill_child ();
  for (long step = 1; n_steps == 0 || step <= n_steps; step++)
    {
      keep_activations (mib);
      tidemark_step (NULL);
    }
  return (int) exit_status;
}
