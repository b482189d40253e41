/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "tide-proc-maps.h"

/* A mapping of file offset @offset at @start comes from the PT_LOAD segment
 * whose page-aligned file offset is @offset; then
 * load bias = start - (p_vaddr - (p_offset - offset)). */
static gboolean
load_bias_from_elf (const char *path,
                    guint64     start,
                    guint64     offset,
                    guint64    *bias)
{
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  gboolean found = FALSE;
  size_t n_phdrs = 0;
  Elf *elf;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  elf_version (EV_CURRENT);
  elf = elf_begin (fd, ELF_C_READ, NULL);
  if (elf != NULL && elf_getphdrnum (elf, &n_phdrs) == 0)
    for (size_t i = 0; i < n_phdrs && !found; i++)
      {
        GElf_Phdr ph;

        if (gelf_getphdr (elf, (int) i, &ph) == NULL || ph.p_type != PT_LOAD ||
            (ph.p_offset & ~(page - 1)) != offset)
          continue;
        *bias = start - (ph.p_vaddr - (ph.p_offset - offset));
        found = TRUE;
      }
  if (elf != NULL)
    elf_end (elf);
  close (fd);
  return found;
}

guint
tide_proc_maps_load (TideAddressSpace *space,
                     int               pid)
{
  g_autofree char *maps_path = g_strdup_printf ("/proc/%d/maps", pid);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  guint added = 0;

  if (!g_file_get_contents (maps_path, &contents, NULL, NULL))
    return 0;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      guint64 start, end, offset, bias;
      char perms[8], path[4096];
      int path_at = 0;

      if (sscanf (lines[i], "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
                  &start, &end, perms, &offset, &path_at) < 4 || path_at == 0 ||
          perms[2] != 'x' || lines[i][path_at] != '/')
        continue;
      g_strlcpy (path, lines[i] + path_at, sizeof path);
      if (tide_address_space_resolve (space, start, NULL, NULL) ||
          !load_bias_from_elf (path, start, offset, &bias))
        continue;
      tide_address_space_add (space, start, end, bias, path);
      added++;
    }
  return added;
}
