/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What named-steps.c and named-steps.py do, for the test to expect.
 */
#pragma once

#define NAMED_STEPS 7
#define NAMED_BLOCK (1024 * 1024)   /* at least the sampling mean: always recorded */

#define CTYPES_STEPS 5
/* bytearray(1 << 20) asks malloc for one byte more, for its trailing NUL. */
#define CTYPES_BLOCK (1024 * 1024 + 1)
