/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * step-fence: a step marked while the program's memory grows, and one
 * marked while it is idle.  256 MiB written first make smaps_rollup take
 * milliseconds, as on a large process.
 *
 *   steps 1-8  each marked while a thread writes 256 MiB of fresh pages,
 *              16 MiB more into them each time: the thread waits while the
 *              program measures itself and marks the step, then writes on,
 *              so the recorder's reading of the step end may come after
 *              more of its pages;
 *   step 9     marked once the thread has joined, the program idle for
 *              300 ms after it: nothing moves before the recorder's reading.
 *
 * `step-fence first-step` instead lets the thread write on through the
 * mark of step 1, then marks steps 2 and 3 idle, 200 ms apart: the
 * reading of its first step end does not stand, and the next is taken
 * before one is due.
 *
 * Just before each mark it prints its resident and private bytes (statm,
 * smaps_rollup's Private_*), "mark N RSS USS".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "target-util.h"
#include "tidemark.h"

#define MIB           (1024 * 1024)
#define BALLAST_BYTES (256 * MIB)
#define WRITE_BYTES   (256 * MIB)
#define MARK_EVERY    (16 * MIB)
#define GROWING_MARKS 8

static atomic_size_t written;
static atomic_int hold;      /* the marking thread asks the writer to wait */
static atomic_int holding;   /* the writer waits */
static atomic_int finished;  /* the writer wrote every page (a marking thread
                              * that was not scheduled for that long) */

static char *
map_bytes (size_t bytes)
{
  char *p = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (p == MAP_FAILED)
    exit (2);
  return p;
}

static void *
write_pages (void *unused)
{
  long page = sysconf (_SC_PAGESIZE);
  char *p = map_bytes (WRITE_BYTES);

  (void) unused;
  for (size_t at = 0; at < WRITE_BYTES; at += (size_t) page)
    {
      while (atomic_load (&hold))
        atomic_store (&holding, 1);
      atomic_store (&holding, 0);
      p[at] = 1;
      atomic_store (&written, at + (size_t) page);
    }
  atomic_store (&finished, 1);
  return p;
}

static long long
resident_bytes (void)
{
  long long size = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");

  if (f == NULL || fscanf (f, "%lld %lld", &size, &resident) != 2)
    exit (2);
  fclose (f);
  return resident * sysconf (_SC_PAGESIZE);
}

/* Private_Clean + Private_Dirty, as the recorder sums them. */
static long long
private_bytes (void)
{
  char line[256];
  long long total = 0, kib;
  FILE *f = fopen ("/proc/self/smaps_rollup", "r");

  if (f == NULL)
    exit (2);
  while (fgets (line, sizeof line, f) != NULL)
    if ((sscanf (line, "Private_Clean: %lld kB", &kib) == 1) ||
        (sscanf (line, "Private_Dirty: %lld kB", &kib) == 1))
      total += kib * 1024;
  fclose (f);
  return total;
}

static void
mark (int         number,
      const char *label)
{
  long long rss = resident_bytes ();
  long long uss = private_bytes ();

  printf ("mark %d %lld %lld\n", number, rss, uss);
  fflush (stdout);
  tidemark_step (label);
}

/* Step 1 marked while the thread writes on, steps 2 and 3 idle. */
static int
grow_through_first_step (pthread_t writer)
{
  void *pages;

  while (atomic_load (&written) < MARK_EVERY)
    ;
  mark (1, "growing");
  pthread_join (writer, &pages);
  target_keep (pages);
  target_sleep_ms (20);
  mark (2, "idle");
  target_sleep_ms (200);
  mark (3, "idle");
  target_sleep_ms (100);
  return 0;
}

int
main (int    argc,
      char **argv)
{
  long page = sysconf (_SC_PAGESIZE);
  char *ballast = map_bytes (BALLAST_BYTES);
  pthread_t writer;
  void *pages;

  for (size_t at = 0; at < BALLAST_BYTES; at += (size_t) page)
    ballast[at] = 1;
  target_keep (ballast);
  if (pthread_create (&writer, NULL, write_pages, NULL) != 0)
    return 2;
  if (argc > 1 && strcmp (argv[1], "first-step") == 0)
    return grow_through_first_step (writer);
  for (int k = 1; k <= GROWING_MARKS; k++)
    {
      while (atomic_load (&written) < (size_t) k * MARK_EVERY)
        ;
      atomic_store (&hold, 1);
      while (!atomic_load (&holding) && !atomic_load (&finished))
        ;
      mark (k, "growing");
      atomic_store (&hold, 0);
    }
  pthread_join (writer, &pages);
  target_keep (pages);
  target_sleep_ms (20);
  mark (GROWING_MARKS + 1, "idle");
  target_sleep_ms (300);
  return 0;
}
