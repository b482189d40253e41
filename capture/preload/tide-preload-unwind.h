/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-unwind.h: native stacks of recorded allocations.
 */
#pragma once

#include <stdint.h>

void     tide_unwind_init (void);
uint32_t tide_unwind      (uint64_t *frames,
                           uint32_t  max_frames);
