/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin-nvml.c: a stand-in for NVML (libnvidia-ml.so.1), for the
 * tests of the NVML poll.  NVML runs in the profiler, not in the program it
 * watches, so it cannot see the stand-in libcuda's allocations; it reports
 * one device of TIDE_STANDIN_TOTAL bytes, of which $TIDE_STANDIN_NVML_USED
 * are in use, and at most one process on it: $TIDE_STANDIN_NVML_PROCESS,
 * "PID:BYTES".
 */
#include "tide-cuda-abi.h"
#include "tide-standin.h"

#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__ ((visibility ("default")))

/* Any non-NULL handle: the one device. */
static int the_device;

EXPORT TideNvmlReturn
nvmlInit_v2 (void)
{
  return TIDE_NVML_SUCCESS;
}

EXPORT TideNvmlReturn
nvmlShutdown (void)
{
  return TIDE_NVML_SUCCESS;
}

EXPORT TideNvmlReturn
nvmlDeviceGetCount_v2 (unsigned int *count)
{
  *count = 1;
  return TIDE_NVML_SUCCESS;
}

EXPORT TideNvmlReturn
nvmlDeviceGetHandleByIndex_v2 (unsigned int    index,
                               TideNvmlDevice *device)
{
  if (index != 0)
    return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
  *device = (TideNvmlDevice) &the_device;
  return TIDE_NVML_SUCCESS;
}

EXPORT TideNvmlReturn
nvmlDeviceGetMemoryInfo (TideNvmlDevice  device,
                         TideNvmlMemory *memory)
{
  const char *used = getenv ("TIDE_STANDIN_NVML_USED");

  memory->total = TIDE_STANDIN_TOTAL;
  memory->used = used ? strtoull (used, NULL, 10) : 0;
  memory->free = memory->total - memory->used;
  return TIDE_NVML_SUCCESS;
}

EXPORT TideNvmlReturn
nvmlDeviceGetComputeRunningProcesses_v3 (TideNvmlDevice       device,
                                         unsigned int        *count,
                                         TideNvmlProcessInfo *infos)
{
  const char *process = getenv ("TIDE_STANDIN_NVML_PROCESS");
  TideNvmlProcessInfo info = { 0 };

  if (process == NULL || sscanf (process, "%u:%llu", &info.pid, &info.used_gpu_memory) != 2)
    {
      *count = 0;
      return TIDE_NVML_SUCCESS;
    }
  if (*count < 1)
    {
      *count = 1;
      return TIDE_NVML_ERROR_INSUFFICIENT_SIZE;
    }
  infos[0] = info;
  *count = 1;
  return TIDE_NVML_SUCCESS;
}
