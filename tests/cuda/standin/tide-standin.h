/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin.h: what the stand-in libraries share beyond the CUDA and
 * NVTX APIs of tide-cuda-abi.h.  Nothing here is part of CUDA.
 */
#pragma once

#include <stddef.h>

/* The CUDA version the stand-ins claim (cuDriverGetVersion,
 * cudaRuntimeGetVersion), and ask entry points for: that of
 * libcudart.so.13. */
#define TIDE_STANDIN_CUDA_VERSION 13000

#define TIDE_STANDIN_TOTAL ((size_t) 16 << 30)   /* bytes per device */

int    tide_standin_device_count       (void);
size_t tide_standin_device_total       (void);
size_t tide_standin_device_used        (int device);
int    tide_standin_current_device     (void);
void   tide_standin_set_current_device (int device);

/* The stand-in libnvToolsExt.so.1 (tide-standin-nvtx.c): the exported
 * functions of the NVTX 2 library.  NVTX 3 makes them inline functions of
 * its headers instead, with the same behaviour towards a tool. */
int    nvtxRangePushA                  (const char *message);
int    nvtxRangePop                    (void);
