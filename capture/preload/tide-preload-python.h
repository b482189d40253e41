/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-python.h: Python frames in the native stacks of the preload.
 */
#pragma once

#include <stdint.h>

/* Depth of this thread's Python shadow stack; 0 when it runs no Python the
 * profiler has seen.  Read on every recorded allocation. */
uint32_t tide_python_depth       (void);

/* Replaces the interpreter's evaluation frames in frames[] (innermost first,
 * n_frames of them, room for max_frames) by this thread's Python frames,
 * tagged as tide-wire.h describes.  Returns the new count. */
uint32_t tide_python_splice      (uint64_t *frames,
                                  uint32_t  n_frames,
                                  uint32_t  max_frames);

/* On a new connection (after a fork): every PYFRAME_DEF again. */
void     tide_python_resend_all  (void);
