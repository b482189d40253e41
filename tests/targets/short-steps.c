/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * short-steps: 300 steps of about 6 ms, each shorter than it takes the
 * recorder to meet a step marker and read the process, as a DDP rank's
 * are.  Each step keeps 256 KiB, and holds 4 MiB more from just before
 * its marker to just after it: a reading taken anywhere but at the step
 * end misses those 4 MiB.  Only a step end that waits for the recorder
 * can be read as it stands.
 *
 * `short-steps late-recorder` stops the recorder (its parent, `tidemark
 * record`) for 300 ms just before it marks step 1, as a loaded machine
 * does when the recorder meets a first step end behind everything the
 * process sent as it started, and again before step 151: the first step
 * end still waits for its reading, and the recorder catches up.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include "target-util.h"
#include "tidemark.h"

#define KIB          1024
#define STEPS        300
#define KEPT_BYTES   (256 * KIB)
#define PEAK_BYTES   (4096 * KIB)
#define WORK_NS      (5 * 1000 * 1000)
/* Blocks of 4 MiB always mapped, and unmapped when freed: glibc would
 * otherwise raise its threshold after the first free and keep them. */
#define MMAP_THRESHOLD (1024 * KIB)
#define LATE_NS        (300 * 1000 * 1000)

static void *kept[STEPS];

static long long
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The step's work, with no memory moving. */
static void
spin (long long ns)
{
  long long until = now_ns () + ns;

  while (now_ns () < until)
    ;
}

static void *
continue_recorder (void *recorder)
{
  struct timespec late = { 0, LATE_NS };

  nanosleep (&late, NULL);
  kill ((pid_t) (intptr_t) recorder, SIGCONT);
  return NULL;
}

/* Stops the recorder, which a thread continues LATE_NS later; exits 2
 * where the parent is not `tidemark record` (run by hand). */
static pthread_t
stop_recorder (void)
{
  pid_t recorder = getppid ();
  char path[64], comm[32] = "";
  FILE *f;
  pthread_t continuer;

  snprintf (path, sizeof path, "/proc/%d/comm", (int) recorder);
  f = fopen (path, "r");
  if (f == NULL || fgets (comm, sizeof comm, f) == NULL || strcmp (comm, "tidemark\n") != 0)
    exit (2);
  fclose (f);
  if (kill (recorder, SIGSTOP) != 0 ||
      pthread_create (&continuer, NULL, continue_recorder, (void *) (intptr_t) recorder) != 0)
    exit (2);
  return continuer;
}

int
main (int    argc,
      char **argv)
{
  int late = argc > 1 && strcmp (argv[1], "late-recorder") == 0;
  pthread_t continuer = 0;

  mallopt (M_MMAP_THRESHOLD, MMAP_THRESHOLD);
  for (int step = 0; step < STEPS; step++)
    {
      void *peak;

      target_take_blocks (&kept[step], 1, KEPT_BYTES);
      target_take_blocks (&peak, 1, PEAK_BYTES);
      if (late && (step == 0 || step == STEPS / 2))
        {
          if (step > 0)
            pthread_join (continuer, NULL);
          continuer = stop_recorder ();
        }
      tidemark_step (NULL);
      free (peak);
      spin (WORK_NS);
    }
  if (late)
    pthread_join (continuer, NULL);
  target_free_blocks (kept, STEPS);
  puts ("done");
  return 0;
}
