/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-nvml.c: NVML through dlopen.  Only the handful of calls we use, with
 * the types of their stable ABI (tide-cuda-abi.h; nvml.h is not needed to
 * build).
 *
 * Device numbers are CUDA's, as the target sees them: with
 * CUDA_VISIBLE_DEVICES set to indexes or UUIDs, CUDA device i is the i-th
 * listed NVML device; otherwise CUDA and NVML are assumed to agree (true
 * with CUDA_DEVICE_ORDER=PCI_BUS_ID, and on single-GPU machines).
 *
 * Per-process usage comes from the running compute processes; inside a
 * container whose pid namespace hides the host's, NVML reports host pids
 * and no process matches (the counter then stays absent).
 */
#include "config.h"

#include "tide-nvml.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tide-cuda-abi.h"
#include "tide-capture-process-private.h"
#include "tide-recording-private.h"
#include "tide-schema.h"

#define NVML_MAX_PROCESSES        256

struct _TideNvml
{
  void        *lib;
  TideNvmlFn_nvmlShutdown shutdown;
  TideNvmlFn_nvmlDeviceGetMemoryInfo memory_info;
  /* _v3, or _v2: both fill the same TideTideNvmlProcessInfo. */
  TideNvmlFn_nvmlDeviceGetComputeRunningProcesses_v3 processes;
  GPtrArray   *devices;        /* TideNvmlDevice, by CUDA index */
  gint64       next_poll_ns;
  GHashTable  *written;        /* (process id, counter, device) -> last value */
};

typedef TideNvmlFn_nvmlInit_v2 InitFn;
typedef TideNvmlFn_nvmlDeviceGetCount_v2 CountFn;
typedef TideNvmlFn_nvmlDeviceGetHandleByIndex_v2 ByIndexFn;
typedef TideNvmlFn_nvmlDeviceGetHandleByUUID ByUuidFn;

/* The NVML devices that CUDA numbers 0, 1, ... in the target. */
static void
map_devices (TideNvml  *self,
             CountFn    count,
             ByIndexFn  by_index,
             ByUuidFn   by_uuid)
{
  const char *visible = g_getenv ("CUDA_VISIBLE_DEVICES");
  unsigned int n = 0;
  TideNvmlDevice dev;

  if (visible != NULL)
    {
      g_auto(GStrv) ids = g_strsplit (visible, ",", -1);

      for (guint i = 0; ids[i] != NULL; i++)
        {
          char *id = g_strstrip (ids[i]), *end = NULL;
          gint64 index = g_ascii_strtoll (id, &end, 10);

          if (end != id && *end == '\0' && index >= 0 && by_index ((unsigned) index, &dev) == TIDE_NVML_SUCCESS)
            g_ptr_array_add (self->devices, dev);
          else if (by_uuid != NULL && *id != '\0' && by_uuid (id, &dev) == TIDE_NVML_SUCCESS)
            g_ptr_array_add (self->devices, dev);
          else
            break;  /* CUDA stops at the first invalid entry too */
        }
      return;
    }
  if (count (&n) != TIDE_NVML_SUCCESS)
    return;
  for (unsigned int i = 0; i < n; i++)
    if (by_index (i, &dev) == TIDE_NVML_SUCCESS)
      g_ptr_array_add (self->devices, dev);
}

TideNvml *
tide_nvml_open (void)
{
  g_autoptr(TideNvml) self = g_new0 (TideNvml, 1);
  InitFn init;
  CountFn count;
  ByIndexFn by_index;
  ByUuidFn by_uuid;

  self->devices = g_ptr_array_new ();
  self->written = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->lib = dlopen ("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (self->lib == NULL)
    return NULL;
  *(void **) &init = dlsym (self->lib, "nvmlInit_v2");
  *(void **) &self->shutdown = dlsym (self->lib, "nvmlShutdown");
  *(void **) &count = dlsym (self->lib, "nvmlDeviceGetCount_v2");
  *(void **) &by_index = dlsym (self->lib, "nvmlDeviceGetHandleByIndex_v2");
  *(void **) &by_uuid = dlsym (self->lib, "nvmlDeviceGetHandleByUUID");
  *(void **) &self->memory_info = dlsym (self->lib, "nvmlDeviceGetMemoryInfo");
  *(void **) &self->processes = dlsym (self->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (self->processes == NULL)
    *(void **) &self->processes = dlsym (self->lib, "nvmlDeviceGetComputeRunningProcesses_v2");
  if (init == NULL || self->shutdown == NULL || count == NULL || by_index == NULL
      || self->memory_info == NULL || init () != TIDE_NVML_SUCCESS)
    {
      self->shutdown = NULL;
      return NULL;
    }
  map_devices (self, count, by_index, by_uuid);
  if (self->devices->len == 0)
    return NULL;
  return g_steal_pointer (&self);
}

void
tide_nvml_free (TideNvml *self)
{
  if (self == NULL)
    return;
  if (self->shutdown != NULL)
    self->shutdown ();
  if (self->lib != NULL)
    dlclose (self->lib);
  g_ptr_array_unref (self->devices);
  g_hash_table_unref (self->written);
  g_free (self);
}

guint
tide_nvml_get_n_devices (TideNvml *self)
{
  return self->devices->len;
}

gboolean
tide_nvml_device_memory (TideNvml *self,
                         guint     device,
                         guint64  *used,
                         guint64  *total)
{
  TideNvmlMemory m;

  if (device >= self->devices->len
      || self->memory_info (g_ptr_array_index (self->devices, device), &m) != TIDE_NVML_SUCCESS)
    return FALSE;
  *used = m.used;
  *total = m.total;
  return TRUE;
}

/* The compute processes on a device; 0 when NVML cannot say. */
static unsigned int
device_processes (TideNvml        *self,
                  guint            device,
                  TideNvmlProcessInfo *infos)
{
  unsigned int n = NVML_MAX_PROCESSES;

  if (self->processes == NULL || device >= self->devices->len
      || self->processes (g_ptr_array_index (self->devices, device), &n, infos) != TIDE_NVML_SUCCESS)
    return 0;
  return MIN (n, NVML_MAX_PROCESSES);
}

gboolean
tide_nvml_process_memory (TideNvml *self,
                          guint     device,
                          guint     pid,
                          guint64  *used)
{
  TideNvmlProcessInfo infos[NVML_MAX_PROCESSES];
  unsigned int n = device_processes (self, device, infos);

  for (unsigned int i = 0; i < n; i++)
    if (infos[i].pid == pid)
      {
        *used = infos[i].used_gpu_memory;
        return TRUE;
      }
  return FALSE;
}

static void
write_changed (TideNvml      *self,
               TideRecording *recording,
               gint64         process_id,
               gint           counter,
               guint          device,
               gint64         now_ns,
               gint64         value)
{
  char *key = g_strdup_printf ("%" G_GINT64_FORMAT ":%d:%u", process_id, counter, device);
  gint64 *last = g_hash_table_lookup (self->written, key);

  if (last != NULL && *last == value)
    {
      g_free (key);
      return;
    }
  if (last == NULL)
    {
      last = g_new (gint64, 1);
      g_hash_table_insert (self->written, key, last);
    }
  else
    g_free (key);
  *last = value;
  tide_trace_writer_add_counter (recording->writer, process_id, counter, (gint) device, now_ns,
                                 value);
}

/* device_process for each live process of the job that uses device d. */
static void
poll_processes (TideNvml      *self,
                TideRecording *recording,
                guint          device,
                gint64         now_ns)
{
  TideNvmlProcessInfo infos[NVML_MAX_PROCESSES];
  unsigned int n = device_processes (self, device, infos);

  for (guint i = 0; i < recording->processes->len; i++)
    {
      TideCaptureProcess *p = g_ptr_array_index (recording->processes, i);

      if (p->end_ns != 0)
        continue;
      for (unsigned int k = 0; k < n; k++)
        if (infos[k].pid == (unsigned int) p->pid)
          write_changed (self, recording, p->id, TIDE_COUNTER_DEVICE_PROCESS, device, now_ns,
                         (gint64) infos[k].used_gpu_memory);
    }
}

void
tide_nvml_poll (TideNvml      *self,
                TideRecording *recording,
                gint64         now_ns)
{
  TideCaptureProcess *first;

  if (now_ns < self->next_poll_ns || recording->processes->len == 0)
    return;
  self->next_poll_ns = now_ns + TIDE_NVML_PERIOD_NS;
  first = g_ptr_array_index (recording->processes, 0);
  for (guint d = 0; d < self->devices->len; d++)
    {
      guint64 used, total;

      if (tide_nvml_device_memory (self, d, &used, &total))
        {
          write_changed (self, recording, first->id, TIDE_COUNTER_DEVICE_USED, d, now_ns,
                         (gint64) used);
          write_changed (self, recording, first->id, TIDE_COUNTER_DEVICE_TOTAL, d, now_ns,
                         (gint64) total);
        }
      poll_processes (self, recording, d, now_ns);
    }
}
