/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-cuda-abi.h: the parts of the CUDA driver, CUDA runtime, NVTX and
 * NVML C ABIs that Tidemark hooks, calls or stands in for, declared by us.
 *
 * Why our own: the CUDA toolkit headers are no Debian package, and most
 * PyTorch users have none (their wheels bring libcudart, not its headers),
 * yet device capture must be built on every machine.  The hooks never link
 * CUDA; all they need is the binary interface of a handful of functions,
 * and NVIDIA keeps those stable: a function whose ABI changes gets a new
 * exported name (cuMemAlloc -> cuMemAlloc_v2, cuGetProcAddress ->
 * cuGetProcAddress_v2), and the old name keeps its old ABI.
 *
 * Types and constants carry our prefix, so that this header and NVIDIA's
 * can be included in one translation unit: tests/cuda/test-cuda-abi.c does
 * that where the toolkit is installed, and fails to compile if a
 * declaration here disagrees with the real one.  Functions keep their real
 * exported names (they are the symbols we interpose and the stand-ins
 * export); their prototypes are listed once in the TIDE_CU_FUNCTIONS,
 * TIDE_CUDART_FUNCTIONS and TIDE_NVTX_FUNCTIONS lists below, which the
 * check expands against the real declarations.
 *
 * Enumerations are declared as `unsigned int`: it is how the C compilers
 * of the platform (GCC, clang) lay out an enum whose values are all
 * non-negative, which every enum used here is, and it makes our types
 * compatible with NVIDIA's in the check.
 *
 * Calling convention: CUDAAPI, CUDARTAPI and NVTX_API are empty on Linux.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The newest toolkit these declarations were checked against. */
#define TIDE_CUDA_ABI_CHECKED_VERSION 13000

/* ==== CUDA driver API (libcuda.so.1) =====================================
 * Types and constants as in cuda.h of CUDA 12.0 to 13.0 (unchanged in
 * that span; the first version of each function is given in the list). */

typedef unsigned int TideCuResult;              /* CUresult */

enum
{
  TIDE_CU_SUCCESS                            = 0,
  TIDE_CU_ERROR_INVALID_VALUE                = 1,
  TIDE_CU_ERROR_OUT_OF_MEMORY                = 2,
  TIDE_CU_ERROR_NOT_INITIALIZED              = 3,
  TIDE_CU_ERROR_INVALID_DEVICE               = 101,
  TIDE_CU_ERROR_NOT_FOUND                    = 500,
  TIDE_CU_ERROR_HOST_MEMORY_NOT_REGISTERED   = 713,
  TIDE_CU_ERROR_NOT_SUPPORTED                = 801,
};

typedef int TideCuDevice;                        /* CUdevice */
/* CUdeviceptr: unsigned long long on every 64-bit platform since CUDA 3.2
 * (the _v2 functions); the 32-bit unsigned int ABI is not supported. */
typedef unsigned long long TideCuDeviceptr;
/* Opaque handles; the struct tags are NVIDIA's, so that the pointers are
 * the same types. */
typedef struct CUctx_st *TideCuContext;          /* CUcontext */
typedef struct CUstream_st *TideCuStream;        /* CUstream, cudaStream_t */
typedef unsigned long long TideCuMemHandle;      /* CUmemGenericAllocationHandle */
typedef unsigned int TideCuPointerAttribute;     /* CUpointer_attribute */
typedef unsigned int TideCuProcAddressStatus;    /* CUdriverProcAddressQueryResult */

enum
{
  TIDE_CU_MEMORYTYPE_HOST                    = 1,   /* CUmemorytype */
  TIDE_CU_MEMORYTYPE_DEVICE                  = 2,
  TIDE_CU_POINTER_ATTRIBUTE_MEMORY_TYPE      = 2,   /* CUpointer_attribute */
  TIDE_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL   = 9,
  TIDE_CU_MEM_ALLOCATION_TYPE_PINNED         = 1,   /* CUmemAllocationType */
  TIDE_CU_MEM_LOCATION_TYPE_DEVICE           = 1,   /* CUmemLocationType */
  TIDE_CU_GET_PROC_ADDRESS_DEFAULT           = 0,   /* cuGetProcAddress flags */
  TIDE_CU_PROC_ADDRESS_SUCCESS               = 0,   /* CUdriverProcAddressQueryResult */
  TIDE_CU_PROC_ADDRESS_SYMBOL_NOT_FOUND      = 1,
};

/* CUmemLocation (CUDA 10.2 on). */
typedef struct
{
  unsigned int type;                             /* CUmemLocationType */
  int          id;
} TideCuMemLocation;

/* CUmemAllocationProp_v1 (CUDA 10.2 on; allocFlags.usage since 12.0 took
 * two bytes that were reserved, same size and offsets). */
typedef struct
{
  unsigned int       type;                       /* CUmemAllocationType */
  unsigned int       requested_handle_types;     /* CUmemAllocationHandleType */
  TideCuMemLocation  location;
  void              *win32_handle_meta_data;
  struct
  {
    unsigned char    compression_type;
    unsigned char    gpu_direct_rdma_capable;
    unsigned short   usage;
    unsigned char    reserved[4];
  } alloc_flags;
} TideCuMemAllocationProp;

/* F (return type, exported name, parameters): each function with the ABI
 * of the exported name, and the CUDA version that introduced it. */
#define TIDE_CU_FUNCTIONS(F)                                                      \
  /* 2.0 */ F (TideCuResult, cuInit, (unsigned int flags))                        \
  /* 2.2 */ F (TideCuResult, cuDriverGetVersion, (int *version))                  \
  /* 2.0 */ F (TideCuResult, cuDeviceGetCount, (int *count))                      \
  /* 2.0 */ F (TideCuResult, cuDeviceGet, (TideCuDevice *device, int ordinal))    \
  /* 7.0 */ F (TideCuResult, cuDevicePrimaryCtxRetain,                            \
               (TideCuContext *ctx, TideCuDevice device))                         \
  /* 4.0 */ F (TideCuResult, cuCtxSetCurrent, (TideCuContext ctx))                \
  /* 4.0 */ F (TideCuResult, cuCtxGetCurrent, (TideCuContext *ctx))               \
  /* 2.0 */ F (TideCuResult, cuCtxGetDevice, (TideCuDevice *device))              \
  /* 3.2 */ F (TideCuResult, cuMemGetInfo_v2, (size_t *free_bytes, size_t *total)) \
  /* 3.2 */ F (TideCuResult, cuMemAlloc_v2, (TideCuDeviceptr *dptr, size_t size)) \
  /* 3.2 */ F (TideCuResult, cuMemFree_v2, (TideCuDeviceptr dptr))                \
  /* 11.2 */ F (TideCuResult, cuMemAllocAsync,                                    \
                (TideCuDeviceptr *dptr, size_t size, TideCuStream stream))        \
  /* 11.2 */ F (TideCuResult, cuMemFreeAsync, (TideCuDeviceptr dptr, TideCuStream stream)) \
  /* 2.2 */ F (TideCuResult, cuMemHostAlloc, (void **pp, size_t size, unsigned int flags)) \
  /* 3.2 */ F (TideCuResult, cuMemAllocHost_v2, (void **pp, size_t size))         \
  /* 2.0 */ F (TideCuResult, cuMemFreeHost, (void *p))                            \
  /* 6.5 */ F (TideCuResult, cuMemHostRegister_v2,                                \
               (void *p, size_t size, unsigned int flags))                        \
  /* 4.0 */ F (TideCuResult, cuMemHostUnregister, (void *p))                      \
  /* 3.2 */ F (TideCuResult, cuMemcpyHtoD_v2,                                     \
               (TideCuDeviceptr dst, const void *src, size_t n))                  \
  /* 3.2 */ F (TideCuResult, cuMemcpyDtoH_v2, (void *dst, TideCuDeviceptr src, size_t n)) \
  /* 3.2 */ F (TideCuResult, cuMemcpyHtoDAsync_v2,                                \
               (TideCuDeviceptr dst, const void *src, size_t n, TideCuStream stream)) \
  /* 3.2 */ F (TideCuResult, cuMemcpyDtoHAsync_v2,                                \
               (void *dst, TideCuDeviceptr src, size_t n, TideCuStream stream))   \
  /* 3.2 */ F (TideCuResult, cuMemcpyDtoD_v2,                                     \
               (TideCuDeviceptr dst, TideCuDeviceptr src, size_t n))              \
  /* 10.2 */ F (TideCuResult, cuMemAddressReserve,                                \
                (TideCuDeviceptr *ptr, size_t size, size_t alignment,             \
                 TideCuDeviceptr addr, unsigned long long flags))                 \
  /* 10.2 */ F (TideCuResult, cuMemAddressFree, (TideCuDeviceptr ptr, size_t size)) \
  /* 10.2 */ F (TideCuResult, cuMemCreate,                                        \
                (TideCuMemHandle *handle, size_t size,                            \
                 const TideCuMemAllocationProp *prop, unsigned long long flags))  \
  /* 10.2 */ F (TideCuResult, cuMemRelease, (TideCuMemHandle handle))             \
  /* 10.2 */ F (TideCuResult, cuMemMap,                                           \
                (TideCuDeviceptr ptr, size_t size, size_t offset,                 \
                 TideCuMemHandle handle, unsigned long long flags))               \
  /* 10.2 */ F (TideCuResult, cuMemUnmap, (TideCuDeviceptr ptr, size_t size))     \
  /* 4.0 */ F (TideCuResult, cuPointerGetAttribute,                               \
               (void *data, TideCuPointerAttribute attribute, TideCuDeviceptr ptr)) \
  /* 12.0 */ F (TideCuResult, cuGetProcAddress_v2,                                \
                (const char *symbol, void **pfn, int cuda_version, uint64_t flags, \
                 TideCuProcAddressStatus *status))                                \
  /* 11.3: the exported cuGetProcAddress keeps the 11.x ABI, without the      \
   * status (cuda.h declares it only for __CUDA_API_VERSION_INTERNAL). */     \
  /* 11.3 */ F (TideCuResult, cuGetProcAddress,                                   \
                (const char *symbol, void **pfn, int cuda_version, uint64_t flags))

/* ==== CUDA runtime API (libcudart.so.<major>) ============================
 * As in cuda_runtime_api.h and driver_types.h of CUDA 12.0 to 13.0. */

typedef unsigned int TideCudaError;              /* cudaError_t */

enum
{
  TIDE_CUDA_SUCCESS                          = 0,
  TIDE_CUDA_ERROR_INVALID_VALUE              = 1,
  TIDE_CUDA_ERROR_MEMORY_ALLOCATION          = 2,
  TIDE_CUDA_ERROR_INITIALIZATION             = 3,
  TIDE_CUDA_ERROR_INVALID_MEMCPY_DIRECTION   = 21,
  TIDE_CUDA_ERROR_INVALID_DEVICE             = 101,
  TIDE_CUDA_ERROR_SYMBOL_NOT_FOUND           = 500,
  TIDE_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
};

typedef struct CUstream_st *TideCudaStream;      /* cudaStream_t */
typedef unsigned int TideCudaMemcpyKind;         /* enum cudaMemcpyKind */
typedef unsigned int TideCudaEntryPointStatus;   /* enum cudaDriverEntryPointQueryResult */

enum
{
  TIDE_CUDA_MEMCPY_HOST_TO_HOST              = 0,   /* enum cudaMemcpyKind */
  TIDE_CUDA_MEMCPY_HOST_TO_DEVICE            = 1,
  TIDE_CUDA_MEMCPY_DEVICE_TO_HOST            = 2,
  TIDE_CUDA_MEMCPY_DEVICE_TO_DEVICE          = 3,
  TIDE_CUDA_MEMCPY_DEFAULT                   = 4,
  TIDE_CUDA_MEMORY_TYPE_UNREGISTERED         = 0,   /* enum cudaMemoryType */
  TIDE_CUDA_MEMORY_TYPE_HOST                 = 1,
  TIDE_CUDA_MEMORY_TYPE_DEVICE               = 2,
  TIDE_CUDA_MEMORY_TYPE_MANAGED              = 3,
  TIDE_CUDA_ENABLE_DEFAULT                   = 0,   /* cudaGetDriverEntryPoint flags */
  TIDE_CUDA_ENTRY_POINT_SUCCESS              = 0,   /* enum cudaDriverEntryPointQueryResult */
  TIDE_CUDA_ENTRY_POINT_SYMBOL_NOT_FOUND     = 1,
};

/* struct cudaPointerAttributes, the layout of CUDA 13.0: the four fields
 * of CUDA 11.0 on, then 64 reserved bytes that 13.0 added.  A runtime of
 * 11.x or 12.x writes only the four fields, so the larger struct is right
 * for every runtime, and a smaller one would let a 13.x runtime write past
 * it. */
typedef struct
{
  unsigned int  type;                            /* enum cudaMemoryType */
  int           device;
  void         *device_pointer;
  void         *host_pointer;
  long          reserved[8];
} TideCudaPointerAttributes;

#define TIDE_CUDART_FUNCTIONS(F)                                                  \
  F (TideCudaError, cudaGetDeviceCount, (int *count))                             \
  F (TideCudaError, cudaSetDevice, (int device))                                  \
  F (TideCudaError, cudaGetDevice, (int *device))                                 \
  F (TideCudaError, cudaRuntimeGetVersion, (int *version))                        \
  F (TideCudaError, cudaDeviceSynchronize, (void))                                \
  F (TideCudaError, cudaStreamSynchronize, (TideCudaStream stream))               \
  F (TideCudaError, cudaMemGetInfo, (size_t *free_bytes, size_t *total))          \
  F (TideCudaError, cudaMalloc, (void **ptr, size_t size))                        \
  F (TideCudaError, cudaMallocManaged, (void **ptr, size_t size, unsigned int flags)) \
  F (TideCudaError, cudaMallocPitch,                                              \
     (void **ptr, size_t *pitch, size_t width, size_t height))                    \
  /* 11.2 */ F (TideCudaError, cudaMallocAsync,                                   \
                (void **ptr, size_t size, TideCudaStream stream))                 \
  F (TideCudaError, cudaFree, (void *ptr))                                        \
  /* 11.2 */ F (TideCudaError, cudaFreeAsync, (void *ptr, TideCudaStream stream)) \
  F (TideCudaError, cudaMallocHost, (void **ptr, size_t size))                    \
  F (TideCudaError, cudaHostAlloc, (void **ptr, size_t size, unsigned int flags)) \
  F (TideCudaError, cudaFreeHost, (void *ptr))                                    \
  F (TideCudaError, cudaHostRegister, (void *ptr, size_t size, unsigned int flags)) \
  F (TideCudaError, cudaHostUnregister, (void *ptr))                              \
  F (TideCudaError, cudaPointerGetAttributes,                                     \
     (TideCudaPointerAttributes *attr, const void *ptr))                          \
  F (TideCudaError, cudaMemcpy,                                                   \
     (void *dst, const void *src, size_t n, TideCudaMemcpyKind kind))             \
  F (TideCudaError, cudaMemcpyAsync,                                              \
     (void *dst, const void *src, size_t n, TideCudaMemcpyKind kind,              \
      TideCudaStream stream))                                                     \
  F (TideCudaError, cudaMemcpy2D,                                                 \
     (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,     \
      size_t height, TideCudaMemcpyKind kind))                                    \
  F (TideCudaError, cudaMemcpyPeer,                                               \
     (void *dst, int dst_device, const void *src, int src_device, size_t n))      \
  /* 12.0 (11.3 without the status; deprecated since 12.5) */                   \
  F (TideCudaError, cudaGetDriverEntryPoint,                                      \
     (const char *symbol, void **fn, unsigned long long flags,                    \
      TideCudaEntryPointStatus *status))                                          \
  /* 12.5 */ F (TideCudaError, cudaGetDriverEntryPointByVersion,                  \
                (const char *symbol, void **fn, unsigned int cuda_version,        \
                 unsigned long long flags, TideCudaEntryPointStatus *status))

/* ==== NVTX injection interface (NVTX 3, nvtxDetail/nvtxTypes.h) ==========
 * What a tool loaded through NVTX_INJECTION64_PATH sees: unchanged since
 * NVTX 2 defined InitializeInjectionNvtx2. */

typedef uint64_t TideNvtxRangeId;                /* nvtxRangeId_t */
typedef void (*TideNvtxFunctionPointer) (void);  /* NvtxFunctionPointer */
typedef TideNvtxFunctionPointer **TideNvtxFunctionTable;   /* NvtxFunctionTable */
typedef unsigned int TideNvtxCallbackModule;     /* NvtxCallbackModule */
typedef const void *(*TideNvtxGetExportTable) (uint32_t export_table_id);

enum
{
  TIDE_NVTX_ETID_CALLBACKS                   = 1,   /* NvtxExportTableID */
  TIDE_NVTX_CB_MODULE_CORE                   = 1,   /* NvtxCallbackModule */
  TIDE_NVTX_CBID_CORE_MarkEx                 = 1,   /* NvtxCallbackIdCore */
  TIDE_NVTX_CBID_CORE_MarkA                  = 2,
  TIDE_NVTX_CBID_CORE_RangeStartEx           = 4,
  TIDE_NVTX_CBID_CORE_RangeStartA            = 5,
  TIDE_NVTX_CBID_CORE_RangeEnd               = 7,
  TIDE_NVTX_CBID_CORE_RangePushEx            = 8,
  TIDE_NVTX_CBID_CORE_RangePushA             = 9,
  TIDE_NVTX_CBID_CORE_RangePop               = 11,
  TIDE_NVTX_CBID_CORE_SIZE                   = 16,  /* the table's size in NVTX 3 */
  TIDE_NVTX_MESSAGE_TYPE_ASCII               = 1,   /* nvtxMessageType_t */
};

/* NvtxExportTableCallbacks */
typedef struct
{
  size_t struct_size;
  int  (*get_module_function_table) (TideNvtxCallbackModule  module,
                                     TideNvtxFunctionTable  *out_table,
                                     unsigned int           *out_size);
} TideNvtxExportTableCallbacks;

/* nvtxEventAttributes_t, version 2 (NVTX 2 and 3). */
typedef struct
{
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t  color_type;
  uint32_t color;
  int32_t  payload_type;
  int32_t  reserved0;
  union
  {
    uint64_t u_int64;
    int64_t  l_int64;
    double   d_value;
    uint32_t u_int32;
    int32_t  i_int32;
    float    f_value;
  } payload;
  int32_t  message_type;
  union
  {
    const char    *ascii;
    const void    *unicode;     /* const wchar_t * */
    const void    *registered;  /* nvtxStringHandle_t */
  } message;
} TideNvtxEventAttributes;

/* What the injected library exports (NvtxInitializeInjectionNvtxFunc_t). */
#define TIDE_NVTX_FUNCTIONS(F)                                                    \
  F (int, InitializeInjectionNvtx2, (TideNvtxGetExportTable get_export_table))

/* ==== NVML (libnvidia-ml.so.1), as in nvml.h of CUDA 11.x to 13.0 ======== */

typedef unsigned int TideNvmlReturn;             /* nvmlReturn_t */
typedef struct nvmlDevice_st *TideNvmlDevice;    /* nvmlDevice_t */

enum
{
  TIDE_NVML_SUCCESS                          = 0,
  TIDE_NVML_ERROR_INSUFFICIENT_SIZE          = 7,
};

/* nvmlMemory_t (v1) */
typedef struct
{
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} TideNvmlMemory;

/* nvmlProcessInfo_t: the v2 layout, which nvmlDeviceGetComputeRunningProcesses_v3
 * fills (NVML 11.5 on). */
typedef struct
{
  unsigned int       pid;
  unsigned long long used_gpu_memory;
  unsigned int       gpu_instance_id;
  unsigned int       compute_instance_id;
} TideNvmlProcessInfo;

#define TIDE_NVML_FUNCTIONS(F)                                                    \
  F (TideNvmlReturn, nvmlInit_v2, (void))                                         \
  F (TideNvmlReturn, nvmlShutdown, (void))                                        \
  F (TideNvmlReturn, nvmlDeviceGetCount_v2, (unsigned int *count))                \
  F (TideNvmlReturn, nvmlDeviceGetHandleByIndex_v2,                               \
     (unsigned int index, TideNvmlDevice *device))                                \
  F (TideNvmlReturn, nvmlDeviceGetHandleByUUID, (const char *uuid, TideNvmlDevice *device)) \
  F (TideNvmlReturn, nvmlDeviceGetMemoryInfo, (TideNvmlDevice device, TideNvmlMemory *memory)) \
  /* 11.5 */ F (TideNvmlReturn, nvmlDeviceGetComputeRunningProcesses_v3,          \
                (TideNvmlDevice device, unsigned int *count, TideNvmlProcessInfo *infos))

/* Prototypes, for the hooks that define these names and the stand-ins and
 * test programs that call them.  NVML is only ever reached through dlsym:
 * its list gives function pointer types, TideNvmlFn_<name>. */
#define TIDE_CUDA_ABI_PROTOTYPE(ret, name, params) ret name params;
#define TIDE_NVML_FN_TYPE(ret, name, params) typedef ret (*TideNvmlFn_##name) params;

#ifndef TIDE_CUDA_ABI_NO_PROTOTYPES
TIDE_CU_FUNCTIONS (TIDE_CUDA_ABI_PROTOTYPE)
TIDE_CUDART_FUNCTIONS (TIDE_CUDA_ABI_PROTOTYPE)
TIDE_NVTX_FUNCTIONS (TIDE_CUDA_ABI_PROTOTYPE)
#endif
TIDE_NVML_FUNCTIONS (TIDE_NVML_FN_TYPE)
