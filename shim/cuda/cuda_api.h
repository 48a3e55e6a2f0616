/* The one way shim/cuda (and its tests) include the CUDA and CUPTI headers.
 *
 * generated_cuda_meta.h declares the parameter struct of every driver function, including the
 * legacy 32-bit forms whose types (CUdeviceptr_v1, CUDA_MEMCPY2D_v1, ...) cuda.h only declares
 * for the driver's own build. Defining __CUDA_API_VERSION_INTERNAL makes those declarations
 * visible so the header compiles; it also turns cuda.h's function-name macros off (cuMemFree is
 * then the v1 entry point), which does not matter here: the shim links no CUDA library and names
 * driver functions only as strings for dlsym. Include this header before any other CUDA header. */
#ifndef DLS_CUDA_API_H
#define DLS_CUDA_API_H

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>
#include <generated_cuda_meta.h>

#endif
