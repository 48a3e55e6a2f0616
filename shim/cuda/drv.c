/* The shim's guarded driver calls (see drv.h). */
#include "drv.h"
#include "../common/mutex.h"

#include "thread.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>

static dls_drv_table g_resolved;
static _Atomic(const dls_drv_table *) g_table;
static _Atomic(const dls_drv_table *) g_test_table;
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long long g_failed_at_adds; /* loader's load count when libcuda was last not found */

/* dl_iterate_phdr callback: the loader's count of objects ever loaded (same for every object). */
static int read_adds(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    *(unsigned long long *)out = info->dlpi_adds;
    return 1;
}

/* Fills *t from the loaded libcuda; 0 on success, -1 when none is loaded. Calls the loader: never
 * under a dlsync lock. */
static int resolve(dls_drv_table *t)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return -1;
#define DRV(field, symbol, params, args) *(void **)&t->field = dlsym(h, symbol);
#include "drv.def"
#undef DRV
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
    /* Looking libcuda up searches the library path (a dozen failing opens); in a process
     * without CUDA, ask again only once another object has been loaded since (that much is
     * answered without the lock: a process without CUDA asks on every export in fix). */
    unsigned long long adds = 0;
    dl_iterate_phdr(read_adds, &adds);
    if (adds == atomic_load_explicit(&g_failed_at_adds, memory_order_relaxed))
        return NULL;
    dls_drv_table found;
    if (resolve(&found) != 0) {
        atomic_store_explicit(&g_failed_at_adds, adds, memory_order_relaxed);
        return NULL;
    }
    /* The loader was asked without the lock; the first thread to publish its answer wins (every
     * answer names the same functions of the one loaded libcuda). */
    dls_mutex_lock(&g_lock);
    t = atomic_load_explicit(&g_table, memory_order_relaxed);
    if (!t) {
        g_resolved = found;
        t = &g_resolved;
        atomic_store_explicit(&g_table, t, memory_order_release);
    }
    dls_mutex_unlock(&g_lock);
    return t;
}

void dls_drv_set_table_for_tests(const dls_drv_table *t)
{
    atomic_store_explicit(&g_test_table, t, memory_order_release);
}

int dls_drv_in_shim(void)
{
    return dls_cuda_thread_self()->guarded > 0;
}

/* The guarded calls: each calls its table field under the guard. */
#define DRV(field, symbol, params, args)                  \
    CUresult dls_drv_##field params                       \
    {                                                     \
        const dls_drv_table *t_ = dls_drv();              \
        if (!t_ || !t_->field)                            \
            return CUDA_ERROR_NOT_INITIALIZED;            \
        int *guarded_ = &dls_cuda_thread_self()->guarded; \
        ++*guarded_;                                      \
        CUresult r_ = t_->field args;                     \
        --*guarded_;                                      \
        return r_;                                        \
    }
#include "drv.def"
#undef DRV

CUresult dls_drv_ctx_enter(CUcontext ctx, int *pushed)
{
    *pushed = 0;
    dls_cuda_thread *t = dls_cuda_thread_self();
    CUcontext cur = t->current;
    if (!ctx || cur == ctx || (!cur && dls_drv_ctx_get_current(&cur) == CUDA_SUCCESS && cur == ctx))
        return CUDA_SUCCESS;
    CUresult r = dls_drv_ctx_push_current(ctx);
    *pushed = r == CUDA_SUCCESS;
    if (*pushed)
        t->current = NULL; /* not known again until the delivery ends: the pop restores what was current */
    return r;
}

void dls_drv_ctx_leave(int pushed)
{
    CUcontext popped;
    if (pushed)
        dls_drv_ctx_pop_current(&popped);
}

/* Synchronizes device i's primary context when it is active and not current (the caller
 * synchronized the current one). */
static CUresult synchronize_primary(int i)
{
    CUdevice dev;
    unsigned flags = 0;
    int active = 0, pushed = 0;
    CUcontext ctx = NULL;
    if (dls_drv_device_get(&dev, i) != CUDA_SUCCESS ||
        dls_drv_primary_ctx_get_state(dev, &flags, &active) != CUDA_SUCCESS || !active ||
        dls_drv_primary_ctx_retain(&ctx, dev) != CUDA_SUCCESS)
        return CUDA_SUCCESS;
    CUresult r = dls_drv_ctx_enter(ctx, &pushed);
    if (r == CUDA_SUCCESS && pushed) {
        r = dls_drv_ctx_synchronize();
        dls_drv_ctx_leave(pushed);
    }
    dls_drv_primary_ctx_release(dev);
    return r;
}

CUresult dls_drv_synchronize_devices(void)
{
    CUresult r = dls_drv_ctx_synchronize();
    if (r == CUDA_ERROR_INVALID_CONTEXT) /* none current on this thread */
        r = CUDA_SUCCESS;
    int n = 0;
    if (dls_drv_device_get_count(&n) != CUDA_SUCCESS)
        return r;
    for (int i = 0; i < n; i++) {
        CUresult e = synchronize_primary(i);
        if (r == CUDA_SUCCESS)
            r = e;
    }
    return r;
}
