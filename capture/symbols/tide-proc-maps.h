/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-proc-maps.h: the executable file mappings of a live process, read
 * from /proc/PID/maps, for the pcs that the target's own MAPPING records
 * did not cover (an object still being loaded by dlopen when it allocated,
 * or mapped by hand).
 */
#pragma once

#include "tide-address-space.h"

G_BEGIN_DECLS

/* Adds to @space the executable, file-backed mappings of @pid that it does
 * not hold yet, with the load bias read from each file's program headers.
 * Returns the number of entries added. */
guint tide_proc_maps_load (TideAddressSpace *space,
                           int               pid);

G_END_DECLS
