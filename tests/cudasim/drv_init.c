/* drv_init.c: driver initialization, devices, primary contexts, and error names.
 *
 * Models: cuInit (once; loads CUDA_INJECTION64_PATH and calls its InitializeInjection, as the
 * real driver does for tools), a fixed number of identical devices (CUDASIM_DEVICES, 1 to 4,
 * default 1), one primary context per device with a legacy default stream, a thread-local
 * context stack (cuCtxPushCurrent / cuCtxPopCurrent; cuCtxSetCurrent replaces its top),
 * context/device synchronization, a primary context reset (cuDevicePrimaryCtxReset: after its
 * work completes the context counts as a new one at the same handle, with a new id and a new
 * legacy stream; events of the old one cannot be recorded; its other streams, per-thread
 * streams and memory stay usable, unlike in CUDA).
 * Does not model: cuCtxCreate'd contexts, device properties beyond a few. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"

static atomic_int g_initialized;
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static int g_ndevices = 1;
static struct CUctx_st *g_primary[SIM_MAX_DEVICES];
static pthread_mutex_t g_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_next_ctx_uid;

/* The calling thread's context stack; its top is the current context. */
#define CTX_STACK 16
static __thread struct CUctx_st *tls_stack[CTX_STACK];
static __thread int tls_depth;

int dls_sim_initialized(void)
{
    return atomic_load(&g_initialized);
}
struct CUctx_st *dls_sim_current_ctx(void)
{
    return tls_depth ? tls_stack[tls_depth - 1] : NULL;
}

static void load_injection(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path)
        return;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "cudasim: cannot load CUDA_INJECTION64_PATH=%s: %s\n", path, dlerror());
        return;
    }
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    if (!init) {
        fprintf(stderr, "cudasim: %s has no InitializeInjection\n", path);
        return;
    }
    init();
}

static void init_once(void)
{
    const char *n = getenv("CUDASIM_DEVICES");
    if (n && *n) {
        int v = atoi(n);
        g_ndevices = v >= 1 && v <= SIM_MAX_DEVICES ? v : 1;
    }
    atomic_store(&g_initialized, 1);
    load_injection();
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    cuInit_params p = {Flags};
    DRV_CALL_ANYTIME(cuInit, &p,
                     (Flags ? CUDA_ERROR_INVALID_VALUE : (pthread_once(&g_init_once, init_once), CUDA_SUCCESS)));
}

/* Stores value in *out; INVALID_VALUE when out is NULL. */
static CUresult int_out(int *out, int value)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    *out = value;
    return CUDA_SUCCESS;
}

int cudasim_driver_version(void)
{
    const char *v = getenv("CUDASIM_DRIVER_VERSION");
    return v && *v ? atoi(v) : CUDA_VERSION;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    cuDriverGetVersion_params p = {driverVersion};
    DRV_CALL_ANYTIME(cuDriverGetVersion, &p, int_out(driverVersion, cudasim_driver_version()));
}

static CUresult device_get(CUdevice *d, int ordinal)
{
    if (!d || ordinal < 0 || ordinal >= g_ndevices)
        return !d ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    cuDeviceGet_params p = {device, ordinal};
    DRV_CALL(cuDeviceGet, &p, NULL, device_get(device, ordinal));
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    cuDeviceGetCount_params p = {count};
    DRV_CALL(cuDeviceGetCount, &p, NULL, int_out(count, g_ndevices));
}

static CUresult device_name(char *name, int len, CUdevice dev)
{
    if (!name || len <= 0 || dev < 0 || dev >= g_ndevices)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "cudasim device %d", dev);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    cuDeviceGetName_params p = {name, len, dev};
    DRV_CALL(cuDeviceGetName, &p, NULL, device_name(name, len, dev));
}

/* Creates the primary context of dev on first use; reports CONTEXT_CREATED once. */
static CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    int created = 0;
    pthread_mutex_lock(&g_ctx_lock);
    struct CUctx_st *ctx = g_primary[dev];
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx) {
            pthread_mutex_unlock(&g_ctx_lock);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        ctx->magic = SIM_MAGIC_CTX;
        ctx->dev = dev;
        ctx->uid = ++g_next_ctx_uid;
        ctx->legacy = dls_sim_stream_new(ctx, SIM_STREAM_LEGACY, CU_STREAM_DEFAULT, 0);
        if (!ctx->legacy) {
            free(ctx);
            pthread_mutex_unlock(&g_ctx_lock);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g_primary[dev] = ctx;
        created = 1;
    }
    ctx->refs++;
    pthread_mutex_unlock(&g_ctx_lock);
    *pctx = ctx;
    if (created)
        cudasim_report_resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, ctx, NULL);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    cuDevicePrimaryCtxRetain_params p = {pctx, dev};
    DRV_CALL(cuDevicePrimaryCtxRetain, &p, NULL, primary_retain(pctx, dev));
}

/* The primary context stays alive when its count drops to zero (its streams may still run). */
static CUresult primary_release(CUdevice dev)
{
    if (dev < 0 || dev >= g_ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_ctx_lock);
    CUresult r = CUDA_ERROR_INVALID_CONTEXT;
    if (g_primary[dev] && g_primary[dev]->refs > 0) {
        g_primary[dev]->refs--;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&g_ctx_lock);
    return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    DRV_PARAMS(cuDevicePrimaryCtxRelease) p = {dev};
    DRV_CALL(cuDevicePrimaryCtxRelease, &p, NULL, primary_release(dev));
}

static CUresult primary_reset(CUdevice dev)
{
    if (dev < 0 || dev >= g_ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_ctx_lock);
    struct CUctx_st *ctx = g_primary[dev];
    pthread_mutex_unlock(&g_ctx_lock);
    if (!ctx)
        return CUDA_SUCCESS;
    dls_sim_ctx_sync(ctx);
    pthread_mutex_lock(&g_ctx_lock);
    ctx->uid = ++g_next_ctx_uid; /* first, so the new legacy stream is created in the new context */
    pthread_mutex_unlock(&g_ctx_lock);
    struct CUstream_st *legacy = dls_sim_stream_new(ctx, SIM_STREAM_LEGACY, CU_STREAM_DEFAULT, 0);
    if (!legacy)
        return CUDA_ERROR_OUT_OF_MEMORY;
    dls_sim_lock();
    struct CUstream_st *old = ctx->legacy;
    ctx->legacy = legacy;
    dls_sim_unlock();
    dls_sim_stream_retire(old);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    DRV_PARAMS(cuDevicePrimaryCtxReset) p = {dev};
    DRV_CALL(cuDevicePrimaryCtxReset, &p, NULL, primary_reset(dev));
}

/* Active: created and retained at least once more than released. */
static CUresult primary_state(CUdevice dev, unsigned *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_ctx_lock);
    *active = g_primary[dev] && g_primary[dev]->refs > 0;
    pthread_mutex_unlock(&g_ctx_lock);
    *flags = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    cuDevicePrimaryCtxGetState_params p = {dev, flags, active};
    DRV_CALL(cuDevicePrimaryCtxGetState, &p, NULL, primary_state(dev, flags, active));
}

static CUresult ctx_get_current(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = dls_sim_current_ctx();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    cuCtxGetCurrent_params p = {pctx};
    DRV_CALL(cuCtxGetCurrent, &p, NULL, ctx_get_current(pctx));
}

/* Replaces the top of the stack with ctx (pushes it on an empty stack); NULL pops. */
static CUresult ctx_set_current(CUcontext ctx)
{
    if (ctx && ctx->magic != SIM_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx)
        tls_depth -= tls_depth > 0;
    else if (!tls_depth)
        tls_stack[tls_depth++] = ctx;
    else
        tls_stack[tls_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    cuCtxSetCurrent_params p = {ctx};
    DRV_CALL(cuCtxSetCurrent, &p, NULL, ctx_set_current(ctx));
}

static CUresult ctx_push(CUcontext ctx)
{
    if (!ctx || ctx->magic != SIM_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth == CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tls_stack[tls_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    DRV_PARAMS(cuCtxPushCurrent) p = {ctx};
    DRV_CALL(cuCtxPushCurrent, &p, NULL, ctx_push(ctx));
}

static CUresult ctx_pop(CUcontext *pctx)
{
    if (!tls_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *top = tls_stack[--tls_depth];
    if (pctx)
        *pctx = top;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    DRV_PARAMS(cuCtxPopCurrent) p = {pctx};
    DRV_CALL(cuCtxPopCurrent, &p, NULL, ctx_pop(pctx));
}

static CUresult ctx_get_device(CUdevice *dev)
{
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = dls_sim_current_ctx();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = ctx->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    cuCtxGetDevice_params p = {device};
    DRV_CALL(cuCtxGetDevice, &p, NULL, ctx_get_device(device));
}

static CUresult ctx_get_id(CUcontext ctx, unsigned long long *id)
{
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        ctx = dls_sim_current_ctx();
    if (!ctx || ctx->magic != SIM_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    *id = ctx->uid;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    cuCtxGetId_params p = {ctx, ctxId};
    DRV_CALL(cuCtxGetId, &p, NULL, ctx_get_id(ctx, ctxId));
}

static CUresult ctx_sync(void)
{
    struct CUctx_st *ctx = dls_sim_current_ctx();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    dls_sim_ctx_sync(ctx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    DRV_CALL(cuCtxSynchronize, NULL, NULL, ctx_sync());
}

const dls_sim_proc dls_sim_procs_init[] = {
    SIM_PROC(cuInit),
    SIM_PROC(cuDriverGetVersion),
    SIM_PROC(cuDeviceGet),
    SIM_PROC(cuDeviceGetCount),
    SIM_PROC(cuDeviceGetName),
    SIM_PROC(cuDevicePrimaryCtxRetain),
    SIM_PROC(cuDevicePrimaryCtxRelease),
    SIM_PROC(cuDevicePrimaryCtxGetState),
    SIM_PROC(cuDevicePrimaryCtxReset),
    SIM_PROC(cuCtxGetCurrent),
    SIM_PROC(cuCtxSetCurrent),
    SIM_PROC(cuCtxPushCurrent),
    SIM_PROC(cuCtxPopCurrent),
    SIM_PROC(cuCtxGetDevice),
    SIM_PROC(cuCtxGetId),
    SIM_PROC(cuCtxSynchronize),
    {NULL, NULL},
};
