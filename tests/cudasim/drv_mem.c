/* drv_mem.c: the simulated allocator and pointer queries.
 *
 * Models: device allocations (C heap, 256-byte aligned) and page-locked host allocations (whole
 * pages mapped twice, drv_blocks.c) in a table of ranges, so pointer attributes (context, memory type, device/host pointer, range
 * start and size, device ordinal) and cuMemGetAddressRange answer for any address inside an
 * allocation; freeing waits for the context's submitted work; a freed allocation's address is
 * handed out again (drv_blocks.c). Does not model: memory pools, managed memory, host
 * registration, IPC, limits. */
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"
#include "trace.h"

typedef struct alloc {
    struct alloc *next;
    uintptr_t base;
    size_t size;
    int is_host;
    void *view; /* page-locked: the device's view of it (drv_blocks.c) */
    struct CUctx_st *ctx;
} alloc;

static alloc *g_allocs; /* guarded by the scheduler lock */

int dls_sim_mem_find(const void *p, uintptr_t *base, size_t *size, int *is_host, struct CUctx_st **ctx)
{
    uintptr_t a = (uintptr_t)p;
    int r = -1;
    dls_sim_lock();
    for (alloc *m = g_allocs; m; m = m->next) {
        if (a >= m->base && a < m->base + (m->size ? m->size : 1)) {
            *base = m->base;
            *size = m->size;
            *is_host = m->is_host;
            *ctx = m->ctx;
            r = 0;
            break;
        }
    }
    dls_sim_unlock();
    return r;
}

void *dls_sim_mem_device_view(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    void *r = (void *)p;
    dls_sim_lock();
    for (alloc *m = g_allocs; m; m = m->next)
        if (m->view && a >= m->base && a < m->base + m->size) {
            r = (unsigned char *)m->view + (a - m->base);
            break;
        }
    dls_sim_unlock();
    return r;
}

static CUresult mem_alloc(void **out, size_t size, int is_host)
{
    if (!out || !size)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = dls_sim_current_ctx();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    alloc *m = calloc(1, sizeof *m);
    void *p = m ? dls_sim_block_take(size, is_host, &m->view) : NULL;
    if (!p) {
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->base = (uintptr_t)p;
    m->size = size;
    m->is_host = is_host;
    m->ctx = ctx;
    dls_sim_lock();
    m->next = g_allocs;
    g_allocs = m;
    if (SIM_TRACING())
        dls_sim_trace_line("M 0x%llx %zu %u", (unsigned long long)m->base, size, dls_sim_trace_call());
    dls_sim_unlock();
    *out = p;
    return CUDA_SUCCESS;
}

/* Frees the allocation starting exactly at p (of the given kind), after the work already
 * submitted to its context completed (as cudaFree / cuMemFree synchronize in practice). Its
 * block goes back to drv_blocks.c, which keeps it from work still queued in other contexts. */
static CUresult mem_free(const void *p, int is_host)
{
    alloc *found = NULL;
    uintptr_t base;
    size_t size;
    int host;
    struct CUctx_st *ctx;
    if (dls_sim_mem_find(p, &base, &size, &host, &ctx) == 0 && base == (uintptr_t)p)
        dls_sim_ctx_sync(ctx);
    dls_sim_lock();
    for (alloc **pp = &g_allocs; *pp; pp = &(*pp)->next) {
        if ((*pp)->base == (uintptr_t)p && (*pp)->is_host == is_host) {
            found = *pp;
            *pp = found->next;
            if (SIM_TRACING())
                dls_sim_trace_line("F 0x%llx %zu %u", (unsigned long long)found->base, found->size,
                                   dls_sim_trace_call());
            dls_sim_block_give_locked((void *)found->base, found->view, found->size, found->is_host);
            break;
        }
    }
    dls_sim_unlock();
    if (!found)
        return CUDA_ERROR_INVALID_VALUE;
    free(found);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    DRV_PARAMS(cuMemAlloc) p = {dptr, bytesize};
    DRV_CALL(cuMemAlloc, &p, NULL, mem_alloc((void **)dptr, bytesize, 0));
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
    DRV_PARAMS(cuMemFree) p = {dptr};
    DRV_CALL(cuMemFree, &p, NULL, dptr ? mem_free((void *)(uintptr_t)dptr, 0) : CUDA_SUCCESS);
}

CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize)
{
    DRV_PARAMS(cuMemAllocHost) p = {pp, bytesize};
    DRV_CALL(cuMemAllocHost, &p, NULL, mem_alloc(pp, bytesize, 1));
}

CUresult CUDAAPI cuMemFreeHost(void *ptr)
{
    cuMemFreeHost_params p = {ptr};
    DRV_CALL(cuMemFreeHost, &p, NULL, ptr ? mem_free(ptr, 1) : CUDA_SUCCESS);
}

static CUresult address_range(CUdeviceptr *pbase, size_t *psize, CUdeviceptr d)
{
    uintptr_t base;
    size_t size;
    int is_host;
    struct CUctx_st *ctx;
    if (dls_sim_mem_find((void *)(uintptr_t)d, &base, &size, &is_host, &ctx) != 0)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = base;
    if (psize)
        *psize = size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    DRV_PARAMS(cuMemGetAddressRange) p = {pbase, psize, dptr};
    DRV_CALL(cuMemGetAddressRange, &p, NULL, address_range(pbase, psize, dptr));
}

/* Writes one attribute of ptr (found or not) into data; returns CUDA_ERROR_INVALID_VALUE for
 * attributes the simulator does not know, CUDA_ERROR_INVALID_VALUE for unknown pointers when
 * `strict` (cuPointerGetAttribute), zeroes otherwise (cuPointerGetAttributes). */
static CUresult attribute(void *data, CUpointer_attribute a, CUdeviceptr ptr, int strict)
{
    uintptr_t base = 0;
    size_t size = 0;
    int is_host = 0;
    struct CUctx_st *ctx = NULL;
    int found = dls_sim_mem_find((void *)(uintptr_t)ptr, &base, &size, &is_host, &ctx) == 0;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    if (!found && strict)
        return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = ctx;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = !found ? 0 : is_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = found ? ptr : 0;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        *(void **)data = found && is_host ? (void *)(uintptr_t)ptr : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = base;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = size;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = found ? ctx->dev : -2;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned int *)data = 0;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute_, CUdeviceptr ptr)
{
    cuPointerGetAttribute_params p = {data, attribute_, ptr};
    DRV_CALL(cuPointerGetAttribute, &p, NULL, attribute(data, attribute_, ptr, 1));
}

static CUresult attributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr)
{
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        CUresult r = attribute(data[i], attrs[i], ptr, 0);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes_, void **data,
                                        CUdeviceptr ptr)
{
    cuPointerGetAttributes_params p = {numAttributes, attributes_, data, ptr};
    DRV_CALL(cuPointerGetAttributes, &p, NULL, attributes(numAttributes, attributes_, data, ptr));
}

const dls_sim_proc dls_sim_procs_mem[] = {
    SIM_PROC(cuMemAlloc),
    SIM_PROC(cuMemFree),
    SIM_PROC(cuMemAllocHost),
    SIM_PROC(cuMemFreeHost),
    SIM_PROC(cuMemGetAddressRange),
    SIM_PROC(cuPointerGetAttribute),
    SIM_PROC(cuPointerGetAttributes),
    {NULL, NULL},
};
