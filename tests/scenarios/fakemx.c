/* libfakemx.so: a fake legacy producer framework imitating MXNet's DLPack C API (see fakefw.h). */
#include "fakefw.h"
#include "scen_backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* A readiness signal: set by a host function, shared by the array and that function (the array
 * may be freed before the function runs); the last of the two frees it. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int set, refs;
} mx_ready;

struct mx_array {
    float *data;
    int n;
    DLDeviceType where;
    int device;                           /* the device current when the memory was allocated */
    int refs;                             /* the program's reference + live DLPack exports */
    int owns;                             /* data is a cache block owned by this array */
    int64_t shape[1], strides[1];         /* what its DLPack descriptions point to */
    DLManagedTensor *from;                /* imported: the tensor to release */
    fw_managed_versioned *from_versioned; /* imported through the exchange API: the same */
    float *result;                        /* pinned buffer mx_read writes into */
    mx_ready *ready;                      /* from mx_signal_ready */
    int read_only;                        /* exchange-API exports carry DLPack 1.x READ_ONLY */
};

static fw_stream_kind g_kind;
static __thread cudaStream_t t_stream, t_signal_stream;
static __thread int t_made, t_signal_made;

static void ck(cudaError_t e, const char *what)
{
    fw_check(e, "fakemx", what);
}

EXPORT void mx_init(fw_stream_kind kind)
{
    g_kind = kind;
}

EXPORT cudaStream_t mx_stream(void)
{
    return fw_thread_stream(g_kind, &t_stream, &t_made, "fakemx");
}

/* The caching allocator: freed blocks are kept and handed out again for the same size, kind and
 * device. */
#define CACHE 16
static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    float *p;
    int n;
    DLDeviceType where;
    int device;
} g_cache[CACHE];
static int g_ncache;

static float *block_get(int n, DLDeviceType where, int device)
{
    pthread_mutex_lock(&g_cache_lock);
    for (int i = 0; i < g_ncache; i++)
        if (g_cache[i].n == n && g_cache[i].where == where && g_cache[i].device == device) {
            float *p = g_cache[i].p;
            g_cache[i] = g_cache[--g_ncache];
            pthread_mutex_unlock(&g_cache_lock);
            return p;
        }
    pthread_mutex_unlock(&g_cache_lock);
    void *p = NULL;
    if (where == kDLCUDAHost)
        ck(cudaMallocHost(&p, (size_t)n * sizeof(float)), "cudaMallocHost");
    else
        ck(cudaMalloc(&p, (size_t)n * sizeof(float)), "cudaMalloc");
    return p;
}

static void block_put(float *p, int n, DLDeviceType where, int device)
{
    pthread_mutex_lock(&g_cache_lock);
    if (g_ncache < CACHE) {
        g_cache[g_ncache].p = p;
        g_cache[g_ncache].n = n;
        g_cache[g_ncache].where = where;
        g_cache[g_ncache].device = device;
        g_ncache++;
        p = NULL;
    }
    pthread_mutex_unlock(&g_cache_lock);
    if (p)
        ck(where == kDLCUDAHost ? cudaFreeHost(p) : cudaFree(p), "free");
}

/* Drops one reference to r (NULL is ignored). */
static void ready_unref(mx_ready *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    int last = --r->refs == 0;
    pthread_mutex_unlock(&r->lock);
    if (last) {
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->cv);
        free(r);
    }
}

static void unref(mx_array *a)
{
    if (--a->refs > 0)
        return;
    ready_unref(a->ready);
    if (a->owns)
        block_put(a->data, a->n, a->where, a->device);
    if (a->from && a->from->deleter)
        a->from->deleter(a->from);
    if (a->from_versioned && a->from_versioned->deleter)
        a->from_versioned->deleter(a->from_versioned);
    if (a->result)
        cudaFreeHost(a->result);
    free(a);
}

static mx_array *make(float *data, int n, DLDeviceType where, int owns)
{
    mx_array *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    a->data = data;
    a->n = n;
    a->shape[0] = n;
    a->strides[0] = 1;
    a->where = where;
    a->owns = owns;
    a->refs = 1;
    return a;
}

EXPORT mx_array *mx_empty(int n, DLDeviceType where)
{
    int device = 0;
    ck(cudaGetDevice(&device), "cudaGetDevice");
    mx_array *a = make(block_get(n, where, device), n, where, 1);
    a->device = device;
    return a;
}

EXPORT mx_array *mx_view(mx_array *a, int offset, int n)
{
    mx_array *v = make(a->data + offset, n, a->where, 0);
    v->device = a->device;
    return v;
}

EXPORT void mx_fill(mx_array *a, float value)
{
    scen_write(mx_stream(), a->data, a->n, value);
}

EXPORT void mx_copy(mx_array *dst, const mx_array *src)
{
    ck(cudaMemcpyAsync(dst->data, src->data, (size_t)src->n * sizeof(float), cudaMemcpyDefault, mx_stream()),
       "cudaMemcpyAsync");
}

EXPORT void mx_read(mx_array *a)
{
    if (!a->result)
        ck(cudaMallocHost((void **)&a->result, (size_t)a->n * sizeof(float)), "cudaMallocHost");
    scen_read(mx_stream(), a->data, a->result, a->n);
}

EXPORT float mx_result(mx_array *a, int i)
{
    mx_sync();
    return a->result[i];
}

EXPORT void mx_sync(void)
{
    ck(cudaStreamSynchronize(mx_stream()), "cudaStreamSynchronize");
}

EXPORT void mx_set_read_only(mx_array *a)
{
    a->read_only = 1;
}

EXPORT void mx_free(mx_array *a)
{
    unref(a);
}

EXPORT float *mx_data(mx_array *a)
{
    return a->data;
}

/* The host function of mx_signal_ready. */
static void CUDART_CB signal_ready(void *arg)
{
    mx_ready *r = arg;
    pthread_mutex_lock(&r->lock);
    r->set = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->lock);
    ready_unref(r);
}

EXPORT void mx_signal_ready(mx_array *a)
{
    mx_ready *r = calloc(1, sizeof *r);
    if (!r)
        exit(2);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->refs = 2;
    ready_unref(a->ready);
    a->ready = r;
    cudaStream_t side = fw_thread_stream(FW_NON_BLOCKING, &t_signal_stream, &t_signal_made, "fakemx");
    cudaEvent_t e;
    ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ck(cudaEventRecord(e, mx_stream()), "cudaEventRecord");
    ck(cudaStreamWaitEvent(side, e, 0), "cudaStreamWaitEvent");
    ck(cudaEventDestroy(e), "cudaEventDestroy");
    ck(cudaLaunchHostFunc(side, signal_ready, r), "cudaLaunchHostFunc");
}

EXPORT void mx_wait_ready(mx_array *a)
{
    mx_ready *r = a->ready;
    scen_host_blocking(1);
    pthread_mutex_lock(&r->lock);
    while (!r->set)
        pthread_cond_wait(&r->cv, &r->lock);
    pthread_mutex_unlock(&r->lock);
    scen_host_blocking(0);
}

/* Describes a's memory in t (shape and strides point into a). */
static void describe(mx_array *a, DLTensor *t)
{
    memset(t, 0, sizeof *t);
    t->data = a->data;
    t->device.device_type = a->where;
    t->device.device_id = a->device;
    t->ndim = 1;
    t->dtype.code = kDLFloat;
    t->dtype.bits = 32;
    t->dtype.lanes = 1;
    t->shape = a->shape;
    t->strides = a->strides;
}

/* What an exported tensor keeps alive. */
typedef struct {
    DLManagedTensor t;
    mx_array *a;
} export_ctx;

/* mx_reuse_exports: released export structs are kept here and handed to the next export, by
 * whichever thread makes it (the latest released first). */
static pthread_mutex_t g_spare_lock = PTHREAD_MUTEX_INITIALIZER;
static export_ctx *g_spare[CACHE];
static int g_nspare, g_reuse;

EXPORT void mx_reuse_exports(int on)
{
    g_reuse = on;
}

static atomic_ulong g_released; /* exports whose deleter ran */

EXPORT unsigned long mx_exports_released(void)
{
    return atomic_load(&g_released);
}

static void export_deleter(DLManagedTensor *t)
{
    export_ctx *c = t->manager_ctx;
    atomic_fetch_add(&g_released, 1);
    unref(c->a);
    pthread_mutex_lock(&g_spare_lock);
    if (g_reuse && g_nspare < CACHE) {
        g_spare[g_nspare++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&g_spare_lock);
    free(c);
}

/* A zeroed export struct: a spare one when there is one, else a new one. */
static export_ctx *export_new(void)
{
    export_ctx *c = NULL;
    pthread_mutex_lock(&g_spare_lock);
    if (g_nspare)
        c = g_spare[--g_nspare];
    pthread_mutex_unlock(&g_spare_lock);
    if (c)
        memset(c, 0, sizeof *c);
    return c ? c : calloc(1, sizeof *c);
}

EXPORT int MXNDArrayToDLPack(void *handle, DLManagedTensor **out)
{
    mx_array *a = handle;
    export_ctx *c = export_new();
    if (!a || !out || !c) {
        free(c);
        return -1;
    }
    a->refs++;
    c->a = a;
    describe(a, &c->t.dl_tensor);
    c->t.manager_ctx = c;
    c->t.deleter = export_deleter;
    *out = &c->t;
    return 0;
}

/* An mx_array over the memory of an imported tensor t. */
static mx_array *adopt(const DLTensor *t)
{
    mx_array *a =
        make((float *)((char *)t->data + t->byte_offset), (int)t->shape[0], (DLDeviceType)t->device.device_type, 0);
    a->device = t->device.device_id;
    return a;
}

EXPORT int MXNDArrayFromDLPack(DLManagedTensor *tensor, void **out)
{
    if (!tensor || !out)
        return -1;
    mx_array *a = adopt(&tensor->dl_tensor);
    a->from = tensor;
    *out = a;
    return 0;
}

/* ---- the DLPack C exchange API table (NoSync: none of its functions orders anything) ---- */

typedef struct {
    fw_managed_versioned t;
    mx_array *a;
} export_versioned_ctx;

static void export_versioned_deleter(fw_managed_versioned *t)
{
    export_versioned_ctx *c = t->manager_ctx;
    unref(c->a);
    free(c);
}

static int api_from_py(void *py_object, fw_managed_versioned **out)
{
    mx_array *a = py_object;
    export_versioned_ctx *c = calloc(1, sizeof *c);
    if (!a || !out || !c) {
        free(c);
        return -1;
    }
    a->refs++;
    c->a = a;
    c->t.version = (fw_dlpack_version){1, 3};
    c->t.flags = a->read_only ? UINT64_C(1) : 0; /* DLPACK_FLAG_BITMASK_READ_ONLY */
    describe(a, &c->t.dl_tensor);
    c->t.manager_ctx = c;
    c->t.deleter = export_versioned_deleter;
    *out = &c->t;
    return 0;
}

static int api_to_py(fw_managed_versioned *tensor, void **out)
{
    if (!tensor || !out)
        return -1;
    mx_array *a = adopt(&tensor->dl_tensor);
    a->from_versioned = tensor;
    *out = a;
    return 0;
}

static int api_dltensor(void *py_object, DLTensor *out)
{
    if (!py_object || !out)
        return -1;
    describe(py_object, out);
    return 0;
}

static int api_stream(DLDeviceType device_type, int32_t device_id, void **out)
{
    (void)device_type;
    (void)device_id;
    *out = mx_stream();
    return 0;
}

static const fw_exchange_api g_api = {
    .header = {.version = {1, 3}},
    .managed_tensor_from_py_object_no_sync = api_from_py,
    .managed_tensor_to_py_object_no_sync = api_to_py,
    .dltensor_from_py_object_no_sync = api_dltensor,
    .current_work_stream = api_stream,
};

/* What a capsule holds for these purposes: a pointer and its name. */
typedef struct {
    const void *pointer;
    const char *name;
} capsule;

static const capsule g_capsule = {&g_api, "dlpack_exchange_api"};

EXPORT void *mx_exchange_api_capsule(void)
{
    return (void *)&g_capsule;
}

EXPORT void *PyCapsule_GetPointer(void *cap, const char *name)
{
    const capsule *c = cap;
    return c && name && strcmp(c->name, name) == 0 ? (void *)c->pointer : NULL;
}
