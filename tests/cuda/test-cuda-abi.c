/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-cuda-abi: our CUDA, NVTX and NVML declarations (tide-cuda-abi.h)
 * against NVIDIA's own headers, where a toolkit is installed.  The whole
 * check happens at compile time: a function, a constant, a struct field or
 * a layout that disagrees stops the build with the name of what differs.
 * The program itself only reports which headers it was compiled against.
 */
#define __CUDA_API_VERSION_INTERNAL 1   /* declares cuGetProcAddress with its 11.x ABI */
#include <cuda.h>
#include <cuda_runtime_api.h>
#define NVTX_NO_IMPL 1
#include <nvtx3/nvToolsExt.h>
#if __has_include(<nvml.h>)
#include <nvml.h>
#define TIDE_HAVE_NVML_H 1
#else
#define TIDE_HAVE_NVML_H 0
#endif

#include <stdio.h>

#define TIDE_CUDA_ABI_NO_PROTOTYPES 1
#include "tide-cuda-abi.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define SAME_TYPE(a, b) __builtin_types_compatible_p (a, b)

#define SAME_VALUE(ours, theirs) \
  _Static_assert ((long long) (ours) == (long long) (theirs), #ours " is not " #theirs);

#define SAME_LAYOUT(ours, theirs) \
  _Static_assert (sizeof (ours) == sizeof (theirs) && _Alignof (ours) == _Alignof (theirs), \
                  #ours " is not laid out as " #theirs);

#define SAME_FIELD(ours, f_ours, theirs, f_theirs)                                  \
  _Static_assert (offsetof (ours, f_ours) == offsetof (theirs, f_theirs)             \
                  && SAME_TYPE (__typeof__ (((ours *) 0)->f_ours),                   \
                                __typeof__ (((theirs *) 0)->f_theirs)),              \
                  #ours "." #f_ours " is not " #theirs "." #f_theirs);

/* ---- driver ---------------------------------------------------------------- */

_Static_assert (SAME_TYPE (TideCuResult, CUresult), "TideCuResult");
_Static_assert (SAME_TYPE (TideCuDevice, CUdevice), "TideCuDevice");
_Static_assert (SAME_TYPE (TideCuDeviceptr, CUdeviceptr), "TideCuDeviceptr");
_Static_assert (SAME_TYPE (TideCuContext, CUcontext), "TideCuContext");
_Static_assert (SAME_TYPE (TideCuStream, CUstream), "TideCuStream");
_Static_assert (SAME_TYPE (TideCuMemHandle, CUmemGenericAllocationHandle), "TideCuMemHandle");
_Static_assert (SAME_TYPE (TideCuPointerAttribute, CUpointer_attribute), "TideCuPointerAttribute");
_Static_assert (SAME_TYPE (TideCuProcAddressStatus, CUdriverProcAddressQueryResult),
                "TideCuProcAddressStatus");

SAME_VALUE (TIDE_CU_SUCCESS, CUDA_SUCCESS)
SAME_VALUE (TIDE_CU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE)
SAME_VALUE (TIDE_CU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY)
SAME_VALUE (TIDE_CU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED)
SAME_VALUE (TIDE_CU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE)
SAME_VALUE (TIDE_CU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND)
SAME_VALUE (TIDE_CU_ERROR_HOST_MEMORY_NOT_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
SAME_VALUE (TIDE_CU_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED)
SAME_VALUE (TIDE_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST)
SAME_VALUE (TIDE_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE)
SAME_VALUE (TIDE_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
SAME_VALUE (TIDE_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
SAME_VALUE (TIDE_CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_PINNED)
SAME_VALUE (TIDE_CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_DEVICE)
SAME_VALUE (TIDE_CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_DEFAULT)
SAME_VALUE (TIDE_CU_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS)
SAME_VALUE (TIDE_CU_PROC_ADDRESS_SYMBOL_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)

SAME_LAYOUT (TideCuMemLocation, CUmemLocation)
SAME_FIELD (TideCuMemLocation, type, CUmemLocation, type)
SAME_FIELD (TideCuMemLocation, id, CUmemLocation, id)
SAME_LAYOUT (TideCuMemAllocationProp, CUmemAllocationProp)
SAME_FIELD (TideCuMemAllocationProp, type, CUmemAllocationProp, type)
SAME_FIELD (TideCuMemAllocationProp, requested_handle_types, CUmemAllocationProp,
            requestedHandleTypes)
SAME_FIELD (TideCuMemAllocationProp, location.type, CUmemAllocationProp, location.type)
SAME_FIELD (TideCuMemAllocationProp, location.id, CUmemAllocationProp, location.id)
SAME_FIELD (TideCuMemAllocationProp, win32_handle_meta_data, CUmemAllocationProp,
            win32HandleMetaData)
SAME_FIELD (TideCuMemAllocationProp, alloc_flags.compression_type, CUmemAllocationProp,
            allocFlags.compressionType)
SAME_FIELD (TideCuMemAllocationProp, alloc_flags.gpu_direct_rdma_capable, CUmemAllocationProp,
            allocFlags.gpuDirectRDMACapable)
SAME_FIELD (TideCuMemAllocationProp, alloc_flags.usage, CUmemAllocationProp, allocFlags.usage)
SAME_FIELD (TideCuMemAllocationProp, alloc_flags.reserved, CUmemAllocationProp,
            allocFlags.reserved)

/* ---- runtime --------------------------------------------------------------- */

_Static_assert (SAME_TYPE (TideCudaError, cudaError_t), "TideCudaError");
_Static_assert (SAME_TYPE (TideCudaStream, cudaStream_t), "TideCudaStream");
_Static_assert (SAME_TYPE (TideCudaMemcpyKind, enum cudaMemcpyKind), "TideCudaMemcpyKind");
_Static_assert (SAME_TYPE (TideCudaEntryPointStatus, enum cudaDriverEntryPointQueryResult),
                "TideCudaEntryPointStatus");

SAME_VALUE (TIDE_CUDA_SUCCESS, cudaSuccess)
SAME_VALUE (TIDE_CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue)
SAME_VALUE (TIDE_CUDA_ERROR_MEMORY_ALLOCATION, cudaErrorMemoryAllocation)
SAME_VALUE (TIDE_CUDA_ERROR_INITIALIZATION, cudaErrorInitializationError)
SAME_VALUE (TIDE_CUDA_ERROR_INVALID_MEMCPY_DIRECTION, cudaErrorInvalidMemcpyDirection)
SAME_VALUE (TIDE_CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice)
SAME_VALUE (TIDE_CUDA_ERROR_SYMBOL_NOT_FOUND, cudaErrorSymbolNotFound)
SAME_VALUE (TIDE_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cudaErrorHostMemoryNotRegistered)
SAME_VALUE (TIDE_CUDA_MEMCPY_HOST_TO_HOST, cudaMemcpyHostToHost)
SAME_VALUE (TIDE_CUDA_MEMCPY_HOST_TO_DEVICE, cudaMemcpyHostToDevice)
SAME_VALUE (TIDE_CUDA_MEMCPY_DEVICE_TO_HOST, cudaMemcpyDeviceToHost)
SAME_VALUE (TIDE_CUDA_MEMCPY_DEVICE_TO_DEVICE, cudaMemcpyDeviceToDevice)
SAME_VALUE (TIDE_CUDA_MEMCPY_DEFAULT, cudaMemcpyDefault)
SAME_VALUE (TIDE_CUDA_MEMORY_TYPE_UNREGISTERED, cudaMemoryTypeUnregistered)
SAME_VALUE (TIDE_CUDA_MEMORY_TYPE_HOST, cudaMemoryTypeHost)
SAME_VALUE (TIDE_CUDA_MEMORY_TYPE_DEVICE, cudaMemoryTypeDevice)
SAME_VALUE (TIDE_CUDA_MEMORY_TYPE_MANAGED, cudaMemoryTypeManaged)
SAME_VALUE (TIDE_CUDA_ENABLE_DEFAULT, cudaEnableDefault)
SAME_VALUE (TIDE_CUDA_ENTRY_POINT_SUCCESS, cudaDriverEntryPointSuccess)
SAME_VALUE (TIDE_CUDA_ENTRY_POINT_SYMBOL_NOT_FOUND, cudaDriverEntryPointSymbolNotFound)

#if CUDART_VERSION >= 13000
SAME_LAYOUT (TideCudaPointerAttributes, struct cudaPointerAttributes)
#endif
SAME_FIELD (TideCudaPointerAttributes, type, struct cudaPointerAttributes, type)
SAME_FIELD (TideCudaPointerAttributes, device, struct cudaPointerAttributes, device)
SAME_FIELD (TideCudaPointerAttributes, device_pointer, struct cudaPointerAttributes,
            devicePointer)
SAME_FIELD (TideCudaPointerAttributes, host_pointer, struct cudaPointerAttributes, hostPointer)
#if CUDART_VERSION >= 13000
SAME_FIELD (TideCudaPointerAttributes, reserved, struct cudaPointerAttributes, reserved)
#endif

/* ---- NVTX ------------------------------------------------------------------ */

_Static_assert (SAME_TYPE (TideNvtxRangeId, nvtxRangeId_t), "TideNvtxRangeId");
_Static_assert (SAME_TYPE (TideNvtxFunctionPointer, NvtxFunctionPointer), "TideNvtxFunctionPointer");
_Static_assert (SAME_TYPE (TideNvtxFunctionTable, NvtxFunctionTable), "TideNvtxFunctionTable");
_Static_assert (SAME_TYPE (TideNvtxCallbackModule, NvtxCallbackModule), "TideNvtxCallbackModule");
_Static_assert (SAME_TYPE (TideNvtxGetExportTable, NvtxGetExportTableFunc_t),
                "TideNvtxGetExportTable");

SAME_VALUE (TIDE_NVTX_ETID_CALLBACKS, NVTX_ETID_CALLBACKS)
SAME_VALUE (TIDE_NVTX_CB_MODULE_CORE, NVTX_CB_MODULE_CORE)
SAME_VALUE (TIDE_NVTX_CBID_CORE_MarkEx, NVTX_CBID_CORE_MarkEx)
SAME_VALUE (TIDE_NVTX_CBID_CORE_MarkA, NVTX_CBID_CORE_MarkA)
SAME_VALUE (TIDE_NVTX_CBID_CORE_RangeStartEx, NVTX_CBID_CORE_RangeStartEx)
SAME_VALUE (TIDE_NVTX_CBID_CORE_RangeStartA, NVTX_CBID_CORE_RangeStartA)
SAME_VALUE (TIDE_NVTX_CBID_CORE_RangeEnd, NVTX_CBID_CORE_RangeEnd)
SAME_VALUE (TIDE_NVTX_CBID_CORE_RangePushEx, NVTX_CBID_CORE_RangePushEx)
SAME_VALUE (TIDE_NVTX_CBID_CORE_RangePushA, NVTX_CBID_CORE_RangePushA)
SAME_VALUE (TIDE_NVTX_CBID_CORE_RangePop, NVTX_CBID_CORE_RangePop)
SAME_VALUE (TIDE_NVTX_CBID_CORE_SIZE, NVTX_CBID_CORE_SIZE)
SAME_VALUE (TIDE_NVTX_MESSAGE_TYPE_ASCII, NVTX_MESSAGE_TYPE_ASCII)

SAME_LAYOUT (TideNvtxExportTableCallbacks, NvtxExportTableCallbacks)
SAME_FIELD (TideNvtxExportTableCallbacks, struct_size, NvtxExportTableCallbacks, struct_size)
SAME_FIELD (TideNvtxExportTableCallbacks, get_module_function_table, NvtxExportTableCallbacks,
            GetModuleFunctionTable)

SAME_LAYOUT (TideNvtxEventAttributes, nvtxEventAttributes_t)
SAME_FIELD (TideNvtxEventAttributes, version, nvtxEventAttributes_t, version)
SAME_FIELD (TideNvtxEventAttributes, size, nvtxEventAttributes_t, size)
SAME_FIELD (TideNvtxEventAttributes, category, nvtxEventAttributes_t, category)
SAME_FIELD (TideNvtxEventAttributes, color_type, nvtxEventAttributes_t, colorType)
SAME_FIELD (TideNvtxEventAttributes, color, nvtxEventAttributes_t, color)
SAME_FIELD (TideNvtxEventAttributes, payload_type, nvtxEventAttributes_t, payloadType)
SAME_FIELD (TideNvtxEventAttributes, reserved0, nvtxEventAttributes_t, reserved0)
SAME_FIELD (TideNvtxEventAttributes, payload.u_int64, nvtxEventAttributes_t, payload.ullValue)
SAME_FIELD (TideNvtxEventAttributes, message_type, nvtxEventAttributes_t, messageType)
SAME_FIELD (TideNvtxEventAttributes, message.ascii, nvtxEventAttributes_t, message.ascii)

/* ---- NVML ------------------------------------------------------------------ */

#if TIDE_HAVE_NVML_H
/* The four-field layout that nvmlDeviceGetComputeRunningProcesses_v3
 * fills: nvmlProcessInfo_t in NVML API 11, nvmlProcessInfo_v2_t from 12 on.
 * (Unchecked where this was written: that toolkit had no nvml.h.) */
#if NVML_API_VERSION >= 12
typedef nvmlProcessInfo_v2_t TheirProcessInfo;
#else
typedef nvmlProcessInfo_t TheirProcessInfo;
#endif
_Static_assert (SAME_TYPE (TideNvmlReturn, nvmlReturn_t), "TideNvmlReturn");
_Static_assert (SAME_TYPE (TideNvmlDevice, nvmlDevice_t), "TideNvmlDevice");
SAME_VALUE (TIDE_NVML_SUCCESS, NVML_SUCCESS)
SAME_VALUE (TIDE_NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_INSUFFICIENT_SIZE)
SAME_LAYOUT (TideNvmlMemory, nvmlMemory_t)
SAME_FIELD (TideNvmlMemory, total, nvmlMemory_t, total)
SAME_FIELD (TideNvmlMemory, free, nvmlMemory_t, free)
SAME_FIELD (TideNvmlMemory, used, nvmlMemory_t, used)
SAME_LAYOUT (TideNvmlProcessInfo, TheirProcessInfo)
SAME_FIELD (TideNvmlProcessInfo, pid, TheirProcessInfo, pid)
SAME_FIELD (TideNvmlProcessInfo, used_gpu_memory, TheirProcessInfo, usedGpuMemory)
SAME_FIELD (TideNvmlProcessInfo, gpu_instance_id, TheirProcessInfo, gpuInstanceId)
SAME_FIELD (TideNvmlProcessInfo, compute_instance_id, TheirProcessInfo, computeInstanceId)
#endif

/* ---- functions ------------------------------------------------------------- *
 * Our structs have tags of their own; their layouts are checked above, and
 * for the prototypes they stand for NVIDIA's (the lists are expanded here,
 * after these names are defined). */
#define TideCuMemAllocationProp CUmemAllocationProp
#define TideCudaPointerAttributes struct cudaPointerAttributes
#define TideNvmlMemory nvmlMemory_t
#define TideNvmlProcessInfo TheirProcessInfo

#define SAME_FUNCTION(ret, name, params) \
  _Static_assert (SAME_TYPE (__typeof__ (name), ret params), #name " has another type in the toolkit");

TIDE_CU_FUNCTIONS (SAME_FUNCTION)
TIDE_CUDART_FUNCTIONS (SAME_FUNCTION)
_Static_assert (SAME_TYPE (int (TideNvtxGetExportTable),
                           __typeof__ (*(NvtxInitializeInjectionNvtxFunc_t) 0)),
                "InitializeInjectionNvtx2");
#if TIDE_HAVE_NVML_H
TIDE_NVML_FUNCTIONS (SAME_FUNCTION)
#endif

int
main (void)
{
  printf ("# tide-cuda-abi.h agrees with cuda.h %d, cuda_runtime_api.h %d, NVTX %d%s\n",
          CUDA_VERSION, CUDART_VERSION, NVTX_VERSION,
          TIDE_HAVE_NVML_H ? ", nvml.h" : " (no nvml.h: NVML unchecked)");
  printf ("1..1\nok 1 /device/abi\n");
  return 0;
}
