/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * fork-exec-chain: forks; the child execs fork-exec-leaf from the directory
 * of this executable; waits for it.  The leaf and its own child leak (see
 * fork-exec-leaf.c).  Exits 0 only when the whole chain did.
 */
#include <sys/wait.h>

#include "target-util.h"

int
main (void)
{
  char *leaf = target_sibling_path ("fork-exec-leaf");
  int status = 0;
  pid_t pid;

  if (leaf == NULL)
    return 1;
  printf ("fork-exec-chain start\n");
  /* Nothing buffered may be duplicated into the child. */
  fflush (stdout);

  pid = fork ();
  if (pid < 0)
    return 1;
  if (pid == 0)
    {
      execl (leaf, leaf, (char *) NULL);
      _exit (127);
    }
  if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return 1;

  printf ("fork-exec-chain done\n");
  free (leaf);
  return 0;
}
