/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * fork-exec-leaf: exec'd by fork-exec-chain.  Leaks 3 blocks of 100000 B
 * from leaf_leak, then forks once; the grandchild leaks 2 blocks of 50000 B
 * from grandchild_leak.  Each process ends one step after its leak.
 */
#include <sys/wait.h>

#include "tidemark.h"
#include "target-util.h"

#define LEAF_BLOCKS        3
#define LEAF_BLOCK_SIZE    100000
#define GRANDCHILD_BLOCKS  2
#define GRANDCHILD_SIZE    50000

static void *leaf_blocks[LEAF_BLOCKS];
static void *grandchild_blocks[GRANDCHILD_BLOCKS];

TARGET_NOINLINE void
leaf_leak (void)
{
  for (int i = 0; i < LEAF_BLOCKS; i++)
    {
      leaf_blocks[i] = malloc (LEAF_BLOCK_SIZE);
      memset (leaf_blocks[i], 'L', LEAF_BLOCK_SIZE);
      target_keep (leaf_blocks[i]);
    }
}

TARGET_NOINLINE void
grandchild_leak (void)
{
  for (int i = 0; i < GRANDCHILD_BLOCKS; i++)
    {
      grandchild_blocks[i] = malloc (GRANDCHILD_SIZE);
      memset (grandchild_blocks[i], 'G', GRANDCHILD_SIZE);
      /* The blocks are never read: without this GCC drops the mallocs. */
      target_keep (grandchild_blocks[i]);
    }
}

int
main (void)
{
  int status = 0;
  pid_t pid;

  leaf_leak ();
  tidemark_step (NULL);
  fflush (stdout);

  pid = fork ();
  if (pid < 0)
    return 1;
  if (pid == 0)
    {
      grandchild_leak ();
      tidemark_step (NULL);
      printf ("fork-exec-leaf grandchild done\n");
      return 0;
    }
  if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return 1;

  printf ("fork-exec-leaf done\n");
  return 0;
}
