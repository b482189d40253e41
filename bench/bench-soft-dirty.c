/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-soft-dirty: what finding the pages written since the last step end
 * with the kernel's soft-dirty bits would cost, against the page walk
 * (smaps_rollup) that the recorder reads now.  A process keeps --mib MiB
 * of touched anonymous memory and, medians of --runs:
 *
 *   step             writes one byte in each of its pages (a training
 *                    step that rewrites its activations in place);
 *   step after clear the same after `4` was written to its clear_refs,
 *                    which write-protects every page: each first write
 *                    then takes a fault in the program;
 *   clear_refs       that write, which the recorder would make at every
 *                    step end;
 *   pagemap read     the soft-dirty bits of the region read back;
 *   smaps_rollup     the walk that the recorder reads instead.
 *
 *   bench/bench-soft-dirty [--mib N] [--runs N]
 */
#include "config.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tide-bench-median.h"
#include "tide-procfs.h"

#define SOFT_DIRTY_BIT (G_GUINT64_CONSTANT (1) << 55)

static double
median (GArray *ms)
{
  return tide_bench_median ((double *) (gpointer) ms->data, ms->len);
}

static void
append_ms (GArray *ms,
           gint64  t0)
{
  double v = (g_get_monotonic_time () - t0) / 1e3;

  g_array_append_val (ms, v);
}

/* One byte written in each page of @buf. */
static void
write_pages (volatile char *buf,
             gsize          len,
             gsize          page)
{
  for (gsize off = 0; off < len; off += page)
    buf[off]++;
}

static void
clear_soft_dirty (void)
{
  int fd = open ("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

  if (fd < 0 || write (fd, "4", 1) != 1)
    g_error ("cannot write /proc/self/clear_refs");
  close (fd);
}

/* The pages of @buf that pagemap marks soft-dirty. */
static gsize
count_soft_dirty (int     pagemap,
                  char   *buf,
                  gsize   len,
                  gsize   page,
                  guint64 *entries)
{
  gsize n = len / page, dirty = 0;
  off_t at = (off_t) ((guintptr) buf / page * sizeof (guint64));

  if (pread (pagemap, entries, n * sizeof (guint64), at) != (ssize_t) (n * sizeof (guint64)))
    g_error ("cannot read /proc/self/pagemap");
  for (gsize i = 0; i < n; i++)
    dirty += (entries[i] & SOFT_DIRTY_BIT) != 0;
  return dirty;
}

int
main (int    argc,
      char **argv)
{
  gint mib = 256, runs = 11;
  GOptionEntry entries[] = {
    { "mib", 0, 0, G_OPTION_ARG_INT, &mib, "Touched memory to keep (default 256)", "N" },
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs of each (default 11)", "N" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- cost of soft-dirty tracking");
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) plain_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) faulted_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) clear_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) scan_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) rollup_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(TideProcCounters) counters = NULL;
  g_autofree guint64 *pagemap_entries = NULL;
  gsize page = (gsize) sysconf (_SC_PAGESIZE), len, dirty = 0;
  int pagemap;
  char *buf;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || mib < 1 || runs < 1)
    g_error ("%s", error ? error->message : "--mib and --runs must be positive");
  len = (gsize) mib << 20;
  buf = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED)
    g_error ("cannot map %d MiB", mib);
  /* Small pages, as a heap that glibc grows with brk is made of. */
  madvise (buf, len, MADV_NOHUGEPAGE);
  write_pages (buf, len, page);
  pagemap = open ("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0)
    g_error ("cannot open /proc/self/pagemap");
  pagemap_entries = g_new (guint64, len / page);
  counters = tide_proc_counters_open (getpid (), &error);
  g_assert_no_error (error);

  for (gint r = 0; r < runs; r++)
    {
      TideRollup rollup;
      gint64 t0 = g_get_monotonic_time ();

      write_pages (buf, len, page);
      append_ms (plain_ms, t0);
      t0 = g_get_monotonic_time ();
      clear_soft_dirty ();
      append_ms (clear_ms, t0);
      t0 = g_get_monotonic_time ();
      write_pages (buf, len, page);
      append_ms (faulted_ms, t0);
      t0 = g_get_monotonic_time ();
      dirty = count_soft_dirty (pagemap, buf, len, page, pagemap_entries);
      append_ms (scan_ms, t0);
      t0 = g_get_monotonic_time ();
      tide_proc_counters_read_rollup (counters, &rollup);
      append_ms (rollup_ms, t0);
    }
  close (pagemap);

  g_print ("%d MiB of touched anonymous memory (%zu pages), medians of %d:\n", mib, len / page,
           runs);
  if (dirty == 0)
    g_print ("  this kernel sets no soft-dirty bits (no CONFIG_MEM_SOFT_DIRTY)\n");
  g_print ("  step              %8.3f ms\n", median (plain_ms));
  g_print ("  step after clear  %8.3f ms (%.0f ns more a page written)\n", median (faulted_ms),
           (median (faulted_ms) - median (plain_ms)) * 1e6 / (len / page));
  g_print ("  clear_refs        %8.3f ms\n", median (clear_ms));
  g_print ("  pagemap read      %8.3f ms (%zu pages soft-dirty)\n", median (scan_ms), dirty);
  g_print ("  smaps_rollup      %8.3f ms\n", median (rollup_ms));
  munmap (buf, len);
  return 0;
}
