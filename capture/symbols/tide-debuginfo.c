/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-debuginfo.c: the separate debug file of an ELF file.  In elfutils
 * 0.188 dwfl_standard_find_debuginfo creates a debuginfod client (a curl
 * socketpair, 2 fds) for every stripped file and downloads over the network
 * when DEBUGINFOD_URLS is set, so we look in the same places ourselves.
 */
#include "config.h"

#include "tide-debuginfo.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Opens @path if it is a debug file for a module with build-id @bits
 * (any file will do when the module has no build-id). */
static int
tide_debuginfo_try (const char          *path,
                    const unsigned char *bits,
                    int                  n_bits,
                    char               **found_path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  gboolean ok = fd >= 0 && n_bits <= 0;

  if (fd >= 0 && n_bits > 0)
    {
      Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
      const void *id = NULL;

      ok = elf != NULL && dwelf_elf_gnu_build_id (elf, &id) == n_bits
           && memcmp (id, bits, n_bits) == 0;
      elf_end (elf);
    }
  if (!ok)
    {
      if (fd >= 0)
        close (fd);
      return -1;
    }
  *found_path = strdup (path);
  return fd;
}

static const char *
tide_debuginfo_root (void)
{
  const char *root = g_getenv (TIDE_DEBUGINFO_DIR_ENV);

  return root != NULL && *root != '\0' ? root : TIDE_DEBUGINFO_DIR;
}

static char *
tide_debuginfo_build_id_hex (const unsigned char *bits,
                             int                  n_bits)
{
  GString *hex = g_string_sized_new (2 * n_bits);

  for (int i = 0; i < n_bits; i++)
    g_string_append_printf (hex, "%02x", bits[i]);
  return g_string_free (hex, FALSE);
}

int
tide_debuginfo_open (const char          *file_name,
                     const unsigned char *build_id,
                     int                  build_id_len,
                     const char          *debuglink,
                     char               **found_path)
{
  g_autoptr (GPtrArray) candidates = g_ptr_array_new_with_free_func (g_free);
  const char *root = tide_debuginfo_root ();
  int fd = -1;

  if (build_id_len > 1)
    {
      g_autofree char *hex = tide_debuginfo_build_id_hex (build_id, build_id_len);

      g_ptr_array_add (candidates, g_strdup_printf ("%s/.build-id/%.2s/%s.debug",
                                                    root, hex, hex + 2));
    }
  if (debuglink != NULL && file_name != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (file_name);

      g_ptr_array_add (candidates, g_build_filename (dir, debuglink, NULL));
      g_ptr_array_add (candidates, g_build_filename (dir, ".debug", debuglink, NULL));
      g_ptr_array_add (candidates, g_build_filename (TIDE_DEBUGINFO_DIR, dir, debuglink, NULL));
    }

  for (guint i = 0; i < candidates->len && fd < 0; i++)
    {
      /* The debuglink may name the file itself; that one has no DWARF. */
      if (g_strcmp0 (candidates->pdata[i], file_name) == 0)
        continue;
      fd = tide_debuginfo_try (candidates->pdata[i], build_id, build_id_len, found_path);
    }
  return fd;
}

static int
tide_debuginfo_find_for_dwfl (Dwfl_Module  *module,
                              void        **userdata,
                              const char   *modname,
                              Dwarf_Addr    base,
                              const char   *file_name,
                              const char   *debuglink_file,
                              GElf_Word     debuglink_crc,
                              char        **debuginfo_file_name)
{
  const unsigned char *bits = NULL;
  GElf_Addr vaddr;
  int n_bits = dwfl_module_build_id (module, &bits, &vaddr);

  return tide_debuginfo_open (file_name, bits, n_bits, debuglink_file, debuginfo_file_name);
}

const Dwfl_Callbacks tide_debuginfo_dwfl_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = tide_debuginfo_find_for_dwfl,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = NULL,
};

char *
tide_debuginfo_identify (const char *path,
                         gboolean   *has_debug_file)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  Elf *elf;
  const void *bits = NULL;
  ssize_t n_bits;
  GElf_Word crc;
  const char *debuglink;
  char *found = NULL;
  char *hex = NULL;
  int debug_fd;

  *has_debug_file = FALSE;
  if (fd < 0)
    return NULL;
  elf_version (EV_CURRENT);
  elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  n_bits = elf != NULL ? dwelf_elf_gnu_build_id (elf, &bits) : -1;
  if (n_bits > 1)
    {
      hex = tide_debuginfo_build_id_hex (bits, (int) n_bits);
      debuglink = dwelf_elf_gnu_debuglink (elf, &crc);
      debug_fd = tide_debuginfo_open (path, bits, (int) n_bits, debuglink, &found);
      *has_debug_file = debug_fd >= 0;
      if (debug_fd >= 0)
        close (debug_fd);
      free (found);
    }
  elf_end (elf);
  close (fd);
  return hex;
}
