/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-proc-maps.c against what the loader itself says: every executable
 * segment of every object this test process has loaded must come back
 * from /proc/self/maps with the load bias that dl_iterate_phdr gives, and
 * an executable mapping that mprotect split in two must resolve in both
 * halves (the second half maps from an offset where no segment starts).
 */
#include "config.h"

#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tide-proc-maps.h"

typedef struct
{
  TideAddressSpace *space;
  guint             checked;
} Loaded;

/* The file as /proc/PID/maps names it: links resolved. */
static char *
object_path (const char *name)
{
  if (name != NULL && name[0] == '/')
    return realpath (name, NULL);
  if (name == NULL || name[0] == '\0')
    return g_file_read_link ("/proc/self/exe", NULL);
  return NULL;   /* the vDSO: no file */
}

static int
check_object (struct dl_phdr_info *info,
              size_t               size,
              void                *data)
{
  Loaded *loaded = data;
  g_autofree char *path = object_path (info->dlpi_name);

  if (path == NULL)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
      const char *got_path = NULL;
      guint64 got_bias = 0;

      if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_filesz == 0)
        continue;
      g_assert_true (tide_address_space_resolve (loaded->space, info->dlpi_addr + ph->p_vaddr,
                                                 &got_path, &got_bias));
      g_assert_cmpstr (got_path, ==, path);
      g_assert_cmphex (got_bias, ==, info->dlpi_addr);
      loaded->checked++;
    }
  return 0;
}

static void
test_proc_maps_loaded_objects (void)
{
  g_autoptr(GArray) maps = NULL;
  Loaded loaded = { tide_address_space_new (), 0 };

  g_assert_cmpuint (tide_proc_maps_load (loaded.space, getpid ()), >, 0);
  dl_iterate_phdr (check_object, &loaded);
  /* This program and libc at least. */
  g_assert_cmpuint (loaded.checked, >=, 2);
  /* Nothing more to add the second time. */
  g_assert_cmpuint (tide_proc_maps_load (loaded.space, getpid ()), ==, 0);
  maps = tide_proc_maps_read (getpid (), loaded.space);
  g_assert_nonnull (maps);
  g_assert_cmpuint (maps->len, ==, 0);
  tide_address_space_free (loaded.space);
}

typedef struct
{
  char             *path;
  ElfW(Phdr)        text;
} Libc;

static int
find_libc (struct dl_phdr_info *info,
           size_t               size,
           void                *data)
{
  Libc *libc = data;
  g_autofree char *base = info->dlpi_name ? g_path_get_basename (info->dlpi_name) : NULL;

  if (base == NULL || !g_str_has_prefix (base, "libc.so"))
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X))
      {
        libc->path = realpath (info->dlpi_name, NULL);
        libc->text = info->dlpi_phdr[i];
        return 1;
      }
  return 0;
}

/* The paths alone: the same mappings, in the same order, with no bias
 * worked out. */
static void
test_proc_maps_paths (void)
{
  g_autoptr(GArray) full = tide_proc_maps_read (getpid (), NULL);
  g_autoptr(GArray) paths = tide_proc_maps_read_paths (getpid ());

  g_assert_nonnull (full);
  g_assert_nonnull (paths);
  g_assert_cmpuint (paths->len, ==, full->len);
  g_assert_cmpuint (paths->len, >=, 2);
  for (guint i = 0; i < paths->len; i++)
    {
      const TideProcMapping *p = &g_array_index (paths, TideProcMapping, i);
      const TideProcMapping *f = &g_array_index (full, TideProcMapping, i);

      g_assert_cmpstr (p->path, ==, f->path);
      g_assert_cmphex (p->start, ==, f->start);
      g_assert_cmphex (p->end, ==, f->end);
      g_assert_cmphex (p->load_bias, ==, 0);
    }
  g_assert_null (tide_proc_maps_read_paths (-1));
}

static void
test_proc_maps_split_mapping (void)
{
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  Libc libc = { 0 };
  TideAddressSpace *space = tide_address_space_new ();
  guint64 offset, expected_bias, got_bias = 0;
  const char *got_path = NULL;
  char *at;
  int fd;

  dl_iterate_phdr (find_libc, &libc);
  g_assert_nonnull (libc.path);
  g_assert_cmpuint (libc.text.p_filesz, >=, 4 * page);
  /* libc's text again, three pages of it, the middle one made
   * non-executable: /proc/self/maps shows two executable mappings, the
   * second from a file offset two pages into the segment. */
  offset = libc.text.p_offset & ~(page - 1);
  fd = open (libc.path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  at = mmap (NULL, 3 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t) offset);
  close (fd);
  g_assert_true (at != MAP_FAILED);
  g_assert_cmpint (mprotect (at + page, page, PROT_READ), ==, 0);
  /* Where the vaddr of file offset `offset` is now. */
  expected_bias = (guint64) (gsize) at - (libc.text.p_vaddr - (libc.text.p_offset - offset));

  tide_proc_maps_load (space, getpid ());
  g_assert_true (tide_address_space_resolve (space, (guint64) (gsize) at + 16, &got_path,
                                             &got_bias));
  g_assert_cmpstr (got_path, ==, libc.path);
  g_assert_cmphex (got_bias, ==, expected_bias);
  g_assert_false (tide_address_space_resolve (space, (guint64) (gsize) at + page + 16, NULL,
                                              NULL));
  g_assert_true (tide_address_space_resolve (space, (guint64) (gsize) at + 2 * page + 16,
                                             &got_path, &got_bias));
  g_assert_cmpstr (got_path, ==, libc.path);
  g_assert_cmphex (got_bias, ==, expected_bias);

  munmap (at, 3 * page);
  tide_address_space_free (space);
  g_free (libc.path);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/proc-maps/loaded-objects", test_proc_maps_loaded_objects);
  g_test_add_func ("/proc-maps/split-mapping", test_proc_maps_split_mapping);
  g_test_add_func ("/proc-maps/paths", test_proc_maps_paths);
  return g_test_run ();
}
