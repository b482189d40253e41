/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-cuda-counter.c: tidemark_preload_counter, for values that
 * only the program can read: torch.cuda.memory_allocated/memory_reserved
 * (and torch_xla's xm.get_memory_info) at each step end in `--torch` mode.
 * Built without the CUDA headers: it needs none.
 *
 * From Python (ctypes, the preload is already loaded):
 *   lib = ctypes.CDLL(None)
 *   lib.tidemark_preload_counter(10, device, torch.cuda.memory_allocated(device))
 * with 10 = torch_allocated and 11 = torch_reserved (storage/common/tide-kinds.h),
 * argtypes (c_uint32, c_int, c_int64); call it before tidemark.step() so
 * the value lands in the step it ends.
 */
#include "config.h"

#include "tide-preload-private.h"

#include "tide-preload-buffer.h"

#include <errno.h>

/* A counter's value, stamped @time_ns: now, or the time of the reading
 * the recorder asked it for (TIDE_WIRE_FIGURES_REQUEST). */
void
tide_counter_append_at (uint32_t counter,
                        int      device,
                        int64_t  value,
                        uint64_t time_ns)
{
  _Alignas (8) TideWireCounter rec;
  int saved = errno;

  if (!tide_active ())
    return;
  tide_tls.guard++;
  rec = (TideWireCounter) {
    .h = { .type = TIDE_WIRE_COUNTER, .len = sizeof rec, .tid = tide_thread_tid (),
           .time_ns = time_ns },
    .counter = counter,
    .device = (int16_t) device,
    .value = value,
  };
  tide_buffer_append (&rec, sizeof rec);
  tide_tls.guard--;
  errno = saved;
}

TIDE_EXPORT void
tidemark_preload_counter (uint32_t counter,
                          int      device,
                          int64_t  value)
{
  tide_counter_append_at (counter, device, value, tide_now_ns ());
}
