/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Anonymous memory by mapping (tide-anon-split.h).
 */
#include "config.h"

#include "tide-anon-split.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "tide-proc-maps.h"

/* glibc's guard is a page by default; a thread made with a larger
 * guardsize has a larger one.  Beyond this, an inaccessible mapping is
 * something else (an allocator's reserved tail). */
#define MAX_GUARD_BYTES (64 * 1024)

/* glibc's arenas other than the main one each live in a heap of
 * HEAP_MAX_SIZE (twice the largest mmap threshold: 64 MiB on 64-bit),
 * aligned to its size, read-write as far as its top has grown and
 * inaccessible beyond. */
#define GLIBC_HEAP_MAX_BYTES (64ull * 1024 * 1024)

struct _TideAnonSplitter
{
  GHashTable *segments;   /* path -> GArray of TideLoadSegment, the writable ones
                           * (empty: none, or unreadable) */
  guint64     page;
};

/* One line of /proc/PID/maps. */
typedef struct
{
  guint64     start;
  guint64     end;
  guint64     offset;
  guint64     inode;
  char        perms[8];
  const char *path;       /* into the line; "" for an anonymous mapping */
} MapsLine;

TideAnonSplitter *
tide_anon_splitter_new (void)
{
  TideAnonSplitter *self = g_new0 (TideAnonSplitter, 1);

  self->segments = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) g_array_unref);
  self->page = (guint64) sysconf (_SC_PAGESIZE);
  return self;
}

void
tide_anon_splitter_free (TideAnonSplitter *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->segments);
  g_free (self);
}

/* The next field of a maps line at *@at, as a number in @base, and the
 * spaces after it skipped; FALSE when it is not one. */
static gboolean
next_number (const char **at,
             int          base,
             char         end,
             guint64     *out)
{
  char *after;

  *out = g_ascii_strtoull (*at, &after, base);
  if (after == *at || *after != end)
    return FALSE;
  /* A line's last field ends it: stay on its terminator. */
  for (*at = end != '\0' ? after + 1 : after; **at == ' '; (*at)++)
    ;
  return TRUE;
}

/* "start-end perms offset dev inode path": by hand, since a process may
 * have tens of thousands of mappings, read with every smaps_rollup
 * (sscanf took most of the time). */
static gboolean
parse_line (const char *line,
            MapsLine   *out)
{
  const char *at = line, *space;

  if (!next_number (&at, 16, '-', &out->start) || !next_number (&at, 16, ' ', &out->end) ||
      (space = strchr (at, ' ')) == NULL || space - at >= (ptrdiff_t) sizeof out->perms)
    return FALSE;
  memcpy (out->perms, at, (gsize) (space - at));
  out->perms[space - at] = '\0';
  at = space + 1;
  if (!next_number (&at, 16, ' ', &out->offset) || (space = strchr (at, ' ')) == NULL)
    return FALSE;
  at = space + 1;
  if (!next_number (&at, 10, ' ', &out->inode) && !next_number (&at, 10, '\0', &out->inode))
    return FALSE;
  out->path = at;
  return out->end > out->start;
}

static gboolean
is_anonymous (const MapsLine *m)
{
  return m->inode == 0 && m->path[0] == '\0';
}

/* The writable segments of the ELF file at @path. */
static GArray *
read_writable_segments (const char *path)
{
  GArray *segments = tide_elf_load_segments (path);

  for (guint i = segments->len; i-- > 0;)
    if (!(g_array_index (segments, TideLoadSegment, i).flags & PF_W))
      g_array_remove_index (segments, i);
  return segments;
}

/* The writable segments of the object that file mapping @m maps: none for
 * an anonymous mapping, a shared one, or a file gone from its path. */
static GArray *
writable_segments (TideAnonSplitter *self,
                   const MapsLine   *m)
{
  GArray *segments;

  if (m->path[0] != '/' || strlen (m->perms) < 4 || m->perms[3] != 'p' ||
      g_str_has_suffix (m->path, " (deleted)"))
    return NULL;
  segments = g_hash_table_lookup (self->segments, m->path);
  if (segments == NULL)
    {
      segments = read_writable_segments (m->path);
      g_hash_table_insert (self->segments, g_strdup (m->path), segments);
    }
  return segments;
}

/* The load bias of segment @s in mapping @m, when @m maps part of its
 * file bytes (from the page they start in). */
static gboolean
segment_bias (TideAnonSplitter      *self,
              const MapsLine        *m,
              const TideLoadSegment *s,
              guint64               *bias)
{
  if (m->offset < (s->offset & ~(self->page - 1)) || m->offset >= s->offset + s->filesz)
    return FALSE;
  *bias = m->start - m->offset - (s->vaddr - s->offset);
  return TRUE;
}

static guint64
round_up (guint64 value,
          guint64 page)
{
  return (value + page - 1) & ~(page - 1);
}

/* The bss of the segment that file mapping @m maps, if it has one: from
 * the end of the file's bytes, rounded up to a page (the page it ends in
 * is the file mapping's), to the end of the segment in memory. */
static void
add_bss (TideAnonSplitter *self,
         const MapsLine   *m,
         GArray           *segments,
         GHashTable       *seen,
         GArray           *data)
{
  if (strchr (m->perms, 'w') == NULL)
    return;
  for (guint i = 0; i < segments->len; i++)
    {
      const TideLoadSegment *s = &g_array_index (segments, TideLoadSegment, i);
      guint64 bias, from, to;
      TideRange range;

      if (s->memsz <= s->filesz || !segment_bias (self, m, s, &bias))
        continue;
      from = round_up (bias + s->vaddr + s->filesz, self->page);
      to = round_up (bias + s->vaddr + s->memsz, self->page);
      if (to <= from || !g_hash_table_add (seen, g_memdup2 (&from, sizeof from)))
        continue;
      range = (TideRange) { from, to - from };
      g_array_append_val (data, range);
    }
}

/* The part of file mapping @m that maps the file bytes of a writable
 * segment, whatever its protection now: the loader makes the relocated
 * part read-only again (RELRO), in a mapping of its own. */
static void
add_written (TideAnonSplitter *self,
             const MapsLine   *m,
             GArray           *segments,
             GArray           *written)
{
  for (guint i = 0; i < segments->len; i++)
    {
      const TideLoadSegment *s = &g_array_index (segments, TideLoadSegment, i);
      guint64 bias, from, to;
      TideRange range;

      if (!segment_bias (self, m, s, &bias))
        continue;
      from = MAX (m->start, (bias + s->vaddr) & ~(self->page - 1));
      to = MIN (m->end, round_up (bias + s->vaddr + s->filesz, self->page));
      if (to <= from)
        continue;
      range = (TideRange) { from, to - from };
      g_array_append_val (written, range);
    }
}

/* A pthread's stack: anonymous, read-write, right above its guard. */
static gboolean
is_thread_stack (const MapsLine *m,
                 const MapsLine *below)
{
  if (g_str_equal (m->path, "[stack]"))
    return TRUE;
  return below != NULL && is_anonymous (m) && is_anonymous (below) &&
         g_str_has_prefix (m->perms, "rw") && g_str_has_prefix (below->perms, "---") &&
         below->end == m->start && below->end - below->start <= MAX_GUARD_BYTES;
}

/* The main arena's heap, grown with brk. */
static gboolean
is_main_heap (const MapsLine *m)
{
  return g_str_equal (m->path, "[heap]");
}

/* The read-write part of another arena's heap: grown to its whole size,
 * or with the inaccessible rest of it right above (@above, NULL: none
 * known). */
static gboolean
is_arena_heap (const MapsLine *m,
               const MapsLine *above)
{
  guint64 size = m->end - m->start;

  if (!is_anonymous (m) || !g_str_has_prefix (m->perms, "rw") ||
      m->start % GLIBC_HEAP_MAX_BYTES != 0)
    return FALSE;
  if (above == NULL)
    return size == GLIBC_HEAP_MAX_BYTES;
  return size < GLIBC_HEAP_MAX_BYTES && is_anonymous (above) &&
         g_str_has_prefix (above->perms, "---") && above->start == m->end &&
         above->end == m->start + GLIBC_HEAP_MAX_BYTES;
}

static void
append_range (GArray         *ranges,
              const MapsLine *m)
{
  TideRange range = { m->start, m->end - m->start };

  g_array_append_val (ranges, range);
}

/* The resident bytes of @ranges (@anonymous: of their anonymous pages
 * alone), which come by address as the maps list them
 * (tide_pagemap_resident() reads sorted ranges fastest). */
static gboolean
resident (TidePagemap *pagemap,
          GArray      *ranges,
          gboolean     anonymous,
          guint64     *out)
{
  const TideRange *each_range = (const TideRange *) (gpointer) ranges->data;
  g_autofree guint64 *each = NULL;

  *out = 0;
  if (ranges->len == 0)
    return TRUE;
  if (pagemap == NULL)
    {
      for (guint i = 0; i < ranges->len && !anonymous; i++)
        *out += g_array_index (ranges, TideRange, i).size;
      return TRUE;
    }
  each = g_new0 (guint64, ranges->len);
  if (!(anonymous ? tide_pagemap_anonymous (pagemap, each_range, ranges->len, each)
                  : tide_pagemap_resident (pagemap, each_range, ranges->len, each)))
    return FALSE;
  for (guint i = 0; i < ranges->len; i++)
    *out += each[i];
  return TRUE;
}

gboolean
_tide_anon_splitter_split (TideAnonSplitter *self,
                           char             *maps,
                           TidePagemap      *pagemap,
                           GArray           *stacks,
                           GArray           *data,
                           GArray           *written,
                           GArray           *heaps,
                           TideAnonSplit    *out)
{
  g_autoptr(GArray) own_heaps = heaps ? NULL : g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autoptr(GArray) own_stacks = stacks ? NULL : g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autoptr(GArray) own_data = data ? NULL : g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autoptr(GArray) own_written = written ? NULL : g_array_new (FALSE, FALSE, sizeof (TideRange));
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  MapsLine below = { 0 };
  gboolean have_below = FALSE;
  char *next = NULL;

  stacks = stacks ? stacks : own_stacks;
  data = data ? data : own_data;
  written = written ? written : own_written;
  heaps = heaps ? heaps : own_heaps;
  for (char *line = maps; line != NULL && *line != '\0'; line = next)
    {
      GArray *segments;
      MapsLine m;

      if ((next = strchr (line, '\n')) != NULL)
        *next++ = '\0';
      if (!parse_line (line, &m))
        continue;
      if (is_thread_stack (&m, have_below ? &below : NULL))
        append_range (stacks, &m);
      if (have_below && is_arena_heap (&below, &m))
        append_range (heaps, &below);
      if (is_main_heap (&m) || is_arena_heap (&m, NULL))
        append_range (heaps, &m);
      if ((segments = writable_segments (self, &m)) != NULL)
        {
          add_bss (self, &m, segments, seen, data);
          add_written (self, &m, segments, written);
        }
      below = m;
      have_below = TRUE;
    }
  *out = (TideAnonSplit) { 0 };
  if (!resident (pagemap, stacks, FALSE, &out->thread_stacks_bytes) ||
      !resident (pagemap, data, FALSE, &out->lib_data_bytes) ||
      !resident (pagemap, written, TRUE, &out->lib_written_bytes) ||
      !resident (pagemap, heaps, FALSE, &out->malloc_heap_resident_bytes))
    return FALSE;
  out->lib_data_bytes += out->lib_written_bytes;
  for (guint i = 0; i < heaps->len; i++)
    out->malloc_heap_bytes += g_array_index (heaps, TideRange, i).size;
  return TRUE;
}

gboolean
tide_anon_splitter_read (TideAnonSplitter *self,
                         int               pid,
                         TidePagemap      *pagemap,
                         TideAnonSplit    *out)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/maps", pid);
  g_autofree char *maps = NULL;

  if (pagemap == NULL || !g_file_get_contents (path, &maps, NULL, NULL))
    return FALSE;
  return _tide_anon_splitter_split (self, maps, pagemap, NULL, NULL, NULL, NULL, out);
}
