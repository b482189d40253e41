/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The executable mappings of a running process (tide-proc-maps.h).  A
 * mapping's load bias is its start minus the vaddr of the file offset it
 * maps, which the ELF program headers give: p_vaddr - p_offset is the same
 * for the whole segment.
 */
#include "config.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tide-proc-maps.h"

static void
mapping_clear (gpointer data)
{
  g_free (((TideProcMapping *) data)->path);
}

GArray *
tide_elf_load_segments (const char *path)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (TideLoadSegment));
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  Elf *elf;
  size_t n = 0;

  if (fd < 0)
    return out;
  elf_version (EV_CURRENT);
  elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  if (elf != NULL && elf_getphdrnum (elf, &n) == 0)
    for (size_t i = 0; i < n; i++)
      {
        GElf_Phdr phdr;
        TideLoadSegment s;

        if (gelf_getphdr (elf, (int) i, &phdr) == NULL || phdr.p_type != PT_LOAD)
          continue;
        s = (TideLoadSegment) { phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, phdr.p_memsz,
                                phdr.p_flags };
        g_array_append_val (out, s);
      }
  if (elf != NULL)
    elf_end (elf);
  close (fd);
  return out;
}

/* p_vaddr - p_offset of the PT_LOAD segment that holds @offset; 0 when the
 * file cannot be read, is not ELF or no segment holds it (then start -
 * offset is right for every common layout). */
static gint64
segment_delta (const char *path,
               guint64     offset)
{
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  g_autoptr(GArray) segments = tide_elf_load_segments (path);

  for (guint i = 0; i < segments->len; i++)
    {
      const TideLoadSegment *s = &g_array_index (segments, TideLoadSegment, i);

      if (offset >= (s->offset & ~(page - 1)) && offset < s->offset + s->filesz)
        return (gint64) s->vaddr - (gint64) s->offset;
    }
  return 0;
}

/* The start, end, offset and path of an executable file mapping. */
static gboolean
parse_line (const char      *line,
            TideProcMapping *out,
            guint64         *offset,
            int             *path_at)
{
  guint64 start, end;
  char perms[8];

  *path_at = 0;
  if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
              &start, &end, perms, offset, path_at) < 4 || *path_at == 0)
    return FALSE;
  /* Only code can be on a stack; "[vdso]" and deleted files cannot be
   * opened by the symbolizer. */
  if (strchr (perms, 'x') == NULL || line[*path_at] != '/' ||
      g_str_has_suffix (line, " (deleted)"))
    return FALSE;
  *out = (TideProcMapping) { start, end, 0, NULL };
  return TRUE;
}

static GArray *
read_maps (pid_t             pid,
           TideAddressSpace *known,
           gboolean          with_bias)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/maps", pid);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  GArray *out;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  out = g_array_new (FALSE, FALSE, sizeof (TideProcMapping));
  g_array_set_clear_func (out, mapping_clear);
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      TideProcMapping m;
      guint64 offset;
      int path_at;

      if (!parse_line (lines[i], &m, &offset, &path_at) ||
          (known != NULL && tide_address_space_resolve (known, m.start, NULL, NULL)))
        continue;
      m.path = g_strdup (lines[i] + path_at);
      if (with_bias)
        m.load_bias = m.start - offset - (guint64) segment_delta (m.path, offset);
      g_array_append_val (out, m);
    }
  return out;
}

GArray *
tide_proc_maps_read (pid_t             pid,
                     TideAddressSpace *known)
{
  return read_maps (pid, known, TRUE);
}

GArray *
tide_proc_maps_read_paths (pid_t pid)
{
  return read_maps (pid, NULL, FALSE);
}

guint
tide_proc_maps_load (TideAddressSpace *space,
                     pid_t             pid)
{
  g_autoptr(GArray) maps = tide_proc_maps_read (pid, space);

  for (guint i = 0; maps != NULL && i < maps->len; i++)
    {
      const TideProcMapping *m = &g_array_index (maps, TideProcMapping, i);

      tide_address_space_add (space, m->start, m->end, m->load_bias, m->path);
    }
  return maps != NULL ? maps->len : 0;
}
