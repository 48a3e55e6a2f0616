/* libfaketvm.so: a fake legacy consumer framework imitating TVM's DLPack C API (see fakefw.h). */
#include "fakefw.h"
#include "scen_backend.h"

#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_READ_STREAMS 4

struct tvm_array {
    DLManagedTensor *from;
    fw_managed_versioned *from_versioned; /* imported through TVMFFITensorFromDLPackVersioned */
    DLDevice device;
    float *data;
    int n;
    float *copy;                            /* tvm_fetch's copy on the consumer's device */
    float *result[MAX_READ_STREAMS];        /* pinned buffer of each read */
    cudaStream_t read_on[MAX_READ_STREAMS]; /* the stream of each read */
    int nread;
};

static fw_stream_kind g_kind;
static __thread cudaStream_t t_stream;
static __thread int t_made;

static void ck(cudaError_t e, const char *what)
{
    fw_check(e, "faketvm", what);
}

EXPORT void tvm_init(fw_stream_kind kind)
{
    g_kind = kind;
}

EXPORT cudaStream_t tvm_stream(void)
{
    return fw_thread_stream(g_kind, &t_stream, &t_made, "faketvm");
}

/* Points a at t's memory. */
static void view_of(tvm_array *a, const DLTensor *t)
{
    a->data = (float *)((char *)t->data + t->byte_offset);
    a->n = (int)t->shape[0];
    a->device = t->device;
}

EXPORT int TVMArrayFromDLPack(DLManagedTensor *from, void **out)
{
    tvm_array *a = calloc(1, sizeof *a);
    if (!from || !out || !a) {
        free(a);
        return -1;
    }
    a->from = from;
    view_of(a, &from->dl_tensor);
    *out = a;
    return 0;
}

EXPORT int TVMFFITensorFromDLPackVersioned(fw_managed_versioned *from, int32_t require_alignment,
                                           int32_t require_contiguous, void **out)
{
    (void)require_alignment;
    (void)require_contiguous;
    tvm_array *a = calloc(1, sizeof *a);
    if (!from || !out || !a) {
        free(a);
        return -1;
    }
    a->from_versioned = from;
    view_of(a, &from->dl_tensor);
    *out = a;
    return 0;
}

EXPORT tvm_array *tvm_view(const DLTensor *t)
{
    tvm_array *a = calloc(1, sizeof *a);
    if (!a)
        exit(2);
    view_of(a, t);
    return a;
}

/* A re-export keeps only a shape of its own; the data stays owned by the original tensor. */
typedef struct {
    DLManagedTensor t;
    int64_t shape[1];
} reexport;

static void reexport_deleter(DLManagedTensor *t)
{
    free(t->manager_ctx);
}

EXPORT int TVMArrayToDLPack(void *from, DLManagedTensor **out)
{
    tvm_array *a = from;
    reexport *r = calloc(1, sizeof *r);
    if (!a || !out || !r) {
        free(r);
        return -1;
    }
    r->t.dl_tensor = a->from->dl_tensor;
    r->shape[0] = a->n;
    r->t.dl_tensor.shape = r->shape;
    r->t.dl_tensor.strides = NULL;
    r->t.manager_ctx = r;
    r->t.deleter = reexport_deleter;
    *out = &r->t;
    return 0;
}

/* Enqueues read number a->nread on s, through the opaque kernel when `opaque`. */
static void read_into(tvm_array *a, cudaStream_t s, int opaque)
{
    if (a->nread == MAX_READ_STREAMS) {
        fprintf(stderr, "faketvm: too many reads\n");
        exit(2);
    }
    float **r = &a->result[a->nread];
    ck(cudaMallocHost((void **)r, (size_t)a->n * sizeof(float)), "cudaMallocHost");
    if (opaque)
        scen_read_opaque(s, a->data, *r, a->n);
    else
        scen_read(s, a->data, *r, a->n);
    a->read_on[a->nread++] = s;
}

EXPORT void tvm_read_on(tvm_array *a, cudaStream_t s)
{
    read_into(a, s, 0);
}

EXPORT void tvm_read(tvm_array *a)
{
    read_into(a, tvm_stream(), 0);
}

EXPORT void tvm_read_opaque(tvm_array *a)
{
    read_into(a, tvm_stream(), 1);
}

EXPORT void tvm_fetch(tvm_array *a)
{
    int device = 0;
    ck(cudaGetDevice(&device), "cudaGetDevice");
    ck(cudaMalloc((void **)&a->copy, (size_t)a->n * sizeof(float)), "cudaMalloc");
    ck(cudaMemcpyPeerAsync(a->copy, device, a->data, (int)a->device.device_id, (size_t)a->n * sizeof(float),
                           tvm_stream()),
       "cudaMemcpyPeerAsync");
    a->data = a->copy;
}

EXPORT void tvm_fill(tvm_array *a, float value)
{
    scen_write(tvm_stream(), a->data, a->n, value);
}

EXPORT float tvm_result(tvm_array *a, int read, int i)
{
    if (read < 0 || read >= a->nread) {
        fprintf(stderr, "faketvm: no read %d\n", read);
        exit(2);
    }
    ck(cudaStreamSynchronize(a->read_on[read]), "cudaStreamSynchronize");
    return a->result[read][i];
}

EXPORT float tvm_host_get(tvm_array *a, int i)
{
    return a->data[i];
}

EXPORT void tvm_sync(void)
{
    ck(cudaStreamSynchronize(tvm_stream()), "cudaStreamSynchronize");
}

EXPORT void tvm_release(tvm_array *a)
{
    if (a->from && a->from->deleter)
        a->from->deleter(a->from);
    if (a->from_versioned && a->from_versioned->deleter)
        a->from_versioned->deleter(a->from_versioned);
    a->from = NULL;
    a->from_versioned = NULL;
    a->data = NULL;
}

EXPORT float tvm_seen(const tvm_array *a, int read, int i)
{
    if (read < 0 || read >= a->nread) {
        fprintf(stderr, "faketvm: no read %d\n", read);
        exit(2);
    }
    return a->result[read][i];
}

EXPORT void tvm_discard(tvm_array *a)
{
    tvm_release(a);
    for (int k = 0; k < a->nread; k++)
        cudaFreeHost(a->result[k]);
    if (a->copy)
        cudaFree(a->copy);
    free(a);
}

EXPORT void tvm_free(tvm_array *a)
{
    for (int k = 0; k < a->nread; k++)
        ck(cudaStreamSynchronize(a->read_on[k]), "cudaStreamSynchronize");
    tvm_release(a);
    for (int k = 0; k < a->nread; k++)
        cudaFreeHost(a->result[k]);
    if (a->copy)
        cudaFree(a->copy);
    free(a);
}
