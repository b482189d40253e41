/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-nvtx.c: NVTX ranges become scopes, through the NVTX
 * injection interface.  `tidemark record` sets NVTX_INJECTION64_PATH to this
 * library (already loaded: dlopen returns the same object), and the first
 * NVTX call of the program calls InitializeInjectionNvtx2, which fills the
 * core callback table with our functions.
 *
 *  - nvtxRangePushA/Ex and nvtxRangePop push and pop a scope on the thread.
 *  - nvtxRangeStartA/Ex push a scope on the starting thread; nvtxRangeEnd
 *    pops it when it is still that thread's innermost scope.  A range ended
 *    on another thread, or out of order, leaves no scope to pop and is let
 *    go (its scope stays pushed for the thread that started it until the
 *    thread pops beneath it).
 *  - nvtxMarkA/Ex interns the scope and leaves it at once: the name appears
 *    in the scope tree with nothing allocated inside.
 *  - Ex calls with a non-ASCII message (wide or registered strings) use the
 *    scope name "nvtx", so that pushes and pops stay balanced.
 *  Domain ranges (nvtxDomainRangePushEx, the CORE2 module) are not hooked.
 */
#include "config.h"

#include "tide-preload-private.h"

#include "tidemark.h"

#include "tide-cuda-abi.h"

#define TIDE_NVTX_MAX_OPEN 64

typedef struct
{
  TideNvtxRangeId id;
  uint32_t      depth;   /* tide_tls.scope_depth right after its push */
} OpenRange;

static _Atomic uint64_t tide_nvtx_next_id = 1;
static __thread int tide_nvtx_level __attribute__ ((tls_model ("initial-exec")));
static __thread OpenRange tide_nvtx_open[TIDE_NVTX_MAX_OPEN]
  __attribute__ ((tls_model ("initial-exec")));
static __thread uint32_t tide_nvtx_n_open __attribute__ ((tls_model ("initial-exec")));

static const char *
message_of (const TideNvtxEventAttributes *attr)
{
  if (attr != NULL && attr->message_type == TIDE_NVTX_MESSAGE_TYPE_ASCII && attr->message.ascii != NULL)
    return attr->message.ascii;
  return "nvtx";
}

static int
range_push_a (const char *message)
{
  tidemark_preload_scope_push (message != NULL ? message : "nvtx");
  return tide_nvtx_level++;
}

static int
range_push_ex (const TideNvtxEventAttributes *attr)
{
  return range_push_a (message_of (attr));
}

static int
range_pop (void)
{
  if (tide_nvtx_level == 0)
    return -1;
  tidemark_preload_scope_pop ();
  return --tide_nvtx_level;
}

static TideNvtxRangeId
range_start_a (const char *message)
{
  TideNvtxRangeId id = atomic_fetch_add (&tide_nvtx_next_id, 1);

  tidemark_preload_scope_push (message != NULL ? message : "nvtx");
  if (tide_nvtx_n_open < TIDE_NVTX_MAX_OPEN)
    tide_nvtx_open[tide_nvtx_n_open++] = (OpenRange) { id, tide_tls.scope_depth };
  return id;
}

static TideNvtxRangeId
range_start_ex (const TideNvtxEventAttributes *attr)
{
  return range_start_a (message_of (attr));
}

static void
range_end (TideNvtxRangeId id)
{
  uint32_t n = tide_nvtx_n_open;

  if (n == 0 || tide_nvtx_open[n - 1].id != id)
    return;
  tide_nvtx_n_open = n - 1;
  if (tide_tls.scope_depth == tide_nvtx_open[n - 1].depth)
    tidemark_preload_scope_pop ();
}

static void
mark_a (const char *message)
{
  tidemark_preload_scope_push (message != NULL ? message : "nvtx");
  tidemark_preload_scope_pop ();
}

static void
mark_ex (const TideNvtxEventAttributes *attr)
{
  mark_a (message_of (attr));
}

static void
set_callback (TideNvtxFunctionTable   table,
              unsigned int            size,
              unsigned int            id,
              TideNvtxFunctionPointer fn)
{
  if (id < size && table[id] != NULL)
    *table[id] = fn;
}

/* Called by the NVTX code in the program, once, at its first NVTX call.
 * Returns 1 when our callbacks are in place, 0 to be left out. */
TIDE_EXPORT int
InitializeInjectionNvtx2 (TideNvtxGetExportTable get_export_table)
{
  const TideNvtxExportTableCallbacks *cb;
  TideNvtxFunctionTable table = NULL;
  unsigned int size = 0;

  if (get_export_table == NULL)
    return 0;
  cb = get_export_table (TIDE_NVTX_ETID_CALLBACKS);
  if (cb == NULL || cb->get_module_function_table == NULL
      || !cb->get_module_function_table (TIDE_NVTX_CB_MODULE_CORE, &table, &size) || table == NULL)
    return 0;
  set_callback (table, size, TIDE_NVTX_CBID_CORE_RangePushA,
                (TideNvtxFunctionPointer) range_push_a);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_RangePushEx,
                (TideNvtxFunctionPointer) range_push_ex);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_RangePop,
                (TideNvtxFunctionPointer) range_pop);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_RangeStartA,
                (TideNvtxFunctionPointer) range_start_a);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_RangeStartEx,
                (TideNvtxFunctionPointer) range_start_ex);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_RangeEnd,
                (TideNvtxFunctionPointer) range_end);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_MarkA,
                (TideNvtxFunctionPointer) mark_a);
  set_callback (table, size, TIDE_NVTX_CBID_CORE_MarkEx,
                (TideNvtxFunctionPointer) mark_ex);
  return 1;
}
