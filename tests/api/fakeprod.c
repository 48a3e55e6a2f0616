/* libapi_fakeprod.so (see fakeprod.h). */
#include "fakeprod.h"

#include "cudasim.h"
#include "dlsync_dlpack.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct fp_array {
    float *data;
    int n;
    int64_t shape[1];
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cudaStream_t g_side;
static CUfunction g_write, g_read;
static atomic_int g_deletes, g_fail;
static atomic_uint g_major = 1;

static void write_body(void **args)
{
    float *p = *(float **)args[0];
    for (int i = 0, n = *(int *)args[1]; i < n; i++)
        p[i] = *(float *)args[2];
}

static void read_body(void **args)
{
    const float *src = *(const float **)args[0];
    float *dst = *(float **)args[1];
    for (int i = 0, n = *(int *)args[2]; i < n; i++)
        dst[i] = src[i];
}

static void init(void)
{
    size_t w[] = {sizeof(float *), sizeof(int), sizeof(float)};
    size_t r[] = {sizeof(float *), sizeof(float *), sizeof(int)};
    g_write = cudasim_register_kernel("fp_write", write_body, 3, w);
    g_read = cudasim_register_kernel("fp_read", read_body, 3, r);
    if (cudaStreamCreateWithFlags(&g_side, cudaStreamNonBlocking) != cudaSuccess)
        fprintf(stderr, "fakeprod: cannot create the side stream\n");
}

static int ck(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        fprintf(stderr, "fakeprod: %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : -1;
}

EXPORT cudaStream_t fp_side_stream(void)
{
    pthread_once(&g_once, init);
    return g_side;
}

EXPORT fp_array *fp_new(int n)
{
    pthread_once(&g_once, init);
    fp_array *a = calloc(1, sizeof *a);
    if (!a || ck(cudaMalloc((void **)&a->data, (size_t)n * sizeof(float)), "cudaMalloc") ||
        ck(cudaMemset(a->data, 0, (size_t)n * sizeof(float)), "cudaMemset") ||
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) {
        free(a);
        return NULL;
    }
    a->n = n;
    a->shape[0] = n;
    return a;
}

EXPORT int fp_write(fp_array *a, float value)
{
    void *args[] = {&a->data, &a->n, &value};
    dim3 one = {1, 1, 1};
    return ck(cudaLaunchKernel((const void *)g_write, one, one, args, 0, fp_side_stream()), "launch fp_write");
}

EXPORT int fp_read(cudaStream_t stream, const float *src, float *dst, int n)
{
    pthread_once(&g_once, init);
    void *args[] = {&src, &dst, &n};
    dim3 one = {1, 1, 1};
    return ck(cudaLaunchKernel((const void *)g_read, one, one, args, 0, stream), "launch fp_read");
}

EXPORT void fp_fail_next_export(void)
{
    atomic_store(&g_fail, 1);
}

EXPORT void fp_next_major(unsigned major)
{
    atomic_store(&g_major, major);
}

EXPORT int fp_deleter_calls(void)
{
    return atomic_load(&g_deletes);
}

EXPORT void fp_free(fp_array *a)
{
    if (!a)
        return;
    cudaFree(a->data);
    free(a);
}

static DLTensor tensor_of(fp_array *a)
{
    DLTensor t = {.data = a->data, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = a->shape};
    return t;
}

static void delete_unversioned(DLManagedTensor *self)
{
    atomic_fetch_add(&g_deletes, 1);
    free(self);
}

static void delete_versioned(DLManagedTensorVersioned *self)
{
    atomic_fetch_add(&g_deletes, 1);
    free(self);
}

EXPORT int MXNDArrayToDLPack(void *handle, DLManagedTensor **out)
{
    if (!handle || !out || atomic_exchange(&g_fail, 0))
        return -1;
    DLManagedTensor *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    t->dl_tensor = tensor_of(handle);
    t->manager_ctx = handle;
    t->deleter = delete_unversioned;
    *out = t;
    return 0;
}

EXPORT int TVMFFITensorToDLPackVersioned(void *handle, void **out)
{
    if (!handle || !out || atomic_exchange(&g_fail, 0))
        return -1;
    DLManagedTensorVersioned *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    t->version.major = atomic_exchange(&g_major, 1);
    t->version.minor = 3;
    t->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    t->dl_tensor = tensor_of(handle);
    t->manager_ctx = handle;
    t->deleter = delete_versioned;
    *out = t;
    return 0;
}
