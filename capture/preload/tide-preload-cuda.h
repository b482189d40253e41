/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-cuda.h: what the CUDA runtime and driver hooks share.
 *
 * The hooks are exported under the real names, so the dynamic linker sends
 * the program's calls to us first.  Nothing happens at start-up: each hook
 * finds the function it wraps the first time it runs, so a process that
 * never loads CUDA pays nothing and needs nothing.
 *
 * Every device allocation, pinned block and host<->device copy is recorded
 * (weight 1, never sampled).  One call is recorded once: a runtime call
 * that reaches the driver through our driver hooks (a runtime linked to the
 * driver, or entry points fetched through cuGetProcAddress) raises
 * tide_cuda_depth, and the driver hook below it passes through.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tide-preload-private.h"

extern __thread int tide_cuda_depth __attribute__ ((tls_model ("initial-exec")));

/* Directions of TideWireTransfer. */
enum
{
  TIDE_CUDA_H2D = 1,
  TIDE_CUDA_D2H = 2,
  TIDE_CUDA_D2D = 3,
};

/* The next definition of symbol after ours, or NULL; cached in *slot. */
void    *tide_cuda_next_slow       (void *_Atomic *slot,
                                    const char    *symbol);

static inline void *
tide_cuda_next (void *_Atomic *slot,
                const char    *symbol)
{
  void *fn = atomic_load_explicit (slot, memory_order_acquire);

  return TIDE_LIKELY (fn != NULL) ? fn : tide_cuda_next_slow (slot, symbol);
}

/* Declares `real`, the function that the hook `name` wraps. */
#define TIDE_CUDA_REAL(type, name)                                     \
  static void *_Atomic name##_next_;                                   \
  type real = (type) tide_cuda_next (&name##_next_, #name)

/* True when this call must be recorded: connected, and not inside the
 * profiler or another CUDA hook of this thread. */
static inline bool
tide_cuda_recording (void)
{
  return tide_active () && tide_tls.guard == 0 && tide_cuda_depth == 0;
}

int      tide_cuda_runtime_device  (void);
int      tide_cuda_driver_device   (void);
void     tide_cuda_record_alloc    (uint64_t  addr,
                                    uint64_t  size,
                                    uint16_t  kind,
                                    int       device);
void     tide_cuda_record_free     (uint64_t  addr);
void     tide_cuda_record_transfer (uint32_t  direction,
                                    uint64_t  bytes,
                                    int       device,
                                    uint64_t  start_ns);
/* A call of @api that failed with its out-of-memory @error. */
void     tide_cuda_record_failure  (uint16_t  api,
                                    uint32_t  error,
                                    uint64_t  bytes,
                                    uint16_t  kind,
                                    int       device);
void     tide_cuda_handle_add      (uint64_t  handle,
                                    uint64_t  size,
                                    int       device);
int      tide_cuda_handle_device   (uint64_t  handle);
void     tide_cuda_handle_remove   (uint64_t  handle);

/* tide-preload-cuda-driver.c: our wrapper for an exported driver function
 * that dlsym found on a library's own handle, or real itself. */
void    *tide_cuda_wrap_symbol     (const char *symbol,
                                    void       *real);
/* Our wrapper for a driver entry point that cuGetProcAddress (or
 * cudaGetDriverEntryPoint) returned, or real itself. */
void    *tide_cuda_wrap_entry      (const char *symbol,
                                    int         version,
                                    void       *real);
