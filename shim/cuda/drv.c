/* The shim's guarded driver calls (see drv.h). */
#include "drv.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>

static __thread int t_guard;
static dls_drv_table g_resolved;
static _Atomic(const dls_drv_table *) g_table;
static _Atomic(const dls_drv_table *) g_test_table;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long g_failed_at_adds; /* loader's load count when libcuda was last not found */

/* dl_iterate_phdr callback: the loader's count of objects ever loaded (same for every object). */
static int read_adds(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    *(unsigned long long *)out = info->dlpi_adds;
    return 1;
}

/* Fills g_resolved from the loaded libcuda; 0 on success, -1 when none is loaded. */
static int resolve(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return -1;
    dls_drv_table t;
#define SYM(field, name) *(void **)&t.field = dlsym(h, name)
    SYM(stream_get_id, "cuStreamGetId");
    SYM(stream_get_ctx, "cuStreamGetCtx");
    SYM(stream_get_flags, "cuStreamGetFlags");
    SYM(stream_is_capturing, "cuStreamIsCapturing");
    SYM(stream_wait_event, "cuStreamWaitEvent");
    SYM(stream_synchronize, "cuStreamSynchronize");
    SYM(stream_query, "cuStreamQuery");
    SYM(ctx_get_current, "cuCtxGetCurrent");
    SYM(ctx_push_current, "cuCtxPushCurrent_v2");
    SYM(ctx_pop_current, "cuCtxPopCurrent_v2");
    SYM(ctx_get_id, "cuCtxGetId");
    SYM(ctx_get_device, "cuCtxGetDevice");
    SYM(ctx_synchronize, "cuCtxSynchronize");
    SYM(device_get_count, "cuDeviceGetCount");
    SYM(device_get, "cuDeviceGet");
    SYM(primary_ctx_get_state, "cuDevicePrimaryCtxGetState");
    SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain");
    SYM(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
    SYM(event_create, "cuEventCreate");
    SYM(event_record, "cuEventRecord");
    SYM(event_destroy, "cuEventDestroy_v2");
    SYM(event_query, "cuEventQuery");
    SYM(event_synchronize, "cuEventSynchronize");
    SYM(pointer_get_attribute, "cuPointerGetAttribute");
    SYM(func_get_param_info, "cuFuncGetParamInfo");
    SYM(kernel_get_param_info, "cuKernelGetParamInfo");
#undef SYM
    g_resolved = t;
    return 0;
}

const dls_drv_table *dls_drv(void)
{
    const dls_drv_table *t = atomic_load_explicit(&g_test_table, memory_order_acquire);
    if (t)
        return t;
    t = atomic_load_explicit(&g_table, memory_order_acquire);
    if (t)
        return t;
    pthread_mutex_lock(&g_lock);
    t = atomic_load_explicit(&g_table, memory_order_relaxed);
    if (!t) {
        /* Looking libcuda up searches the library path (a dozen failing opens); in a process
         * without CUDA, ask again only once another object has been loaded since. */
        unsigned long long adds = 0;
        dl_iterate_phdr(read_adds, &adds);
        if (adds != g_failed_at_adds && resolve() == 0) {
            t = &g_resolved;
            atomic_store_explicit(&g_table, t, memory_order_release);
        } else {
            g_failed_at_adds = adds;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return t;
}

int dls_drv_in_shim(void)
{
    return t_guard > 0;
}

void dls_drv_set_table_for_tests(const dls_drv_table *t)
{
    atomic_store_explicit(&g_test_table, t, memory_order_release);
}

/* Calls table field `f` with the arguments under the guard. */
#define GUARDED(f, ...)                                       \
    do {                                                      \
        const dls_drv_table *t_ = dls_drv();                  \
        if (!t_ || !t_->f)                                    \
            return CUDA_ERROR_NOT_INITIALIZED;                \
        t_guard++;                                            \
        CUresult r_ = t_->f(__VA_ARGS__);                     \
        t_guard--;                                            \
        return r_;                                            \
    } while (0)

CUresult dls_drv_stream_get_id(CUstream s, unsigned long long *id) { GUARDED(stream_get_id, s, id); }
CUresult dls_drv_stream_get_ctx(CUstream s, CUcontext *ctx) { GUARDED(stream_get_ctx, s, ctx); }
CUresult dls_drv_stream_get_flags(CUstream s, unsigned int *flags) { GUARDED(stream_get_flags, s, flags); }
CUresult dls_drv_stream_is_capturing(CUstream s, CUstreamCaptureStatus *st) { GUARDED(stream_is_capturing, s, st); }
CUresult dls_drv_stream_wait_event(CUstream s, CUevent e, unsigned int flags) { GUARDED(stream_wait_event, s, e, flags); }
CUresult dls_drv_stream_synchronize(CUstream s) { GUARDED(stream_synchronize, s); }
CUresult dls_drv_stream_query(CUstream s) { GUARDED(stream_query, s); }
CUresult dls_drv_ctx_get_current(CUcontext *ctx) { GUARDED(ctx_get_current, ctx); }
CUresult dls_drv_ctx_push_current(CUcontext ctx) { GUARDED(ctx_push_current, ctx); }
CUresult dls_drv_ctx_pop_current(CUcontext *ctx) { GUARDED(ctx_pop_current, ctx); }
CUresult dls_drv_ctx_get_id(CUcontext ctx, unsigned long long *id) { GUARDED(ctx_get_id, ctx, id); }
CUresult dls_drv_ctx_get_device(CUdevice *dev) { GUARDED(ctx_get_device, dev); }
CUresult dls_drv_ctx_synchronize(void) { GUARDED(ctx_synchronize); }
CUresult dls_drv_event_create(CUevent *e, unsigned int flags) { GUARDED(event_create, e, flags); }
CUresult dls_drv_event_record(CUevent e, CUstream s) { GUARDED(event_record, e, s); }
CUresult dls_drv_event_destroy(CUevent e) { GUARDED(event_destroy, e); }
CUresult dls_drv_event_query(CUevent e) { GUARDED(event_query, e); }
CUresult dls_drv_event_synchronize(CUevent e) { GUARDED(event_synchronize, e); }
CUresult dls_drv_pointer_get_attribute(void *data, CUpointer_attribute a, CUdeviceptr p) { GUARDED(pointer_get_attribute, data, a, p); }
CUresult dls_drv_func_get_param_info(CUfunction f, size_t i, size_t *off, size_t *size) { GUARDED(func_get_param_info, f, i, off, size); }
CUresult dls_drv_kernel_get_param_info(CUkernel k, size_t i, size_t *off, size_t *size) { GUARDED(kernel_get_param_info, k, i, off, size); }

CUresult dls_drv_ctx_enter(CUcontext ctx, int *pushed)
{
    *pushed = 0;
    CUcontext cur = NULL;
    if (!ctx || (dls_drv_ctx_get_current(&cur) == CUDA_SUCCESS && cur == ctx))
        return CUDA_SUCCESS;
    CUresult r = dls_drv_ctx_push_current(ctx);
    *pushed = r == CUDA_SUCCESS;
    return r;
}

void dls_drv_ctx_leave(int pushed)
{
    CUcontext popped;
    if (pushed)
        dls_drv_ctx_pop_current(&popped);
}

/* Guarded calls used only by dls_drv_synchronize_devices. */
static CUresult device_get_count(int *n) { GUARDED(device_get_count, n); }
static CUresult device_get(CUdevice *d, int i) { GUARDED(device_get, d, i); }
static CUresult primary_get_state(CUdevice d, unsigned *flags, int *active) { GUARDED(primary_ctx_get_state, d, flags, active); }
static CUresult primary_retain(CUcontext *ctx, CUdevice d) { GUARDED(primary_ctx_retain, ctx, d); }
static CUresult primary_release(CUdevice d) { GUARDED(primary_ctx_release, d); }

/* Synchronizes device i's primary context when it is active and not current (the caller
 * synchronized the current one). */
static CUresult synchronize_primary(int i)
{
    CUdevice dev;
    unsigned flags = 0;
    int active = 0, pushed = 0;
    CUcontext ctx = NULL;
    if (device_get(&dev, i) != CUDA_SUCCESS || primary_get_state(dev, &flags, &active) != CUDA_SUCCESS ||
        !active || primary_retain(&ctx, dev) != CUDA_SUCCESS)
        return CUDA_SUCCESS;
    CUresult r = dls_drv_ctx_enter(ctx, &pushed);
    if (r == CUDA_SUCCESS && pushed) {
        r = dls_drv_ctx_synchronize();
        dls_drv_ctx_leave(pushed);
    }
    primary_release(dev);
    return r;
}

CUresult dls_drv_synchronize_devices(void)
{
    CUresult r = dls_drv_ctx_synchronize();
    if (r == CUDA_ERROR_INVALID_CONTEXT) /* none current on this thread */
        r = CUDA_SUCCESS;
    int n = 0;
    if (device_get_count(&n) != CUDA_SUCCESS)
        return r;
    for (int i = 0; i < n; i++) {
        CUresult e = synchronize_primary(i);
        if (r == CUDA_SUCCESS)
            r = e;
    }
    return r;
}
