/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin-nvtx.c: a stand-in for the NVTX library (libnvToolsExt.so.1),
 * for test programs built without NVIDIA's NVTX headers.  It does what the
 * real one does for a tool: at the first NVTX call it loads the library
 * named by $NVTX_INJECTION64_PATH, calls its InitializeInjectionNvtx2 with
 * an export table, and from then on sends each call to the callback that
 * the tool put in the core module's function table.  Without a tool, or
 * when the tool declines, every call does nothing.
 */
#include "tide-cuda-abi.h"
#include "tide-standin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__ ((visibility ("default")))

/* NVTX's "no tool tracks push/pop" return value. */
#define NO_PUSH_POP_TRACKING (-2)

typedef int (*InitFn) (TideNvtxGetExportTable);
typedef int (*PushFn) (const char *);
typedef int (*PopFn)  (void);

/* The core module's callbacks, and the table of slots the tool fills:
 * slot i points at callback i (slot 0 is no callback id). */
static TideNvtxFunctionPointer core[TIDE_NVTX_CBID_CORE_SIZE];
static TideNvtxFunctionPointer *core_slots[TIDE_NVTX_CBID_CORE_SIZE];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int
get_module_function_table (TideNvtxCallbackModule  module,
                           TideNvtxFunctionTable  *out_table,
                           unsigned int           *out_size)
{
  if (module != TIDE_NVTX_CB_MODULE_CORE || out_table == NULL || out_size == NULL)
    return 0;
  *out_table = core_slots;
  *out_size = TIDE_NVTX_CBID_CORE_SIZE;
  return 1;
}

static const TideNvtxExportTableCallbacks callbacks = {
  .struct_size = sizeof callbacks,
  .get_module_function_table = get_module_function_table,
};

static const void *
get_export_table (uint32_t id)
{
  return id == TIDE_NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

static void
load_tool (void)
{
  const char *path = getenv ("NVTX_INJECTION64_PATH");
  void *tool;
  InitFn init;

  for (unsigned i = 1; i < TIDE_NVTX_CBID_CORE_SIZE; i++)
    core_slots[i] = &core[i];
  if (path == NULL || (tool = dlopen (path, RTLD_LAZY)) == NULL)
    return;
  *(void **) &init = dlsym (tool, "InitializeInjectionNvtx2");
  if (init == NULL || init (get_export_table) == 0)
    memset (core, 0, sizeof core);
}

EXPORT int
nvtxRangePushA (const char *message)
{
  PushFn fn;

  pthread_once (&once, load_tool);
  fn = (PushFn) core[TIDE_NVTX_CBID_CORE_RangePushA];
  return fn != NULL ? fn (message) : NO_PUSH_POP_TRACKING;
}

EXPORT int
nvtxRangePop (void)
{
  PopFn fn;

  pthread_once (&once, load_tool);
  fn = (PopFn) core[TIDE_NVTX_CBID_CORE_RangePop];
  return fn != NULL ? fn () : NO_PUSH_POP_TRACKING;
}
