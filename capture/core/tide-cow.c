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
 * exact.
 *
 * Whose write it was shows in the page frame, where pagemap shows frames
 * (to a reader with CAP_SYS_ADMIN): a page that the child copied is a new
 * frame, while a page that the child alone maps because its parent wrote
 * (or freed) its own is the frame it inherited.  Those are not the child's
 * copies but pages no longer shared, and are counted apart; the low 32
 * bits of each inherited page's frame tell them (a machine would need
 * 16 TiB of RAM for two frames to share them).
 *
 * A page mapped again later (munmap, then mmap at the same place) is no
 * longer the inherited one but would still count if exclusive: rare for a
 * DataLoader worker, whose heap stays in place.
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
#define PM_FRAME_MASK ((G_GUINT64_CONSTANT (1) << 55) - 1)
#define CHUNK_PAGES   65536u                           /* 512 KiB of entries a read */
#define MAX_GAP_PAGES 1024u                            /* reading 8 KiB beats a pread */
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
  GArray  *frames;     /* guint32: the low bits of each inherited page's frame, in order */
  gboolean frames_seen; /* pagemap showed frames: not all of them 0 */
  guint64  inherited;  /* pages */
  GArray  *early;      /* Run, sorted: pages the child alone mapped already when opened */
  guint64  copied_before; /* ... of which its parent maps a page at the same place */
  guint64 *entries;    /* CHUNK_PAGES */
};

/* Reads the pagemap entries of pages [first, first + n), n <= CHUNK_PAGES,
 * from @fd. */
static gboolean
read_entries (TideCow *self,
              int      fd,
              guint64  first,
              guint64  n)
{
  gsize want = n * sizeof (guint64), done = 0;

  while (done < want)
    {
      gssize got = pread (fd, (char *) self->entries + done, want - done,
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

static inline guint32
frame_of (guint64 entry)
{
  return (guint32) (entry & PM_FRAME_MASK);
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

typedef void (*PageFunc) (TideCow  *self,
                          guint64   page,
                          guint64   entry,
                          gpointer  data);

/* Calls @func on every page of the sorted @runs with its entry in the
 * pagemap that @fd reads.  Runs close together share one read (a pread of
 * pagemap costs far more than reading one more entry): a window stretches
 * over the following runs while the gaps stay under MAX_GAP_PAGES and the
 * whole under CHUNK_PAGES; a longer run is read in chunks. */
static gboolean
walk_pages (TideCow   *self,
            int        fd,
            const Run *runs,
            guint      n_runs,
            PageFunc   func,
            gpointer   data)
{
  for (guint i = 0; i < n_runs;)
    {
      guint64 first = runs[i].first, end = runs[i].first + runs[i].n;
      guint j = i;

      if (runs[i].n > CHUNK_PAGES)
        {
          for (guint64 page = first; page < end; page += CHUNK_PAGES)
            {
              guint64 n = MIN (end - page, CHUNK_PAGES);

              if (!read_entries (self, fd, page, n))
                return FALSE;
              for (guint64 k = 0; k < n; k++)
                func (self, page + k, self->entries[k], data);
            }
          i++;
          continue;
        }
      while (j + 1 < n_runs && runs[j + 1].n <= CHUNK_PAGES &&
             runs[j + 1].first - end <= MAX_GAP_PAGES &&
             runs[j + 1].first + runs[j + 1].n - first <= CHUNK_PAGES)
        {
          j++;
          end = runs[j].first + runs[j].n;
        }
      if (!read_entries (self, fd, first, end - first))
        return FALSE;
      for (; i <= j; i++)
        for (guint64 page = runs[i].first; page < runs[i].first + runs[i].n; page++)
          func (self, page, self->entries[page - first], data);
    }
  return TRUE;
}

static void
note_inherited (TideCow  *self,
                guint64   page,
                guint64   entry,
                gpointer  unused)
{
  guint32 frame = frame_of (entry);

  if (is_copied (entry))
    add_page (self->early, page);
  if (!is_inherited (entry))
    return;
  add_page (self->runs, page);
  g_array_append_val (self->frames, frame);
  self->frames_seen |= frame != 0;
  self->inherited++;
}

static void
count_parent_page (TideCow  *self,
                   guint64   page,
                   guint64   entry,
                   gpointer  unused)
{
  if ((entry & (PM_PRESENT | PM_FILE)) == PM_PRESENT)
    self->copied_before++;
}

/* Between its fork and its HELLO the child has run the fork handlers
 * registered before the preload's (glibc's allocator's among them) and the
 * preload's own, on its copied stack: pages it has copied already, where
 * its parent maps the page it copied.  The others are new, the buffers and
 * the thread that the preload makes for the child: tidemark's own, made
 * before the child's first figure of them, which no term counts (about
 * 64 KiB). */
static void
count_copied_before (TideCow *self,
                     int      parent)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/pagemap", parent);
  int fd;

  if (parent <= 0 || self->early->len == 0 || (fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
    return;
  if (!walk_pages (self, fd, (const Run *) self->early->data, self->early->len,
                   count_parent_page, NULL))
    self->copied_before = 0;
  close (fd);
}

/* Private writable mappings of /proc/PID/maps: where a write copies. */
static gboolean
scan_maps (TideCow    *self,
           const char *maps)
{
  g_autoptr(GArray) writable = g_array_new (FALSE, FALSE, sizeof (Run));
  guint64 scanned = 0;

  for (const char *line = maps; line != NULL && *line != '\0';)
    {
      const char *next = strchr (line, '\n');
      guint64 start, end;
      char perms[5];

      if (sscanf (line, "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x %4s", &start, &end,
                  perms) == 3 && perms[1] == 'w' && perms[3] == 'p' && end > start &&
          scanned < MAX_SCANNED_PAGES)
        {
          Run r = { start >> self->page_shift,
                    MIN ((end - start) >> self->page_shift, MAX_SCANNED_PAGES - scanned) };

          g_array_append_val (writable, r);
          scanned += r.n;
        }
      line = next ? next + 1 : NULL;
    }
  return walk_pages (self, self->pagemap_fd, (const Run *) writable->data, writable->len,
                     note_inherited, NULL);
}

/* /proc/PID/maps in page-sized reads: the kernel formats as much as a
 * read asks for under the process's memory lock, and on a process of many
 * mappings small reads were the faster (bench/bench-rss-classes). */
static char *
read_maps (const char  *path,
           GError     **error)
{
  g_autoptr(GString) text = g_string_sized_new (65536);
  char buf[4096];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  gssize got;

  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot open %s: %s",
                   path, g_strerror (saved));
      return NULL;
    }
  while ((got = read (fd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0)
      g_string_append_len (text, buf, got);
  close (fd);
  if (got < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot read %s", path);
      return NULL;
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

TideCow *
tide_cow_open (int      pid,
               int      parent,
               GError **error)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/pagemap", pid);
  g_autofree char *maps_path = g_strdup_printf ("/proc/%d/maps", pid);
  g_autofree char *maps = NULL;
  g_autoptr(TideCow) self = g_new0 (TideCow, 1);

  self->runs = g_array_new (FALSE, FALSE, sizeof (Run));
  self->early = g_array_new (FALSE, FALSE, sizeof (Run));
  self->frames = g_array_new (FALSE, FALSE, sizeof (guint32));
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
  if ((maps = read_maps (maps_path, error)) == NULL)
    return NULL;
  if (!scan_maps (self, maps))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cannot read %s", path);
      return NULL;
    }
  count_copied_before (self, parent);
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
  g_clear_pointer (&self->early, g_array_unref);
  g_clear_pointer (&self->frames, g_array_unref);
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

typedef struct
{
  guint64  pages;   /* exclusive now */
  guint64  left;    /* ... of which the frames inherited */
  guint64  index;   /* of the page in the inherited ones */
  GArray  *copied;  /* nullable */
} Count;

/* Called on every inherited page in order, as walk_pages() goes. */
static void
count_copied (TideCow  *self,
              guint64   page,
              guint64   entry,
              gpointer  data)
{
  Count *count = data;
  guint64 index = count->index++;

  if (!is_copied (entry))
    return;
  count->pages++;
  if (self->frames_seen && frame_of (entry) == g_array_index (self->frames, guint32, index))
    {
      count->left++;
      return;
    }
  if (count->copied != NULL)
    add_copied (count->copied, page << self->page_shift, G_GUINT64_CONSTANT (1) << self->page_shift);
}

gboolean
tide_cow_measure (TideCow *self,
                  guint64 *bytes_out,
                  gint64  *left_out,
                  GArray  *copied)
{
  Count count = { .copied = copied };

  *bytes_out = 0;
  *left_out = -1;
  if (!walk_pages (self, self->pagemap_fd, (const Run *) self->runs->data, self->runs->len,
                   count_copied, &count))
    return FALSE;
  *bytes_out = (count.pages + self->copied_before) << self->page_shift;
  if (self->frames_seen)
    *left_out = (gint64) (count.left << self->page_shift);
  return TRUE;
}
