/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-procfs.c: statm, smaps_rollup and pagemap readers against this test
 * process and forked children.
 */
#include "config.h"

#include "tide-procfs.h"
#include "tide-anon-split.h"
#include "tide-test-util.h"

#include <gio/gio.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* Keeps a function that must write its own stack frame out of line. */
#define TARGET_NOINLINE_TEST __attribute__ ((noinline))

static gsize page_size;

/* Anonymous memory that will not be backed by huge pages. */
static char *
map_pages (gsize n_pages)
{
  char *base = mmap (NULL, n_pages * page_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  g_assert_true (base != MAP_FAILED);
  madvise (base, n_pages * page_size, MADV_NOHUGEPAGE);
  return base;
}

/* A pagemap of this process, read through PAGEMAP_SCAN where the kernel
 * has it (@data TRUE), else as entries. */
static TidePagemap *
open_pagemap (gconstpointer data)
{
  TidePagemap *pagemap = tide_pagemap_open (getpid (), NULL);

  g_assert_nonnull (pagemap);
  _tide_pagemap_set_scan (pagemap, GPOINTER_TO_INT (data));
  return pagemap;
}

static guint64
resident_one (TidePagemap *pagemap,
              const void  *addr,
              guint64      size)
{
  TideRange range = { (guintptr) addr, size };
  guint64 resident = G_MAXUINT64;

  g_assert_true (tide_pagemap_resident (pagemap, &range, 1, &resident));
  return resident;
}

/* A private mapping of a file of 16 pages: of 4 pages read (the file's
 * own, resident, with the neighbours that the kernel maps around a read
 * fault) and 3 others written (the kernel's anonymous copies), 3 are
 * anonymous; a window over both ranges, then over the whole, and the
 * resident pages read as before after each. */
static void
test_pagemap_anonymous (gconstpointer data)
{
  static const guint read_pages[] = { 0, 1, 9, 15 };
  static const guint written_pages[] = { 2, 5, 14 };
  g_autoptr (TidePagemap) pagemap = open_pagemap (data);
  g_autofree char *dir = tide_test_make_dir ("tide-procfs-anon");
  g_autofree char *path = g_build_filename (dir, "file", NULL);
  g_autofree char *contents = g_malloc (16 * page_size);
  volatile char sink = 0;
  TideRange ranges[2];
  guint64 anonymous[2] = { 0 };
  guint64 resident;
  char *base;
  int fd;

  memset (contents, 7, 16 * page_size);
  g_assert_true (g_file_set_contents (path, contents, 16 * page_size, NULL));
  fd = open (path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  base = mmap (NULL, 16 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  g_assert_true (base != MAP_FAILED);
  close (fd);
  /* No read-ahead of neighbours: each page is there only once touched. */
  madvise (base, 16 * page_size, MADV_RANDOM);
  for (guint i = 0; i < G_N_ELEMENTS (read_pages); i++)
    sink += base[read_pages[i] * page_size];
  for (guint i = 0; i < G_N_ELEMENTS (written_pages); i++)
    base[written_pages[i] * page_size + 1] = 1;

  resident = resident_one (pagemap, base, 16 * page_size);
  g_assert_cmpuint (resident, >=, 7 * page_size);
  ranges[0] = (TideRange) { (guintptr) base, 8 * page_size };
  ranges[1] = (TideRange) { (guintptr) base + 8 * page_size, 8 * page_size };
  g_assert_true (tide_pagemap_anonymous (pagemap, ranges, 2, anonymous));
  g_assert_cmpuint (anonymous[0], ==, 2 * page_size);
  g_assert_cmpuint (anonymous[1], ==, page_size);
  g_assert_cmpuint (resident_one (pagemap, base, 16 * page_size), ==, resident);
  ranges[0].size = 16 * page_size;
  g_assert_true (tide_pagemap_anonymous (pagemap, ranges, 1, anonymous));
  g_assert_cmpuint (anonymous[0], ==, 3 * page_size);
  g_assert_cmpuint (resident_one (pagemap, base, 16 * page_size), ==, resident);
  munmap (base, 16 * page_size);
  tide_test_remove_dir (dir);
}

static void
test_pagemap_touched (gconstpointer data)
{
  static const guint touched[] = { 0, 3, 7, 12, 20, 31, 40, 50, 62, 63 };
  g_autoptr (TidePagemap) pagemap = open_pagemap (data);
  char *base = map_pages (64);

  g_assert_cmpuint (resident_one (pagemap, base, 64 * page_size), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (touched); i++)
    base[touched[i] * page_size + 5] = 1;

  g_assert_cmpuint (resident_one (pagemap, base, 64 * page_size), ==, 10 * page_size);
  /* Half of a touched page counts half; half of an untouched one nothing. */
  g_assert_cmpuint (resident_one (pagemap, base + 3 * page_size + page_size / 4, page_size / 2),
                    ==, page_size / 2);
  g_assert_cmpuint (resident_one (pagemap, base + 4 * page_size + page_size / 4, page_size / 2),
                    ==, 0);
  /* Straddling touched page 7 and untouched page 8: only page 7's bytes. */
  g_assert_cmpuint (resident_one (pagemap, base + 8 * page_size - 100, 200), ==, 100);
  /* Straddling touched pages 62 and 63: all bytes. */
  g_assert_cmpuint (resident_one (pagemap, base + 63 * page_size - 100, 200), ==, 200);
  g_assert_cmpuint (resident_one (pagemap, base + 5, 0), ==, 0);
  munmap (base, 64 * page_size);
}

static void
test_pagemap_unmapped (gconstpointer data)
{
  g_autoptr (TidePagemap) pagemap = open_pagemap (data);
  char *base = map_pages (16);
  TideRange ranges[4];
  guint64 resident[4];

  memset (base, 1, 16 * page_size);
  munmap (base, 16 * page_size);

  ranges[0] = (TideRange) { 0, 16 * page_size };
  ranges[1] = (TideRange) { (guintptr) base, 16 * page_size };
  /* Far above the user address space: pagemap reads short there. */
  ranges[2] = (TideRange) { G_GUINT64_CONSTANT (0xffff800000000000), 1 << 20 };
  ranges[3] = (TideRange) { G_MAXUINT64 - 4096, 8192 };
  g_assert_true (tide_pagemap_resident (pagemap, ranges, 4, resident));
  for (guint i = 0; i < 4; i++)
    g_assert_cmpuint (resident[i], ==, 0);
}

static int
compare_ranges (gconstpointer a,
                gconstpointer b)
{
  const TideRange *ra = a, *rb = b;

  return ra->addr < rb->addr ? -1 : ra->addr > rb->addr;
}

/* Expected resident bytes of @r from a per-page model of @base. */
static guint64
model_resident (const char      *base,
                const gboolean  *present,
                const TideRange *r)
{
  guint64 total = 0;
  guint64 end = r->addr + r->size;

  for (guint64 a = r->addr; a < end;)
    {
      guint64 page = (a - (guintptr) base) / page_size;
      guint64 next = MIN (end, (guintptr) base + (page + 1) * page_size);

      if (present[page])
        total += next - a;
      a = next;
    }
  return total;
}

/* 100k random, overlapping ranges over a reservation bigger than one read
 * window, with islands of touched pages far apart. */
static void
test_pagemap_many (gconstpointer data)
{
  const guint n_pages = 256 * 1024;  /* 1 GiB of reserved address space */
  const guint n_ranges = 100000;
  g_autoptr (TidePagemap) pagemap = open_pagemap (data);
  g_autofree gboolean *present = g_new0 (gboolean, n_pages);
  g_autofree TideRange *ranges = g_new (TideRange, n_ranges);
  g_autofree guint64 *resident = g_new (guint64, n_ranges);
  GRand *rand = g_rand_new_with_seed (7);
  char *base = mmap (NULL, (gsize) n_pages * page_size, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  double seconds;

  g_assert_true (base != MAP_FAILED);
  madvise (base, (gsize) n_pages * page_size, MADV_NOHUGEPAGE);
  /* Eight islands of 2048 pages, a quarter of each touched. */
  for (guint island = 0; island < 8; island++)
    {
      guint first = island * (n_pages / 8) + 1000;

      g_assert_cmpint (mprotect (base + (gsize) first * page_size, 2048 * page_size,
                                 PROT_READ | PROT_WRITE), ==, 0);
      for (guint p = first; p < first + 2048; p++)
        {
          if (g_rand_int_range (rand, 0, 4) != 0)
            continue;
          base[(gsize) p * page_size] = 1;
          present[p] = TRUE;
        }
    }

  /* Ranges cluster on the islands, like heap allocations do. */
  for (guint i = 0; i < n_ranges; i++)
    {
      guint island = g_rand_int_range (rand, 0, 8);
      guint64 offset = (island * (n_pages / 8) + 900) * (guint64) page_size
                       + g_rand_int_range (rand, 0, 2300 * page_size);

      ranges[i].addr = (guintptr) base + offset;
      ranges[i].size = g_rand_int_range (rand, 0, 6 * page_size);
    }
  qsort (ranges, n_ranges, sizeof (TideRange), compare_ranges);

  g_test_timer_start ();
  g_assert_true (tide_pagemap_resident (pagemap, ranges, n_ranges, resident));
  seconds = g_test_timer_elapsed ();
  g_test_message ("pagemap: %u ranges in %.1f ms", n_ranges, seconds * 1000);

  for (guint i = 0; i < n_ranges; i++)
    g_assert_cmpuint (resident[i], ==, model_resident (base, present, &ranges[i]));
  munmap (base, (gsize) n_pages * page_size);
  g_rand_free (rand);
}

/* PAGEMAP_SCAN came with Linux 6.7: a kernel that has it must be read
 * through it, so the tests above cover both ways of reading. */
static void
test_pagemap_scan_used (void)
{
  g_autoptr (TidePagemap) pagemap = tide_pagemap_open (getpid (), NULL);
  char *base = map_pages (4);
  struct utsname uts;
  guint major = 0, minor = 0;

  g_assert_cmpint (uname (&uts), ==, 0);
  g_assert_cmpint (sscanf (uts.release, "%u.%u", &major, &minor), ==, 2);
  base[page_size] = 1;
  g_assert_cmpuint (resident_one (pagemap, base, 4 * page_size), ==, page_size);
  g_assert_cmpint (_tide_pagemap_get_scan (pagemap), ==, major > 6 || (major == 6 && minor >= 7));
  g_assert_cmpint (tide_pagemap_kernel_has_scan (), ==, major > 6 || (major == 6 && minor >= 7));
  munmap (base, 4 * page_size);
}

static void
test_statm_grows (void)
{
  g_autoptr (TideProcCounters) counters = tide_proc_counters_open (getpid (), NULL);
  const gsize n_pages = 2048;
  TideStatm before, after;
  TideRollup rollup;
  char *base;

  g_assert_nonnull (counters);
  g_assert_true (tide_proc_counters_read_statm (counters, &before));
  g_assert_cmpuint (before.rss_bytes, >, 0);
  g_assert_cmpuint (before.shared_bytes, >, 0);  /* libc's text, at least */

  base = map_pages (n_pages);
  for (gsize p = 0; p < n_pages; p++)
    base[p * page_size] = 1;
  g_assert_true (tide_proc_counters_read_statm (counters, &after));
  g_assert_cmpuint (after.rss_bytes, >=, before.rss_bytes + n_pages * page_size);

  g_assert_true (tide_proc_counters_read_rollup (counters, &rollup));
  g_assert_cmpuint (rollup.rss_bytes, >=, n_pages * page_size);
  g_assert_cmpuint (rollup.anonymous_bytes, >=, n_pages * page_size);
  g_assert_cmpuint (rollup.pss_bytes, >, 0);
  g_assert_cmpuint (rollup.pss_bytes, <=, rollup.rss_bytes);
  munmap (base, n_pages * page_size);
}

#define CLASS_PAGES 4096  /* 16 MiB of 4 KiB pages */

/* The kernel's split adds up to the RSS exactly, in the same read. */
static void
assert_split (const TideRssClasses *c)
{
  g_assert_cmpuint (c->anon_bytes + c->file_bytes + c->shmem_bytes, ==, c->rss_bytes);
  g_assert_cmpuint (c->pss_bytes, <=, c->private_bytes + c->shared_bytes);
}

/* Each kind of page lands in its class: touched anonymous pages in anon
 * and private, a touched memfd in shmem, a read file mapping in file. */
static void
test_classes (void)
{
  g_autoptr (TideProcCounters) counters = tide_proc_counters_open (getpid (), NULL);
  gsize size = CLASS_PAGES * page_size;
  TideRssClasses before, after;
  char *anon, *shm;
  const char *file;
  g_autofree char *path = NULL;
  int memfd, fd;
  volatile char sum = 0;

  g_assert_true (tide_proc_counters_read_classes (counters, TRUE, &before));
  assert_split (&before);

  anon = map_pages (CLASS_PAGES);
  memset (anon, 1, size);
  memfd = memfd_create ("tide-test-shmem", MFD_CLOEXEC);
  g_assert_cmpint (ftruncate (memfd, size), ==, 0);
  shm = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  g_assert_true (shm != MAP_FAILED);
  memset (shm, 2, size);
  fd = g_file_open_tmp ("tide-test-file-XXXXXX", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  for (gsize p = 0; p < CLASS_PAGES; p++)
    g_assert_cmpint (pwrite (fd, anon, page_size, p * page_size), ==, (gssize) page_size);
  file = mmap (NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  g_assert_true (file != MAP_FAILED);
  for (gsize p = 0; p < CLASS_PAGES; p++)
    sum += file[p * page_size];

  g_assert_true (tide_proc_counters_read_classes (counters, TRUE, &after));
  assert_split (&after);
  g_assert_cmpuint (after.anon_bytes, >=, before.anon_bytes + size);
  g_assert_cmpuint (after.shmem_bytes, >=, before.shmem_bytes + size);
  g_assert_cmpuint (after.file_bytes, >=, before.file_bytes + size);
  g_assert_cmpuint (after.private_bytes, >=, before.private_bytes + size);
  g_assert_cmpint (sum, ==, (char) CLASS_PAGES);

  /* Without smaps_rollup, the kernel's split alone, the same. */
  {
    TideRssClasses split;

    g_assert_true (tide_proc_counters_read_classes (counters, FALSE, &split));
    assert_split (&split);
    g_assert_cmpuint (split.shmem_bytes, ==, after.shmem_bytes);
    g_assert_cmpuint (split.pss_bytes + split.private_bytes + split.shared_bytes, ==, 0);
  }

  munmap ((void *) file, size);
  munmap (shm, size);
  munmap (anon, size);
  close (fd);
  close (memfd);
  g_unlink (path);
}

/* Pages touched before a fork are shared by parent and child until one of
 * them writes: both count them in RSS, each in its PSS for half, and the
 * child's copy of a page it writes becomes private to it. */
static void
test_classes_fork (void)
{
  gsize size = CLASS_PAGES * page_size;
  char *anon = map_pages (CLASS_PAGES);
  int go[2], done[2];
  pid_t pid;
  char c;

  memset (anon, 1, size);
  g_assert_cmpint (pipe (go), ==, 0);
  g_assert_cmpint (pipe (done), ==, 0);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      /* Write every page of the first half: copied on write. */
      if (read (go[0], &c, 1) == 1)
        memset (anon, 3, size / 2);
      if (write (done[1], "x", 1) != 1 || read (go[0], &c, 1) != 1)
        _exit (1);
      _exit (0);
    }
  {
    g_autoptr (TideProcCounters) child = tide_proc_counters_open (pid, NULL);
    TideRssClasses shared, copied;

    g_assert_true (tide_proc_counters_read_classes (child, TRUE, &shared));
    assert_split (&shared);
    g_assert_cmpuint (shared.shared_bytes, >=, size);
    g_assert_cmpuint (shared.pss_bytes, <=, shared.rss_bytes - size / 2);

    g_assert_cmpint (write (go[1], "x", 1), ==, 1);
    g_assert_cmpint (read (done[0], &c, 1), ==, 1);
    g_assert_true (tide_proc_counters_read_classes (child, TRUE, &copied));
    assert_split (&copied);
    g_assert_cmpuint (copied.private_bytes, >=, shared.private_bytes + size / 2);
  }
  g_assert_cmpint (write (go[1], "x", 1), ==, 1);
  g_assert_cmpint (waitpid (pid, NULL, 0), ==, pid);
  munmap (anon, size);
  for (guint i = 0; i < 2; i++)
    {
      close (go[i]);
      close (done[i]);
    }
}

/* A child that waits for a byte on a pipe, then exits or execs sleep. */
static GPid
spawn_waiting_child (int     *release_fd,
                     gboolean exec_sleep)
{
  int fds[2];
  pid_t pid;

  g_assert_cmpint (pipe (fds), ==, 0);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      char c;

      close (fds[1]);
      if (read (fds[0], &c, 1) == 1 && exec_sleep)
        execlp ("sleep", "sleep", "30", (char *) NULL);
      _exit (0);
    }
  close (fds[0]);
  *release_fd = fds[1];
  return pid;
}

static void
test_exited_child (gconstpointer data)
{
  TideProcCounters *counters;
  TidePagemap *pagemap;
  int release_fd;
  GPid pid = spawn_waiting_child (&release_fd, FALSE);
  TideStatm statm;
  TideRollup rollup;
  TideRange range = { (guintptr) &page_size, 8 };
  guint64 resident;
  siginfo_t info;

  counters = tide_proc_counters_open (pid, NULL);
  pagemap = tide_pagemap_open (pid, NULL);
  g_assert_nonnull (counters);
  g_assert_nonnull (pagemap);
  _tide_pagemap_set_scan (pagemap, GPOINTER_TO_INT (data));
  g_assert_true (tide_proc_counters_read_statm (counters, &statm));
  g_assert_true (tide_proc_counters_read_rollup (counters, &rollup));
  /* The child's copy of page_size is a page it shares with us. */
  g_assert_true (tide_pagemap_resident (pagemap, &range, 1, &resident));
  g_assert_cmpuint (resident, ==, 8);

  /* Exited but not reaped: a zombie has no memory left. */
  close (release_fd);
  g_assert_cmpint (waitid (P_PID, pid, &info, WEXITED | WNOWAIT), ==, 0);
  g_assert_false (tide_proc_counters_read_statm (counters, &statm));
  g_assert_false (tide_proc_counters_read_rollup (counters, &rollup));
  /* Not "nothing resident": nothing can be said (residency leaves the
   * step out). */
  g_assert_false (tide_pagemap_resident (pagemap, &range, 1, &resident));
  g_assert_cmpuint (resident, ==, 0);

  /* Reaped. */
  g_assert_cmpint (waitpid (pid, NULL, 0), ==, pid);
  g_assert_false (tide_proc_counters_read_statm (counters, &statm));
  g_assert_cmpuint (statm.rss_bytes, ==, 0);
  g_assert_false (tide_proc_counters_read_rollup (counters, &rollup));
  g_assert_false (tide_pagemap_resident (pagemap, &range, 1, &resident));
  g_assert_cmpuint (resident, ==, 0);

  tide_proc_counters_free (counters);
  tide_pagemap_free (pagemap);
  g_assert_null (tide_proc_counters_open (pid, NULL));
}

/* The counters are the image's that the pid ran as they were opened: once
 * it exec'd, they read nothing, not the next image's values (the
 * recorder meets the exec only at that image's HELLO).  smaps_rollup used
 * to follow the pid across the exec. */
static void
test_nothing_after_exec (void)
{
  g_autoptr (TideProcCounters) counters = NULL;
  g_autofree char *exe_path = NULL;
  int release_fd;
  GPid pid = spawn_waiting_child (&release_fd, TRUE);
  TideRollup rollup;
  TideStatm statm;
  TideRssClasses classes;
  gboolean execed = FALSE;

  counters = tide_proc_counters_open (pid, NULL);
  g_assert_true (tide_proc_counters_read_rollup (counters, &rollup));
  g_assert_true (tide_proc_counters_read_statm (counters, &statm));
  g_assert_true (tide_proc_counters_read_classes (counters, FALSE, &classes));
  g_assert_cmpint (write (release_fd, "x", 1), ==, 1);
  close (release_fd);

  exe_path = g_strdup_printf ("/proc/%d/exe", pid);
  for (guint i = 0; i < 500 && !execed; i++)
    {
      g_autofree char *target = g_file_read_link (exe_path, NULL);

      execed = target != NULL && g_str_has_suffix (target, "/sleep");
      if (!execed)
        g_usleep (10000);
    }
  g_assert_true (execed);
  g_assert_false (tide_proc_counters_read_rollup (counters, &rollup));
  g_assert_false (tide_proc_counters_read_statm (counters, &statm));
  g_assert_false (tide_proc_counters_read_classes (counters, FALSE, &classes));
  g_assert_false (tide_proc_counters_read_classes (counters, TRUE, &classes));

  kill (pid, SIGKILL);
  g_assert_cmpint (waitpid (pid, NULL, 0), ==, pid);
}

static void
test_open_missing (void)
{
  g_autoptr (GError) error = NULL;

  /* pid_max is at most 2^22. */
  g_assert_null (tide_proc_counters_open (1 << 23, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (tide_pagemap_open (1 << 23, &error));
  g_assert_nonnull (error);
}

/* ---- anonymous memory by mapping ---------------------------------------------- */

#define SPLIT_TOUCH (256 * 1024)

/* In this program's bss: one that the test writes while it measures. */
static char split_bss[4 * 1024 * 1024];

typedef struct
{
  int                 go[2];
  int                 done[2];
  volatile const char *frame;   /* a local of the thread's, once it runs */
  volatile gboolean    touched;
  guint64              new_bytes; /* of the pages it touched, those not resident before */
} SplitThread;

/* Bytes of the pages that [@addr, @addr + @len) lies on that are not
 * resident now. */
static guint64
absent_bytes (gconstpointer addr,
              gsize         len)
{
  guintptr first = (guintptr) addr & ~(guintptr) (page_size - 1);
  gsize n = ((guintptr) addr + len - first + page_size - 1) / page_size;
  g_autofree unsigned char *vec = g_malloc (n);
  guint64 absent = 0;

  g_assert_cmpint (mincore ((void *) first, n * page_size, vec), ==, 0);
  for (gsize i = 0; i < n; i++)
    absent += (vec[i] & 1) ? 0 : page_size;
  return absent;
}

static TARGET_NOINLINE_TEST void
touch_thread_stack (SplitThread *t)
{
  volatile char frame[SPLIT_TOUCH];

  /* The array's top pages may be resident already: its caller's frame may
   * share one, and deeper calls made before may have touched more (a
   * sanitizer's interceptors). */
  t->new_bytes = absent_bytes ((gconstpointer) frame, sizeof frame);
  /* Through the volatile array, so that no write is left out. */
  for (gsize i = 0; i < sizeof frame; i += 512)
    frame[i] = 1;
  frame[sizeof frame - 1] = 1;
  t->touched = TRUE;
}

/* Waits, writes SPLIT_TOUCH bytes of its stack when told, and waits. */
static void *
split_thread_main (gpointer data)
{
  SplitThread *t = data;
  volatile char here = 0;
  char c;

  t->frame = &here;
  g_assert_cmpint (write (t->done[1], "r", 1), ==, 1);
  g_assert_cmpint (read (t->go[0], &c, 1), ==, 1);
  touch_thread_stack (t);
  g_assert_cmpint (write (t->done[1], "t", 1), ==, 1);
  g_assert_cmpint (read (t->go[0], &c, 1), ==, 1);
  return NULL;
}

static gboolean
ranges_hold (GArray        *ranges,
             gconstpointer  address)
{
  for (guint i = 0; i < ranges->len; i++)
    {
      const TideRange *r = &g_array_index (ranges, TideRange, i);

      if ((guint64) (guintptr) address >= r->addr &&
          (guint64) (guintptr) address < r->addr + r->size)
        return TRUE;
    }
  return FALSE;
}

static void
split_self (TideAnonSplitter *splitter,
            GArray           *stacks,
            GArray           *data,
            TideAnonSplit    *out)
{
  g_autofree char *maps = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  g_array_set_size (stacks, 0);
  g_array_set_size (data, 0);
  g_assert_true (_tide_anon_splitter_split (splitter, maps, NULL, stacks, data, NULL, NULL, out));
}

/* This process's own mappings: a pthread's stack (above its guard) and
 * the main thread's, and the bss that holds split_bss; then what a
 * thread writes of its stack, and the test of its bss, counted exactly
 * in resident bytes, less what the test's own calls touch on the way. */
static void
test_anon_split (void)
{
  g_autoptr(TideAnonSplitter) splitter = tide_anon_splitter_new ();
  g_autoptr(TidePagemap) pagemap = tide_pagemap_open (getpid (), NULL);
  g_autoptr(GArray) stacks = g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autoptr(GArray) data = g_array_new (FALSE, FALSE, sizeof (TideRange));
  SplitThread t = { 0 };
  volatile char here = 0;
  TideAnonSplit before, after, whole;
  pthread_attr_t attr;
  pthread_t thread;
  char c;

  /* Pages of 4 KiB, whatever the machine's transparent huge pages. */
  madvise ((char *) (((guintptr) split_bss + page_size - 1) & ~(guintptr) (page_size - 1)),
           sizeof split_bss - page_size, MADV_NOHUGEPAGE);
  g_assert_cmpint (pipe (t.go), ==, 0);
  g_assert_cmpint (pipe (t.done), ==, 0);
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, 2 * 1024 * 1024);
  g_assert_cmpint (pthread_create (&thread, &attr, split_thread_main, &t), ==, 0);
  pthread_attr_destroy (&attr);
  g_assert_cmpint (read (t.done[0], &c, 1), ==, 1);

  split_self (splitter, stacks, data, &whole);
  g_assert_true (ranges_hold (stacks, (gconstpointer) t.frame));
  g_assert_true (ranges_hold (stacks, (gconstpointer) &here));
  g_assert_true (ranges_hold (data, &split_bss[page_size]));
  g_assert_true (ranges_hold (data, &split_bss[sizeof split_bss - 1]));
  g_assert_false (ranges_hold (data, (gconstpointer) &here));
  g_assert_false (ranges_hold (stacks, split_bss));
  g_assert_cmpuint (whole.lib_data_bytes, >=, sizeof split_bss - page_size);

  g_assert_true (tide_anon_splitter_read (splitter, getpid (), pagemap, &before));
  memset (split_bss + page_size, 2, SPLIT_TOUCH);
  g_assert_cmpint (write (t.go[1], "g", 1), ==, 1);
  g_assert_cmpint (read (t.done[0], &c, 1), ==, 1);
  g_assert_true (tide_anon_splitter_read (splitter, getpid (), pagemap, &after));
  g_assert_cmpuint (after.lib_data_bytes - before.lib_data_bytes, >=, SPLIT_TOUCH);
  g_assert_cmpuint (after.lib_data_bytes - before.lib_data_bytes, <=, SPLIT_TOUCH + 16 * page_size);
  g_test_message ("stacks %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT ", data %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT, before.thread_stacks_bytes, after.thread_stacks_bytes, before.lib_data_bytes, after.lib_data_bytes);
  /* Most of it: deeper calls before (a sanitizer's interceptors) may
   * have touched a few of its top pages. */
  g_assert_cmpuint (t.new_bytes, >=, SPLIT_TOUCH / 2);
  g_assert_cmpuint (after.thread_stacks_bytes - before.thread_stacks_bytes, >=, t.new_bytes);
  g_assert_cmpuint (after.thread_stacks_bytes - before.thread_stacks_bytes, <=,
                    t.new_bytes + 16 * page_size);

  g_assert_true (t.touched);
  g_assert_cmpint (write (t.go[1], "e", 1), ==, 1);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  close (t.go[0]);
  close (t.go[1]);
  close (t.done[0]);
  close (t.done[1]);
}

/* A maps text as the kernel writes it: a guard bigger than a guard is an
 * allocator's reserved tail, and what lies above it is not a stack. */
static void
test_anon_split_text (void)
{
  g_autoptr(TideAnonSplitter) splitter = tide_anon_splitter_new ();
  g_autoptr(GArray) stacks = g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autoptr(GArray) data = g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autofree char *maps = g_strdup (
    "7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
    "7f0000001000-7f0000801000 rw-p 00000000 00:00 0 \n"
    "7f1000000000-7f1000100000 ---p 00000000 00:00 0 \n"
    "7f1000100000-7f1000200000 rw-p 00000000 00:00 0 \n"
    "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
    /* The kernel ends an unnamed mapping's line after its inode: the line
     * after it is not its path. */
    "7ffd00000000-7ffd00001000 ---p 00000000 00:00 0\n"
    "7ffd00001000-7ffd00101000 rw-p 00000000 00:00 0");
  TideAnonSplit out;

  g_assert_true (_tide_anon_splitter_split (splitter, maps, NULL, stacks, data, NULL, NULL, &out));
  g_assert_cmpuint (stacks->len, ==, 3);
  g_assert_cmpuint (g_array_index (stacks, TideRange, 0).addr, ==, 0x7f0000001000);
  g_assert_cmpuint (g_array_index (stacks, TideRange, 2).addr, ==, 0x7ffd00001000);
  g_assert_cmpuint (out.thread_stacks_bytes, ==, 0x800000 + 0x21000 + 0x100000);
  g_assert_cmpuint (out.lib_data_bytes, ==, 0);
}

/* glibc's heaps in a maps text: the main arena's [heap], another arena's
 * heap grown part way (its inaccessible rest up to 64 MiB above it) and
 * one grown whole; not an aligned mapping whose inaccessible neighbour
 * ends elsewhere, nor an unaligned one. */
static void
test_anon_split_heaps_text (void)
{
  g_autoptr(TideAnonSplitter) splitter = tide_anon_splitter_new ();
  g_autoptr(GArray) heaps = g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autofree char *maps = g_strdup (
    "55d000000000-55d000400000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f2004000000-7f2004021000 rw-p 00000000 00:00 0 \n"
    "7f2004021000-7f2008000000 ---p 00000000 00:00 0 \n"
    "7f3008000000-7f300c000000 rw-p 00000000 00:00 0 \n"
    "7f400c000000-7f400c100000 rw-p 00000000 00:00 0 \n"
    "7f400c100000-7f400c200000 ---p 00000000 00:00 0 \n"
    "7f5000001000-7f5000021000 rw-p 00000000 00:00 0 \n"
    "7f5000021000-7f5004001000 ---p 00000000 00:00 0 \n");
  TideAnonSplit out;

  g_assert_true (_tide_anon_splitter_split (splitter, maps, NULL, NULL, NULL, NULL, heaps, &out));
  g_assert_cmpuint (heaps->len, ==, 3);
  g_assert_cmpuint (g_array_index (heaps, TideRange, 0).addr, ==, 0x55d000000000);
  g_assert_cmpuint (g_array_index (heaps, TideRange, 1).addr, ==, 0x7f2004000000);
  g_assert_cmpuint (g_array_index (heaps, TideRange, 1).size, ==, 0x21000);
  g_assert_cmpuint (g_array_index (heaps, TideRange, 2).addr, ==, 0x7f3008000000);
  g_assert_cmpuint (out.malloc_heap_bytes, ==, 0x400000 + 0x21000 + 0x4000000);
  g_assert_cmpuint (out.malloc_heap_resident_bytes, ==, out.malloc_heap_bytes);
  g_assert_cmpuint (out.thread_stacks_bytes, ==, 0);
}

static gpointer
malloc_in_thread (gpointer unused)
{
  return g_malloc (1000);
}

/* This process's heaps hold a block of the main thread's and one of a
 * new thread's, which glibc serves from another arena.  In a subprocess:
 * the arena stays, and a fork's child of this one then writes its state
 * (/procfs/classes-fork counts the child's private pages). */
static void
test_anon_split_heaps_self (void)
{
  g_autoptr(TideAnonSplitter) splitter = NULL;
  g_autoptr(GArray) heaps = NULL;
  g_autofree char *maps = NULL;
  g_autofree char *mine = NULL;
  g_autofree char *theirs = NULL;
  TideAnonSplit out;

#if defined(__SANITIZE_ADDRESS__)
  g_test_skip ("AddressSanitizer's allocator serves malloc here, not glibc's arenas");
  return;
#endif
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      return;
    }
  splitter = tide_anon_splitter_new ();
  heaps = g_array_new (FALSE, FALSE, sizeof (TideRange));
  mine = g_malloc (1000);
  theirs = g_thread_join (g_thread_new ("arena", malloc_in_thread, NULL));
  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  g_assert_true (_tide_anon_splitter_split (splitter, maps, NULL, NULL, NULL, NULL, heaps, &out));
  g_assert_true (ranges_hold (heaps, mine));
  g_assert_true (ranges_hold (heaps, theirs));
  g_assert_false (ranges_hold (heaps, &out));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  page_size = sysconf (_SC_PAGESIZE);
  g_test_add_func ("/procfs/anon-split/self", test_anon_split);
  g_test_add_func ("/procfs/anon-split/heaps-text", test_anon_split_heaps_text);
  g_test_add_func ("/procfs/anon-split/heaps-self", test_anon_split_heaps_self);
  g_test_add_func ("/procfs/anon-split/text", test_anon_split_text);

  g_test_add_data_func ("/procfs/pagemap/touched", GINT_TO_POINTER (TRUE), test_pagemap_touched);
  g_test_add_data_func ("/procfs/pagemap/anonymous", GINT_TO_POINTER (TRUE),
                        test_pagemap_anonymous);
  g_test_add_data_func ("/procfs/pagemap/entries/anonymous", GINT_TO_POINTER (FALSE),
                        test_pagemap_anonymous);
  g_test_add_data_func ("/procfs/pagemap/unmapped", GINT_TO_POINTER (TRUE),
                        test_pagemap_unmapped);
  g_test_add_data_func ("/procfs/pagemap/many", GINT_TO_POINTER (TRUE), test_pagemap_many);
  g_test_add_data_func ("/procfs/pagemap/entries/touched", GINT_TO_POINTER (FALSE),
                        test_pagemap_touched);
  g_test_add_data_func ("/procfs/pagemap/entries/unmapped", GINT_TO_POINTER (FALSE),
                        test_pagemap_unmapped);
  g_test_add_data_func ("/procfs/pagemap/entries/many", GINT_TO_POINTER (FALSE),
                        test_pagemap_many);
  g_test_add_func ("/procfs/pagemap/scan-where-the-kernel-has-it", test_pagemap_scan_used);
  g_test_add_func ("/procfs/statm/grows", test_statm_grows);
  g_test_add_func ("/procfs/classes", test_classes);
  g_test_add_func ("/procfs/classes-fork", test_classes_fork);
  g_test_add_data_func ("/procfs/exited-child", GINT_TO_POINTER (TRUE), test_exited_child);
  g_test_add_data_func ("/procfs/entries/exited-child", GINT_TO_POINTER (FALSE),
                        test_exited_child);
  g_test_add_func ("/procfs/nothing-after-exec", test_nothing_after_exec);
  g_test_add_func ("/procfs/open-missing", test_open_missing);

  return g_test_run ();
}
