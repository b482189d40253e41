/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-objects.h: the loaded objects, announced to the recorder as
 * MAPPING records (one per executable PT_LOAD segment), and the address
 * range of libtidemark-preload.so itself, whose frames are cut from stacks.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

extern uintptr_t tide_self_start;
extern uintptr_t tide_self_end;
extern _Atomic uint64_t tide_objects_dirty;

void tide_objects_init         (void);
void tide_objects_announce     (void);
void tide_objects_poll         (void);
void tide_objects_resend_all   (void);
void tide_objects_fork_prepare (void);
void tide_objects_fork_parent  (void);
void tide_objects_fork_child   (void);

static inline bool
tide_objects_is_self (uint64_t addr)
{
  return addr >= tide_self_start && addr < tide_self_end;
}
