/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-procfs.c: /proc readers.
 *
 * Pagemap holds one 64-bit entry per virtual page, at offset
 * (addr / page_size) * 8; bit 63 means present in RAM.  tide_pagemap_resident()
 * walks the sorted ranges and keeps a window of entries in memory.  When a
 * page falls outside the window it reads a new one starting at that page and
 * stretching over the following ranges as long as the gaps between them stay
 * small (TIDE_PAGEMAP_MAX_GAP) and the window stays under
 * TIDE_PAGEMAP_MAX_WINDOW pages, so many ranges share one pread and sparse
 * ranges do not drag in huge holes.
 *
 * Where the kernel has the PAGEMAP_SCAN ioctl (Linux 6.7), a window is read
 * through it instead: it returns the runs of present pages, not an entry
 * per page, and the kernel's walk that fills them costs far less per page
 * than the one that formats an entry for each.  Older kernels answer
 * ENOTTY, and the handle reads entries from then on; a window that the
 * ioctl refuses (above the user address space) is read as entries too.
 */
#include "config.h"

#include "tide-procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* No 64-bit Linux we run on ends user space below this (x86-64 with
 * 4-level paging ends it just below; 5-level paging and arm64 go
 * higher): a read of pagemap there that finds nothing means the process's
 * memory is gone, never that the address is out of reach. */
#define USER_SPACE_FLOOR (G_GUINT64_CONSTANT (1) << 47)

#define TIDE_PAGEMAP_PRESENT     (G_GUINT64_CONSTANT (1) << 63)
#define TIDE_PAGEMAP_FILE        (G_GUINT64_CONSTANT (1) << 61)  /* a page cache or shared page */
#define TIDE_PAGEMAP_MAX_WINDOW  65536u  /* pages: 512 KiB of entries */
#define TIDE_PAGEMAP_MAX_GAP     1024u   /* pages: reading 8 KiB beats a syscall */

struct _TideProcCounters
{
  int     pid;
  int     statm_fd;
  int     stat_fd;    /* -1 when it could not be opened */
  int     rollup_fd;  /* -1 when it could not be opened */
  int     status_fd;  /* -1 until first used */
  int     mm_fd;      /* pagemap: pins the image's memory; -1 when it could not be opened */
  guint64 page_size;
};

/* The ioctl's argument and its results, as the kernel's uapi (linux/fs.h
 * of 6.7) defines them; Debian 12's headers predate them. */
typedef struct
{
  guint64 size;
  guint64 flags;
  guint64 start;
  guint64 end;
  guint64 walk_end;
  guint64 vec;
  guint64 vec_len;
  guint64 max_pages;
  guint64 category_inverted;
  guint64 category_mask;
  guint64 category_anyof_mask;
  guint64 return_mask;
} TidePmScanArg;

typedef struct
{
  guint64 start;
  guint64 end;
  guint64 categories;
} TidePageRegion;

G_STATIC_ASSERT (sizeof (TidePmScanArg) == 96);
G_STATIC_ASSERT (sizeof (TidePageRegion) == 24);

#define TIDE_PAGEMAP_SCAN        _IOWR ('f', 16, TidePmScanArg)
#define TIDE_PAGE_IS_FILE        (1u << 2)
#define TIDE_PAGE_IS_PRESENT     (1u << 3)
#define TIDE_PAGEMAP_SCAN_VEC    512u    /* regions a call returns at most */

struct _TidePagemap
{
  int      fd;
  guint    page_shift;
  gboolean no_scan;      /* the kernel has no PAGEMAP_SCAN: read entries */
  gboolean anon_only;    /* count the present anonymous pages only (written
                          * copies of file pages), not the file's own */
  gboolean window_is_runs; /* the window is in @runs, not in @window */
  guint64 *window;       /* pagemap entries of pages [first, first + n_pages) */
  guint64  window_first;
  guint64  window_n;
  GArray  *runs;         /* TidePageRegion: the present pages of the window */
  TidePageRegion *vec;   /* what one ioctl returns */
};

static int
tide_procfs_open_file (int          pid,
                       const char  *name,
                       GError     **error)
{
  char path[64];
  int fd;

  g_snprintf (path, sizeof path, "/proc/%d/%s", pid, name);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot open %s: %s", path, g_strerror (saved));
    }
  return fd;
}

/* Reads the whole seq_file from offset 0 into @buf, NUL-terminated. */
static gssize
tide_procfs_pread_all (int    fd,
                       char  *buf,
                       gsize  size)
{
  gsize done = 0;

  while (done + 1 < size)
    {
      gssize got = pread (fd, buf + done, size - 1 - done, done);

      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return -1;
      if (got == 0)
        break;
      done += got;
    }
  buf[done] = '\0';
  return done;
}

TideProcCounters *
tide_proc_counters_open (int      pid,
                         GError **error)
{
  TideProcCounters *self;
  int fd = tide_procfs_open_file (pid, "statm", error);

  if (fd < 0)
    return NULL;
  self = g_new0 (TideProcCounters, 1);
  self->pid = pid;
  self->statm_fd = fd;
  /* Opened now, while the pid is surely this process's: read at its end. */
  self->stat_fd = tide_procfs_open_file (pid, "stat", NULL);
  /* Each of these holds the memory of the image that the pid runs now:
   * after an exec, statm and status tell the next image's, these
   * nothing (same_image()). */
  self->rollup_fd = tide_procfs_open_file (pid, "smaps_rollup", NULL);
  self->mm_fd = tide_procfs_open_file (pid, "pagemap", NULL);
  self->status_fd = -1;
  self->page_size = sysconf (_SC_PAGESIZE);
  return self;
}

void
tide_proc_counters_free (TideProcCounters *self)
{
  if (self == NULL)
    return;
  close (self->statm_fd);
  if (self->stat_fd >= 0)
    close (self->stat_fd);
  if (self->rollup_fd >= 0)
    close (self->rollup_fd);
  if (self->status_fd >= 0)
    close (self->status_fd);
  if (self->mm_fd >= 0)
    close (self->mm_fd);
  g_free (self);
}

/* Whether the pid still runs the image whose memory the counters were
 * opened on: an image that exec replaced must not be given the next
 * one's values (the recorder meets the exec later, at the next image's
 * HELLO).  One entry of pagemap, which reads as nothing once that
 * memory is gone.  Where pagemap could not be opened, there is no way
 * to tell. */
static gboolean
same_image (TideProcCounters *self)
{
  guint64 entry;

  return self->mm_fd < 0 || pread (self->mm_fd, &entry, sizeof entry, 0) == sizeof entry;
}

/* The kernel's flag for a task in do_exit() (include/linux/sched.h). */
#define TIDE_PF_EXITING 0x00000004

gboolean
tide_proc_counters_read_exit (TideProcCounters *self,
                              int              *wait_status)
{
  char buf[1024];
  const char *fields;
  g_auto(GStrv) words = NULL;
  guint64 flags;
  char state;

  g_return_val_if_fail (self != NULL, FALSE);

  if (self->stat_fd < 0 || tide_procfs_pread_all (self->stat_fd, buf, sizeof buf) <= 0)
    return FALSE;  /* reaped already: ESRCH */
  /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
  fields = strrchr (buf, ')');
  if (fields == NULL || fields[1] != ' ')
    return FALSE;
  words = g_strsplit (fields + 2, " ", -1);
  /* Field 3 is state, 9 flags, 52 exit_code (Linux 3.5 and later). */
  if (g_strv_length (words) < 50)
    return FALSE;
  state = words[0][0];
  flags = g_ascii_strtoull (words[6], NULL, 10);
  if (state != 'Z' && state != 'X' && !(flags & TIDE_PF_EXITING))
    return FALSE;  /* still running */
  *wait_status = (int) g_ascii_strtoll (words[49], NULL, 10);
  return TRUE;
}

gboolean
tide_proc_counters_read_statm (TideProcCounters *self,
                               TideStatm        *out)
{
  char buf[256];
  char *p = buf;
  guint64 fields[3];

  g_return_val_if_fail (self != NULL, FALSE);

  memset (out, 0, sizeof *out);
  if (tide_procfs_pread_all (self->statm_fd, buf, sizeof buf) <= 0)
    return FALSE;  /* reaped: ESRCH */

  /* size resident shared text lib data dt, in pages */
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      char *end;

      fields[i] = g_ascii_strtoull (p, &end, 10);
      if (end == p)
        return FALSE;
      p = end;
    }

  /* A zombie has no mm any more and reads as all zeros. */
  if (fields[0] == 0 || !same_image (self))
    return FALSE;
  out->rss_bytes = fields[1] * self->page_size;
  out->shared_bytes = fields[2] * self->page_size;
  return TRUE;
}

typedef struct
{
  const char *key;
  gsize       offset;  /* of a guint64 field that the key's kB add to */
} KbKey;

/* Adds the values of "Key:   1234 kB" lines to the fields of @out that
 * @keys name; returns whether the first key was seen. */
static gboolean
tide_procfs_parse_kb (char        *text,
                      const KbKey *keys,
                      guint        n_keys,
                      gpointer     out)
{
  gboolean seen_first = FALSE;
  char *saveptr = NULL;

  for (char *line = strtok_r (text, "\n", &saveptr); line != NULL;
       line = strtok_r (NULL, "\n", &saveptr))
    {
      for (guint i = 0; i < n_keys; i++)
        {
          gsize len = strlen (keys[i].key);

          if (strncmp (line, keys[i].key, len) != 0)
            continue;
          G_STRUCT_MEMBER (guint64, out, keys[i].offset) +=
            g_ascii_strtoull (line + len, NULL, 10) * 1024;
          seen_first |= (i == 0);
        }
    }
  return seen_first;
}

static gboolean
tide_proc_counters_parse_rollup (char       *text,
                                 TideRollup *out)
{
  static const KbKey keys[] = {
    { "Rss:", G_STRUCT_OFFSET (TideRollup, rss_bytes) },
    { "Pss:", G_STRUCT_OFFSET (TideRollup, pss_bytes) },
    { "Anonymous:", G_STRUCT_OFFSET (TideRollup, anonymous_bytes) },
    { "Swap:", G_STRUCT_OFFSET (TideRollup, swap_bytes) },
    { "Private_Clean:", G_STRUCT_OFFSET (TideRollup, private_bytes) },
    { "Private_Dirty:", G_STRUCT_OFFSET (TideRollup, private_bytes) },
    { "Shared_Clean:", G_STRUCT_OFFSET (TideRollup, shared_bytes) },
    { "Shared_Dirty:", G_STRUCT_OFFSET (TideRollup, shared_bytes) },
  };

  return tide_procfs_parse_kb (text, keys, G_N_ELEMENTS (keys), out);
}

/* The kernel's split of the RSS, from /proc/PID/status: one read that
 * takes no mmap lock, unlike smaps_rollup. */
static gboolean
tide_proc_counters_read_status (TideProcCounters *self,
                                TideRssClasses   *out)
{
  static const KbKey keys[] = {
    { "VmRSS:", G_STRUCT_OFFSET (TideRssClasses, rss_bytes) },
    { "RssAnon:", G_STRUCT_OFFSET (TideRssClasses, anon_bytes) },
    { "RssFile:", G_STRUCT_OFFSET (TideRssClasses, file_bytes) },
    { "RssShmem:", G_STRUCT_OFFSET (TideRssClasses, shmem_bytes) },
    { "VmSwap:", G_STRUCT_OFFSET (TideRssClasses, swap_bytes) },
    { "VmHWM:", G_STRUCT_OFFSET (TideRssClasses, peak_bytes) },
  };
  char buf[4096];

  if (self->status_fd < 0)
    self->status_fd = tide_procfs_open_file (self->pid, "status", NULL);
  if (self->status_fd < 0 || tide_procfs_pread_all (self->status_fd, buf, sizeof buf) <= 0)
    return FALSE;
  /* A zombie's status has no Vm lines at all. */
  return tide_procfs_parse_kb (buf, keys, G_N_ELEMENTS (keys), out) && same_image (self);
}

gboolean
tide_proc_counters_read_classes (TideProcCounters *self,
                                 gboolean          with_rollup,
                                 TideRssClasses   *out)
{
  TideRollup rollup;

  g_return_val_if_fail (self != NULL, FALSE);

  memset (out, 0, sizeof *out);
  if (!tide_proc_counters_read_status (self, out))
    return FALSE;
  if (!with_rollup)
    return TRUE;
  if (!tide_proc_counters_read_rollup (self, &rollup))
    return FALSE;
  out->pss_bytes = rollup.pss_bytes;
  out->private_bytes = rollup.private_bytes;
  out->shared_bytes = rollup.shared_bytes;
  return TRUE;
}

gboolean
tide_proc_counters_read_rollup (TideProcCounters *self,
                                TideRollup       *out)
{
  char buf[4096];

  g_return_val_if_fail (self != NULL, FALSE);

  memset (out, 0, sizeof *out);
  /* Nothing once the image's memory is gone (its exit, or an exec: the
   * next image's is not this one's). */
  if (self->rollup_fd < 0 || tide_procfs_pread_all (self->rollup_fd, buf, sizeof buf) <= 0)
    return FALSE;
  return tide_proc_counters_parse_rollup (buf, out);
}

TidePagemap *
tide_pagemap_open (int      pid,
                   GError **error)
{
  TidePagemap *self;
  int fd = tide_procfs_open_file (pid, "pagemap", error);

  if (fd < 0)
    return NULL;
  self = g_new0 (TidePagemap, 1);
  self->fd = fd;
  self->page_shift = g_bit_nth_lsf (sysconf (_SC_PAGESIZE), -1);
  self->runs = g_array_new (FALSE, FALSE, sizeof (TidePageRegion));
  return self;
}

void
tide_pagemap_free (TidePagemap *self)
{
  if (self == NULL)
    return;
  close (self->fd);
  g_free (self->window);
  g_free (self->vec);
  g_array_unref (self->runs);
  g_free (self);
}

void
_tide_pagemap_set_scan (TidePagemap *self,
                        gboolean     scan)
{
  g_return_if_fail (self != NULL);

  self->no_scan = !scan;
  self->window_n = 0;
}

gboolean
_tide_pagemap_get_scan (TidePagemap *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return !self->no_scan;
}

static inline guint64
tide_range_first_page (const TideRange *r,
                       guint            shift)
{
  return r->addr >> shift;
}

/* One past the last page of a non-empty range, saturating at the top. */
static inline guint64
tide_range_end_page (const TideRange *r,
                     guint            shift)
{
  guint64 last = r->addr + MIN (r->size, G_MAXUINT64 - r->addr) - 1;

  return (last >> shift) + 1;
}

/* Where the window that starts at @first should end: over the ranges from
 * @i on while they are close together. */
static guint64
tide_pagemap_window_end (TidePagemap     *self,
                         const TideRange *ranges,
                         guint            n,
                         guint            i,
                         guint64          first)
{
  guint64 limit = first + TIDE_PAGEMAP_MAX_WINDOW;
  guint64 end = first + 1;

  for (guint j = i; j < n; j++)
    {
      guint64 start = tide_range_first_page (&ranges[j], self->page_shift);

      if (ranges[j].size == 0)
        continue;
      if (start >= limit || (start > end && start - end > TIDE_PAGEMAP_MAX_GAP))
        break;
      end = MAX (end, tide_range_end_page (&ranges[j], self->page_shift));
      if (end >= limit)
        return limit;
    }
  return end;
}

/* Loads the runs of present pages in [first, end) with PAGEMAP_SCAN.
 * Returns FALSE, with errno set, when the kernel refused. */
static gboolean
tide_pagemap_scan (TidePagemap *self,
                   guint64      first,
                   guint64      end)
{
  guint64 from = first << self->page_shift;
  guint64 to = end << self->page_shift;

  if (self->vec == NULL)
    self->vec = g_new (TidePageRegion, TIDE_PAGEMAP_SCAN_VEC);
  g_array_set_size (self->runs, 0);
  while (from < to)
    {
      TidePmScanArg arg = {
        .size = sizeof arg,
        .start = from,
        .end = to,
        .vec = (guintptr) self->vec,
        .vec_len = TIDE_PAGEMAP_SCAN_VEC,
        /* Present, and with anon_only not of the page cache. */
        .category_mask = TIDE_PAGE_IS_PRESENT | (self->anon_only ? TIDE_PAGE_IS_FILE : 0),
        .category_inverted = self->anon_only ? TIDE_PAGE_IS_FILE : 0,
        .return_mask = TIDE_PAGE_IS_PRESENT,
      };
      int n = ioctl (self->fd, TIDE_PAGEMAP_SCAN, &arg);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;
      g_array_append_vals (self->runs, self->vec, n);
      /* The walk stops early only when the vector is full. */
      if (arg.walk_end <= from)
        break;
      from = arg.walk_end;
    }
  self->window_is_runs = TRUE;
  self->window_first = first;
  self->window_n = end - first;
  return TRUE;
}

gboolean
tide_pagemap_kernel_has_scan (void)
{
  g_autoptr(TidePagemap) self = tide_pagemap_open (getpid (), NULL);
  guint64 page;

  if (self == NULL)
    return FALSE;
  /* A page of this very stack, which is present. */
  page = (guint64) (guintptr) &page >> self->page_shift;
  return tide_pagemap_scan (self, page, page + 1);
}

/* Loads entries of pages [first, end); unread entries read as absent. */
static gboolean
tide_pagemap_read_entries (TidePagemap *self,
                           guint64      first,
                           guint64      end)
{
  gsize want = (end - first) * sizeof (guint64);
  gsize done = 0;
  gboolean ok = TRUE;

  if (self->window == NULL)
    self->window = g_new (guint64, TIDE_PAGEMAP_MAX_WINDOW);
  self->window_is_runs = FALSE;
  while (done < want)
    {
      gssize got = pread (self->fd, (char *) self->window + done, want - done,
                          first * sizeof (guint64) + done);

      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        {
          /* 0: past the top of the user address space, or the mm is gone
           * (an exited process): below USER_SPACE_FLOOR it is the latter. */
          ok = got == 0 && ((first + done / sizeof (guint64)) << self->page_shift) >=
                           USER_SPACE_FLOOR;
          break;
        }
      done += got;
    }
  memset ((char *) self->window + done, 0, want - done);
  self->window_first = first;
  self->window_n = end - first;
  return ok;
}

/* Loads the window of pages [first, end).  Returns FALSE when the
 * process's memory could not be read. */
static gboolean
tide_pagemap_load (TidePagemap *self,
                   guint64      first,
                   guint64      end)
{
  if (!self->no_scan && tide_pagemap_scan (self, first, end))
    return TRUE;
  /* ESRCH: the mm is gone, which a read of the entries would take for
   * pages that are all absent. */
  if (!self->no_scan && errno == ESRCH)
    return FALSE;
  /* ENOTTY: no such ioctl; EINVAL: an argument it does not know. */
  if (!self->no_scan && (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP))
    self->no_scan = TRUE;
  return tide_pagemap_read_entries (self, first, end);
}

/* Bytes of [lo, hi) on present pages, from the window's entries; the
 * window holds every page of it. */
static guint64
tide_pagemap_entries_resident (TidePagemap *self,
                               guint64      lo,
                               guint64      hi)
{
  guint shift = self->page_shift;
  guint64 last_page = (hi - 1) >> shift;
  guint64 mask = TIDE_PAGEMAP_PRESENT | (self->anon_only ? TIDE_PAGEMAP_FILE : 0);
  guint64 total = 0;

  for (guint64 page = lo >> shift; page <= last_page; page++)
    {
      guint64 start, end;

      if ((self->window[page - self->window_first] & mask) != TIDE_PAGEMAP_PRESENT)
        continue;
      /* Only the bytes of a partial first or last page count. */
      start = MAX (lo, page << shift);
      end = page == last_page ? hi : (page + 1) << shift;
      total += end - start;
    }
  return total;
}

/* Bytes of [lo, hi) on present pages, from the window's runs. */
static guint64
tide_pagemap_runs_resident (TidePagemap *self,
                            guint64      lo,
                            guint64      hi)
{
  const TidePageRegion *runs = (const TidePageRegion *) self->runs->data;
  guint a = 0, b = self->runs->len;
  guint64 total = 0;

  /* The first run that ends after @lo. */
  while (a < b)
    {
      guint mid = a + (b - a) / 2;

      if (runs[mid].end <= lo)
        a = mid + 1;
      else
        b = mid;
    }
  for (guint i = a; i < self->runs->len && runs[i].start < hi; i++)
    total += MIN (hi, runs[i].end) - MAX (lo, runs[i].start);
  return total;
}

static guint64
tide_pagemap_range_resident (TidePagemap     *self,
                             const TideRange *ranges,
                             guint            n,
                             guint            i,
                             gboolean        *ok)
{
  const TideRange *r = &ranges[i];
  guint shift = self->page_shift;
  guint64 addr = r->addr;
  guint64 end_addr = r->addr + MIN (r->size, G_MAXUINT64 - r->addr);
  guint64 total = 0;

  /* Window by window: a range may be longer than one. */
  while (addr < end_addr)
    {
      guint64 page = addr >> shift;
      guint64 window_end, chunk_end;

      /* A process whose memory is gone has no window to read: no figure. */
      if ((page < self->window_first || page >= self->window_first + self->window_n) &&
          !tide_pagemap_load (self, page, tide_pagemap_window_end (self, ranges, n, i, page)))
        {
          self->window_n = 0;
          *ok = FALSE;
          return 0;
        }
      window_end = self->window_first + self->window_n;
      /* The window may end at the top of the address space. */
      chunk_end = window_end > (G_MAXUINT64 >> shift) ? end_addr
                                                      : MIN (end_addr, window_end << shift);
      total += self->window_is_runs ? tide_pagemap_runs_resident (self, addr, chunk_end)
                                    : tide_pagemap_entries_resident (self, addr, chunk_end);
      addr = chunk_end;
    }
  return total;
}

gboolean
tide_pagemap_resident (TidePagemap     *self,
                       const TideRange *ranges,
                       guint            n,
                       guint64         *resident_out)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (n == 0 || (ranges != NULL && resident_out != NULL), FALSE);

  /* Entries change between calls: never trust a window from last time. */
  self->window_n = 0;
  for (guint i = 0; i < n; i++)
    resident_out[i] = 0;
  for (guint i = 0; i < n && ok; i++)
    if (ranges[i].size > 0)
      resident_out[i] = tide_pagemap_range_resident (self, ranges, n, i, &ok);
  return ok;
}

gboolean
tide_pagemap_anonymous (TidePagemap     *self,
                        const TideRange *ranges,
                        guint            n,
                        guint64         *anonymous_out)
{
  gboolean ok;

  g_return_val_if_fail (self != NULL, FALSE);

  self->anon_only = TRUE;
  ok = tide_pagemap_resident (self, ranges, n, anonymous_out);
  self->anon_only = FALSE;
  /* Its windows hold the anonymous pages only: no later read may use them. */
  self->window_n = 0;
  return ok;
}
