/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-cow.c: copy-on-write, page by page.
 *
 * Right after fork every private anonymous page of the child is the
 * parent's page, mapped by both: pagemap shows it present and not
 * "exclusively mapped" (bit 56).  A write by the child gives the child a
 * copy, which it alone maps; so does a write by the parent (the child's
 * page is then the child's alone).  Either way a page inherited at fork is
 * now private to the child and counted in its USS.
 *
 * tide_cow_open() runs while the child waits (TIDE_HELLO_FORKED) and notes,
 * in every private writable mapping, the runs of pages that are present,
 * anonymous and shared: the inherited pages.  tide_cow_measure() reads the
 * pagemap entries of those runs again and counts the pages now present and
 * exclusive.  Pages of large folios are told exclusive by the kernel's
 * estimate for the whole folio; small pages, which is what a copy is, are
 * exact.  A page mapped again later (munmap, then mmap at the same place)
 * is no longer the inherited one but would still count if exclusive: rare
 * for a DataLoader worker, whose heap stays in place.
 */
#include "config.h"

#include "tide-cow.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PM_PRESENT    (G_GUINT64_CONSTANT (1) << 63)
#define PM_FILE       (G_GUINT64_CONSTANT (1) << 61)  /* file page or shared anonymous */
#define PM_EXCLUSIVE  (G_GUINT64_CONSTANT (1) << 56)
#define CHUNK_PAGES   65536u                           /* 512 KiB of entries a read */
/* Past this much virtual memory in writable private mappings the rest is
 * not looked at: 64 GiB of 4 KiB pages, 128 MiB of pagemap to read. */
#define MAX_SCANNED_PAGES (G_GUINT64_CONSTANT (1) << 24)

typedef struct
{
  guint64 first;  /* page number */
  guint64 n;
} Run;

struct _TideCow
{
  int      pagemap_fd;
  guint    page_shift;
  GArray  *runs;       /* Run, sorted: the inherited pages */
  guint64  inherited;  /* pages */
  guint64 *entries;    /* CHUNK_PAGES */
};

/* Reads the pagemap entries of pages [first, first + n), n <= CHUNK_PAGES. */
static gboolean
read_entries (TideCow *self,
              guint64  first,
              guint64  n)
{
  gsize want = n * sizeof (guint64), done = 0;

  while (done < want)
    {
      gssize got = pread (self->pagemap_fd, (char *) self->entries + done, want - done,
                          (off_t) (first * sizeof (guint64) + done));

      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return FALSE;
      done += got;
    }
  return TRUE;
}

static inline gboolean
is_inherited (guint64 entry)
{
  return (entry & (PM_PRESENT | PM_FILE | PM_EXCLUSIVE)) == PM_PRESENT;
}

static inline gboolean
is_copied (guint64 entry)
{
  return (entry & (PM_PRESENT | PM_FILE | PM_EXCLUSIVE)) == (PM_PRESENT | PM_EXCLUSIVE);
}

static void
add_page (GArray  *runs,
          guint64  page)
{
  Run *last = runs->len ? &g_array_index (runs, Run, runs->len - 1) : NULL;

  if (last != NULL && last->first + last->n == page)
    last->n++;
  else
    g_array_append_val (runs, ((Run) { page, 1 }));
}

/* Notes the inherited pages of [first, end). */
static gboolean
scan_mapping (TideCow *self,
              guint64  first,
              guint64  end)
{
  for (guint64 page = first; page < end; page += CHUNK_PAGES)
    {
      guint64 n = MIN (end - page, CHUNK_PAGES);

      if (!read_entries (self, page, n))
        return FALSE;
      for (guint64 i = 0; i < n; i++)
        if (is_inherited (self->entries[i]))
          {
            add_page (self->runs, page + i);
            self->inherited++;
          }
    }
  return TRUE;
}

/* Private writable mappings of /proc/PID/maps: where a write copies. */
static gboolean
scan_maps (TideCow    *self,
           const char *maps)
{
  guint64 scanned = 0;

  for (const char *line = maps; line != NULL && *line != '\0';)
    {
      const char *next = strchr (line, '\n');
      guint64 start, end;
      char perms[5];

      if (sscanf (line, "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x %4s", &start, &end,
                  perms) == 3 && perms[1] == 'w' && perms[3] == 'p' && end > start)
        {
          guint64 first = start >> self->page_shift;
          guint64 n = MIN ((end - start) >> self->page_shift, MAX_SCANNED_PAGES - scanned);

          if (!scan_mapping (self, first, first + n))
            return FALSE;
          scanned += n;
        }
      line = next ? next + 1 : NULL;
    }
  return TRUE;
}

TideCow *
tide_cow_open (int      pid,
               GError **error)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/pagemap", pid);
  g_autofree char *maps_path = g_strdup_printf ("/proc/%d/maps", pid);
  g_autofree char *maps = NULL;
  g_autoptr(TideCow) self = g_new0 (TideCow, 1);

  self->runs = g_array_new (FALSE, FALSE, sizeof (Run));
  self->entries = g_new (guint64, CHUNK_PAGES);
  self->pagemap_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (self->pagemap_fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot open %s: %s",
                   path, g_strerror (saved));
      return NULL;
    }
  self->page_shift = g_bit_nth_lsf (sysconf (_SC_PAGESIZE), -1);
  if (!g_file_get_contents (maps_path, &maps, NULL, error))
    return NULL;
  if (!scan_maps (self, maps))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot read %s", path);
      return NULL;
    }
  return g_steal_pointer (&self);
}

void
tide_cow_free (TideCow *self)
{
  if (self == NULL)
    return;
  if (self->pagemap_fd >= 0)
    close (self->pagemap_fd);
  g_clear_pointer (&self->runs, g_array_unref);
  g_free (self->entries);
  g_free (self);
}

guint64
tide_cow_get_inherited (TideCow *self)
{
  return self->inherited << self->page_shift;
}

static void
add_copied (GArray  *copied,
            guint64  addr,
            guint64  size)
{
  TideRange *last = copied->len ? &g_array_index (copied, TideRange, copied->len - 1) : NULL;

  if (last != NULL && last->addr + last->size == addr)
    last->size += size;
  else
    g_array_append_val (copied, ((TideRange) { addr, size }));
}

gboolean
tide_cow_measure (TideCow *self,
                  guint64 *bytes_out,
                  GArray  *copied)
{
  guint64 pages = 0;
  guint64 page_size = G_GUINT64_CONSTANT (1) << self->page_shift;

  *bytes_out = 0;
  for (guint r = 0; r < self->runs->len; r++)
    {
      const Run *run = &g_array_index (self->runs, Run, r);

      for (guint64 page = run->first; page < run->first + run->n; page += CHUNK_PAGES)
        {
          guint64 n = MIN (run->first + run->n - page, CHUNK_PAGES);

          if (!read_entries (self, page, n))
            return FALSE;
          for (guint64 i = 0; i < n; i++)
            if (is_copied (self->entries[i]))
              {
                pages++;
                if (copied != NULL)
                  add_copied (copied, (page + i) << self->page_shift, page_size);
              }
        }
    }
  *bytes_out = pages << self->page_shift;
  return TRUE;
}
