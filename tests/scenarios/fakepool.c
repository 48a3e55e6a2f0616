/* libfakepool.so ("mxnet"): a legacy framework whose arrays each live on a stream of their own,
 * for the loader pipeline (loader_pipeline.c). MXNet's C entry points with no stream argument;
 * an import makes a stream for the imported array, destroyed when the array is released (its
 * pending work still runs). Standard runtime calls only; none synchronizes unless it says so.
 * Stream kinds: fw_stream_kind (fakefw.h). */
#include "fakepool.h"

#include <stdlib.h>

struct pool_array {
    unsigned char *data;
    int64_t n;
    cudaStream_t stream;
    int own; /* the stream was made for this array */
    DLManagedTensor *imported;
};

static fw_stream_kind g_import_kind;

static cudaStream_t make_stream(fw_stream_kind kind, int *own)
{
    cudaStream_t s = 0;
    *own = kind == FW_NON_BLOCKING || kind == FW_BLOCKING;
    if (kind == FW_NON_BLOCKING)
        fw_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "pool", "stream");
    else if (kind == FW_BLOCKING)
        fw_check(cudaStreamCreate(&s), "pool", "stream");
    else
        s = kind == FW_PER_THREAD ? cudaStreamPerThread : cudaStreamLegacy;
    return s;
}

pool_array *pool_make(int64_t n, fw_stream_kind kind)
{
    pool_array *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    a->n = n;
    a->stream = make_stream(kind, &a->own);
    fw_check(cudaMalloc((void **)&a->data, (size_t)n), "pool", "malloc");
    fw_check(cudaMemset(a->data, 0, (size_t)n), "pool", "memset");
    fw_check(cudaDeviceSynchronize(), "pool", "synchronize");
    return a;
}

void pool_fill(pool_array *a, int value)
{
    fw_check(cudaMemsetAsync(a->data, value, (size_t)a->n, a->stream), "pool", "fill");
}

void pool_read_last(pool_array *a, unsigned char *dst)
{
    fw_check(cudaMemcpyAsync(dst, a->data + a->n - 1, 1, cudaMemcpyDeviceToHost, a->stream), "pool", "read");
}

void pool_set_import_kind(fw_stream_kind kind)
{
    g_import_kind = kind;
}

cudaEvent_t pool_event(pool_array *a)
{
    cudaEvent_t e;
    fw_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "pool", "event");
    fw_check(cudaEventRecord(e, a->stream), "pool", "record");
    return e;
}

void pool_wait_event(pool_array *a, cudaEvent_t e)
{
    fw_check(cudaStreamWaitEvent(a->stream, e, 0), "pool", "wait");
    fw_check(cudaEventDestroy(e), "pool", "event destroy");
}

void pool_sync(pool_array *a)
{
    fw_check(cudaStreamSynchronize(a->stream), "pool", "synchronize");
}

static void deleter(DLManagedTensor *t)
{
    free(t->dl_tensor.shape);
    free(t);
}

int MXNDArrayToDLPack(void *handle, DLManagedTensor **out)
{
    pool_array *a = handle;
    DLManagedTensor *t = calloc(1, sizeof *t);
    int64_t *shape = malloc(sizeof *shape);
    if (!t || !shape)
        exit(2);
    *shape = a->n;
    t->dl_tensor.data = a->data;
    t->dl_tensor.device = (DLDevice){kDLCUDA, 0};
    t->dl_tensor.ndim = 1;
    t->dl_tensor.dtype = (DLDataType){kDLUInt, 8, 1};
    t->dl_tensor.shape = shape;
    t->manager_ctx = a;
    t->deleter = deleter;
    *out = t;
    return 0;
}

int MXNDArrayFromDLPack(DLManagedTensor *tensor, void **out)
{
    pool_array *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    a->data = tensor->dl_tensor.data;
    a->n = tensor->dl_tensor.shape[0];
    a->imported = tensor;
    a->stream = make_stream(g_import_kind, &a->own);
    *out = a;
    return 0;
}

void pool_release(pool_array *a)
{
    if (a->imported && a->imported->deleter)
        a->imported->deleter(a->imported);
    if (a->own)
        fw_check(cudaStreamDestroy(a->stream), "pool", "stream destroy");
    free(a);
}
