/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin.h: what the stand-in runtime needs from the stand-in driver
 * beyond the real driver API.  Nothing here is part of CUDA.
 */
#pragma once

#include <stddef.h>

#define TIDE_STANDIN_TOTAL ((size_t) 16 << 30)   /* bytes per device */

int    tide_standin_device_count       (void);
size_t tide_standin_device_used        (int device);
int    tide_standin_current_device     (void);
void   tide_standin_set_current_device (int device);
