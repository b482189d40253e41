/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-own.h: the preload's own memory in the process, the
 * mappings of tide-preload-raw.h, which no hook sees: its buffers, its
 * tables of sampled addresses, Python code objects and scopes.  A
 * profiler's pages are the process's RSS all the same; the recorder names
 * them (TIDE_COUNTER_PRELOAD_OWN) rather than leave them unexplained.
 *
 * Lock-free: a mapping is noted from any hook, on any thread, and in the
 * child of a fork.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Mappings past this many at once are not counted. */
#define TIDE_OWN_MAX_MAPPINGS 1024

void     tide_own_note_mapped   (void   *addr,
                                 size_t  len);
void     tide_own_note_unmapped (void   *addr);

/* The resident bytes of the noted mappings (mincore). */
uint64_t tide_own_resident_bytes (void);

/* In the child of a fork, before it asks tide_own_resident_bytes(). */
void     tide_own_fork_child     (void);
