/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-proc-maps.h: the executable file mappings of a live process, read
 * from /proc/PID/maps, with the load bias that TideSymbolizer needs.  The
 * preload learns the bias from dl_iterate_phdr inside the target; from
 * outside (attach, and the recorder's pcs that the target's own MAPPING
 * records did not cover: an object still being loaded by dlopen when it
 * allocated, or mapped by hand) it comes from here.  Also the PT_LOAD
 * segments of an ELF file, which the load bias comes from, and a
 * mapping's bss (capture/core/tide-anon-split.c).
 */
#pragma once

#include <sys/types.h>

#include "tide-address-space.h"

G_BEGIN_DECLS

/* An executable file mapping of /proc/PID/maps. */
typedef struct
{
  guint64  start;
  guint64  end;
  guint64  load_bias;   /* runtime address minus ELF vaddr */
  char    *path;
} TideProcMapping;

/* A PT_LOAD segment of an ELF file's program headers. */
typedef struct
{
  guint64  offset;      /* p_offset */
  guint64  vaddr;       /* p_vaddr */
  guint64  filesz;
  guint64  memsz;       /* beyond filesz: the bss, mapped anonymous */
  guint32  flags;       /* PF_R, PF_W, PF_X */
} TideLoadSegment;

/* The PT_LOAD segments of the ELF file at @path (TideLoadSegment), empty
 * when it cannot be read or is not ELF. */
GArray *tide_elf_load_segments (const char *path);

/* The executable file mappings of @pid (TideProcMapping), leaving out
 * those whose start @known already resolves (NULL: none), or NULL when its
 * maps cannot be read (the process is gone). */
GArray *tide_proc_maps_read (pid_t             pid,
                             TideAddressSpace *known);

/* The same without their load bias (0), which costs a look into each
 * mapped file: for finding a library by its path. */
GArray *tide_proc_maps_read_paths (pid_t pid);

/* Adds to @space the executable file mappings of @pid that it does not
 * hold yet.  Returns the number of entries added. */
guint   tide_proc_maps_load (TideAddressSpace *space,
                             pid_t             pid);

G_END_DECLS
