/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * exec-while-stopped: one pid, three images, two of which connect to the
 * recorder while it cannot accept them, so that it takes both in at once.
 *
 *   first   ends a step, stops its parent, the recorder (SIGSTOP), where
 *           it waits in poll() (says "stopped it waiting" where it could
 *           tell), and execs itself;
 *   middle  execs itself again;
 *   last    keeps 1 MiB, lets the recorder go on (SIGCONT) 2 s later,
 *           ends a step and exits 0.
 *
 * Each image's preload connects and says HELLO as the image starts.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tidemark.h"

/* The number that /proc/@pid/syscall starts with, the system call that
 * @pid, stopped, waits in; -1 where it is in none ("running") or that
 * cannot be read. */
static long
syscall_waited_in (pid_t pid)
{
  char path[64];
  long number = -1;
  FILE *f;

  snprintf (path, sizeof path, "/proc/%d/syscall", (int) pid);
  if ((f = fopen (path, "r")) == NULL)
    return -1;
  if (fscanf (f, "%ld", &number) != 1)
    number = -1;
  fclose (f);
  return number;
}

/* Whether @pid is stopped, in "pid (comm) state ...". */
static int
is_stopped (pid_t pid)
{
  char path[64], line[512], *close_paren;
  FILE *f;
  int stopped = 0;

  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if ((f = fopen (path, "r")) == NULL)
    return 0;
  if (fgets (line, sizeof line, f) != NULL && (close_paren = strrchr (line, ')')) != NULL)
    stopped = close_paren[1] == ' ' && close_paren[2] == 'T';
  fclose (f);
  return stopped;
}

/* Stops the recorder where it waits in poll() for its next event, not in
 * the middle of a round of its loop: as it goes on, it meets its timer
 * first, due by then, before this image's end of connection.  Stopped
 * elsewhere, it is let go and stopped again a moment later.  Returns 1
 * where it stopped it waiting, 0 where it could not tell (reading a
 * process's system call takes the right to trace it), -1 on an error. */
static int
stop_recorder_waiting (pid_t recorder)
{
  for (int tries = 0; tries < 2000; tries++)
    {
      long waited_in;
      int polls = 0;

      if (kill (recorder, SIGSTOP) != 0)
        return -1;
      while (!is_stopped (recorder) && polls++ < 10000)
        usleep (100);
      waited_in = syscall_waited_in (recorder);
#ifdef SYS_poll
      if (waited_in == SYS_poll)
        return 1;
#endif
      if (waited_in == SYS_ppoll)
        return 1;
      if (kill (recorder, SIGCONT) != 0)
        return -1;
      usleep (500);
    }
  return kill (recorder, SIGSTOP) == 0 ? 0 : -1;
}

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
      int stopped;

      tidemark_step ("first");
      stopped = stop_recorder_waiting (getppid ());
      if (stopped < 0)
        return 2;
      if (stopped == 1)
        printf ("stopped it waiting\n");
      fflush (stdout);
      return exec_self (argv[0], "middle");
    }
  if (strcmp (image, "middle") == 0)
    return exec_self (argv[0], "last");
  /* Kept before the recorder goes on, and long enough before it that its
   * poll and a snapshot of the job (due a second past the last step end
   * and the half second after it) are due then, before it meets the
   * first image's end: whatever it reads of this pid differs from what
   * the first image held, and the snapshot's reading of it is lost. */
  kept = malloc (1024 * 1024);
  memset ((char *) kept, 1, 1024 * 1024);
  usleep (2000 * 1000);
  if (kill (getppid (), SIGCONT) != 0)
    return 2;
  tidemark_step ("last");
  printf ("done\n");
  return kept[0] == 1 ? 0 : 3;
}
