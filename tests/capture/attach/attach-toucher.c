/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * attach-toucher: the program that the attach tests attach to.  It maps
 * --steps * --mib MiB of anonymous memory (no huge pages) and, in every
 * step except the multiples of 3, touches --mib MiB of new pages from
 * attach_touch_pages; in every step it also touches 1 MiB of a scratch
 * mapping from attach_touch_scratch and unmaps it again.  Each step ends
 * with tidemark_step, then appends "STEP VmRSS-bytes" to --rss-log and
 * sleeps --sleep-ms.  With --wait it first reads one line from stdin (the
 * test says "go" once attached); --hold-ms sleeps before the end.  What it
 * prints on stdout depends only on its options.
 *
 * --pause-after N: after the log line of step N, reads one more line from
 * stdin before going on, so that a test can act while the program is known
 * to be between two steps; --pause-each-step does so after every step.
 * --leak BYTES: each step also mallocs BYTES from
 * attach_leak_block and keeps them, for the malloc uprobes.
 */
#include <sys/mman.h>

#include "tidemark.h"
#include "target-util.h"

#define PAGE 4096u

static long
vm_rss_bytes (void)
{
  FILE *status = fopen ("/proc/self/status", "r");
  char line[256];
  long kib = -1;

  while (status != NULL && fgets (line, sizeof line, status) != NULL)
    if (sscanf (line, "VmRSS: %ld kB", &kib) == 1)
      break;
  if (status != NULL)
    fclose (status);
  return kib * 1024;
}

/* Called first thing, so that attach_touch_pages is no leaf: GCC gives a
 * leaf function no frame even with -fno-omit-frame-pointer, and its caller
 * would then be missing from the kernel's frame-pointer walk. */
TARGET_NOINLINE size_t
attach_page_count (size_t size)
{
  target_keep (&size);
  return size / PAGE;
}

TARGET_NOINLINE unsigned long
attach_touch_pages (volatile char *start,
                    size_t         size)
{
  unsigned long sum = attach_page_count (size) * 0;

  for (size_t off = 0; off < size; off += PAGE)
    {
      start[off] = (char) (off >> 12);
      sum += (unsigned char) start[off];
    }
  return sum;
}

TARGET_NOINLINE unsigned long
attach_touch_scratch (void)
{
  size_t size = 1u << 20;
  char *scratch = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  unsigned long sum;

  if (scratch == MAP_FAILED)
    return 0;
  sum = attach_touch_pages (scratch, size);
  munmap (scratch, size);
  return sum;
}

TARGET_NOINLINE void *
attach_leak_block (size_t size)
{
  char *block = malloc (size);

  if (block != NULL)
    block[0] = 1;
  return block;
}

static void
wait_for_go (void)
{
  char line[64];

  fprintf (stderr, "attach-toucher: waiting\n");
  if (fgets (line, sizeof line, stdin) == NULL)
    exit (3);
}

static void
log_rss (FILE *log,
         int   step)
{
  if (log == NULL)
    return;
  fprintf (log, "%d %ld\n", step, vm_rss_bytes ());
  fflush (log);
}

int
main (int    argc,
      char **argv)
{
  long steps = target_int_option (argc, argv, "--steps", 6);
  long mib = target_int_option (argc, argv, "--mib", 16);
  long sleep_ms = target_int_option (argc, argv, "--sleep-ms", 100);
  long hold_ms = target_int_option (argc, argv, "--hold-ms", 0);
  long pause_after = target_int_option (argc, argv, "--pause-after", 0);
  long leak = target_int_option (argc, argv, "--leak", 0);
  int pause_each_step = 0;
  const char *log_path = NULL;
  size_t per_step = (size_t) mib << 20;
  unsigned long sum = 0;
  long touched = 0;
  char *base;
  FILE *log = NULL;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--wait") == 0)
        wait_for_go ();
      if (strcmp (argv[i], "--rss-log") == 0 && i + 1 < argc)
        log_path = argv[i + 1];
      if (strcmp (argv[i], "--pause-each-step") == 0)
        pause_each_step = 1;
    }
  if (log_path != NULL && (log = fopen (log_path, "w")) == NULL)
    return 2;
  /* The first /proc read and fprintf fault in libc pages and stdio buffers:
   * done now, so that RSS holds still between a step's end and its log. */
  if (log != NULL && fprintf (log, "%s", vm_rss_bytes () > 0 ? "" : "") < 0)
    return 2;
  base = mmap (NULL, per_step * steps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return 1;
  /* A huge page would make one touch fault in 2 MiB. */
  madvise (base, per_step * steps, MADV_NOHUGEPAGE);

  for (int step = 1; step <= steps; step++)
    {
      if (step % 3 != 0)
        {
          sum += attach_touch_pages (base + (size_t) (step - 1) * per_step, per_step);
          touched += mib;
        }
      sum += attach_touch_scratch ();
      if (leak > 0 && attach_leak_block ((size_t) leak) == NULL)
        return 1;
      tidemark_step ("toucher");
      log_rss (log, step);
      if (step == pause_after || pause_each_step)
        wait_for_go ();
      target_sleep_ms (sleep_ms);
    }
  target_sleep_ms (hold_ms);

  printf ("attach-toucher: %ld steps, %ld MiB kept, checksum %lu\n", steps, touched, sum);
  if (log != NULL)
    fclose (log);
  return 0;
}
