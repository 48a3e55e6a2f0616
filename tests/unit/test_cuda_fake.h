/* A fake CUDA driver for the shim/cuda unit tests: a dls_drv_table whose functions answer from
 * small tables the tests fill (streams, kernels, allocations), and builders of the
 * CUpti_CallbackData that CUPTI would pass. No libcuda or libcupti is involved. */
#ifndef TEST_CUDA_FAKE_H
#define TEST_CUDA_FAKE_H

#include "cuda/cuda_api.h"
#include "cuda/drv.h"

#include <string.h>

#define FAKE_CTX ((CUcontext)0x7000)
#define FAKE_LEGACY_ID 11
#define FAKE_PER_THREAD_ID 12

typedef struct {
    CUstream h;
    unsigned long long id;
    unsigned flags;
} fake_stream;

typedef struct {
    CUfunction f;
    unsigned n;
    size_t off[8], size[8];
    int as_kernel; /* answers only cuKernelGetParamInfo */
} fake_kernel;

typedef struct {
    CUdeviceptr base;
    size_t size;
    CUcontext ctx; /* the allocation's context */
} fake_alloc;

static fake_stream fake_streams[8];
static fake_kernel fake_kernels[4];
static fake_alloc fake_allocs[4];
static _Atomic int fake_get_id_calls; /* threads of test_cuda_callback resolve concurrently */
static _Atomic int fake_param_info_calls;
static _Atomic int fake_stream_facts_calls; /* cuStreamGetCtx and cuStreamGetFlags */
static _Atomic int fake_ctx_id_calls;

static CUresult fake_stream_get_id(CUstream s, unsigned long long *id)
{
    fake_get_id_calls++;
    if (s == CU_STREAM_LEGACY) {
        *id = FAKE_LEGACY_ID;
        return CUDA_SUCCESS;
    }
    if (s == CU_STREAM_PER_THREAD) {
        *id = FAKE_PER_THREAD_ID;
        return CUDA_SUCCESS;
    }
    for (int i = 0; i < 8; i++)
        if (fake_streams[i].h == s && s) {
            *id = fake_streams[i].id;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fake_stream_get_flags(CUstream s, unsigned *flags)
{
    fake_stream_facts_calls++;
    for (int i = 0; i < 8; i++)
        if (fake_streams[i].h == s && s) {
            *flags = fake_streams[i].flags;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fake_stream_get_ctx(CUstream s, CUcontext *ctx)
{
    (void)s;
    fake_stream_facts_calls++;
    *ctx = FAKE_CTX;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_get_id(CUcontext ctx, unsigned long long *id)
{
    fake_ctx_id_calls++;
    *id = (unsigned long long)(uintptr_t)ctx >> 8;
    return CUDA_SUCCESS;
}

/* Every context is current; its device is 3. */
static CUresult fake_ctx_get_current(CUcontext *ctx)
{
    *ctx = FAKE_CTX;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_push_current(CUcontext ctx)
{
    (void)ctx;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_pop_current(CUcontext *ctx)
{
    *ctx = FAKE_CTX;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_get_device(CUdevice *dev)
{
    *dev = 3;
    return CUDA_SUCCESS;
}

static CUresult param_info(CUfunction f, int as_kernel, size_t i, size_t *off, size_t *size)
{
    fake_param_info_calls++;
    for (int k = 0; k < 4; k++)
        if (fake_kernels[k].f == f && f) {
            if (fake_kernels[k].as_kernel != as_kernel)
                return CUDA_ERROR_INVALID_HANDLE;
            if (i >= fake_kernels[k].n)
                return CUDA_ERROR_INVALID_VALUE;
            *off = fake_kernels[k].off[i];
            *size = fake_kernels[k].size[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fake_func_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    return param_info(f, 0, i, off, size);
}

static CUresult fake_kernel_param_info(CUkernel k, size_t i, size_t *off, size_t *size)
{
    return param_info((CUfunction)k, 1, i, off, size);
}

static CUresult fake_pointer_attr(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    for (int k = 0; k < 4; k++)
        if (fake_allocs[k].size && p >= fake_allocs[k].base && p < fake_allocs[k].base + fake_allocs[k].size) {
            if (a == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
                *(CUdeviceptr *)data = fake_allocs[k].base;
            else if (a == CU_POINTER_ATTRIBUTE_RANGE_SIZE)
                *(size_t *)data = fake_allocs[k].size;
            else if (a == CU_POINTER_ATTRIBUTE_CONTEXT)
                *(CUcontext *)data = fake_allocs[k].ctx;
            else
                return CUDA_ERROR_INVALID_VALUE;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

static dls_drv_table fake_table = {
    .stream_get_id = fake_stream_get_id,
    .stream_get_ctx = fake_stream_get_ctx,
    .stream_get_flags = fake_stream_get_flags,
    .ctx_get_id = fake_ctx_get_id,
    .ctx_get_current = fake_ctx_get_current,
    .ctx_push_current = fake_ctx_push_current,
    .ctx_pop_current = fake_ctx_pop_current,
    .ctx_get_device = fake_ctx_get_device,
    .func_get_param_info = fake_func_param_info,
    .kernel_get_param_info = fake_kernel_param_info,
    .pointer_get_attribute = fake_pointer_attr,
};

/* Installs the fake driver with empty tables. */
static void fake_reset(void)
{
    memset(fake_streams, 0, sizeof fake_streams);
    memset(fake_kernels, 0, sizeof fake_kernels);
    memset(fake_allocs, 0, sizeof fake_allocs);
    fake_get_id_calls = 0;
    fake_param_info_calls = 0;
    fake_stream_facts_calls = 0;
    fake_ctx_id_calls = 0;
    dls_drv_set_table_for_tests(&fake_table);
}

static CUresult fake_ok = CUDA_SUCCESS;

/* CUpti_CallbackData for a call of `fn` with parameter struct `params`, at `site`. */
static CUpti_CallbackData fake_cb(CUpti_ApiCallbackSite site, const char *fn, const void *params)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site;
    d.functionName = fn;
    d.functionParams = params;
    d.functionReturnValue = site == CUPTI_API_EXIT ? &fake_ok : NULL;
    d.context = FAKE_CTX;
    d.correlationId = 77;
    return d;
}

#endif
