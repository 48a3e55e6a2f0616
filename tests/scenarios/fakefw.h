/* Two fake legacy frameworks for the scenarios, each a shared library with its own stream per
 * thread and the REAL DLPack C entry points of the framework it imitates, so the shim's built-in
 * profiles wrap them:
 *   libfakemx.so  ("mxnet")  MXNDArrayToDLPack / MXNDArrayFromDLPack; a caching allocator that
 *                             hands freed blocks of the same size and kind out again.
 *   libfaketvm.so ("tvm")    TVMArrayFromDLPack / TVMArrayToDLPack.
 * Kernels come from scen_backend.h. Every function exits the process (status 2) on a CUDA
 * error; none synchronizes unless it says so. */
#ifndef FAKEFW_H
#define FAKEFW_H

#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a framework makes its per-thread stream. */
typedef enum {
    FW_NON_BLOCKING = 0, /* cudaStreamCreateWithFlags(cudaStreamNonBlocking) */
    FW_BLOCKING,         /* cudaStreamCreate */
    FW_LEGACY,           /* the legacy default stream (0) */
    FW_PER_THREAD,       /* cudaStreamPerThread */
} fw_stream_kind;

/* Shared by both frameworks: exits the process (status 2) naming `who` and `what` when e is an
 * error. */
static inline void fw_check(cudaError_t e, const char *who, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s: %s\n", who, what, cudaGetErrorString(e));
        exit(2);
    }
}

/* Shared by both frameworks: the stream a framework of this kind uses on the calling thread,
 * created on first use (*made tracks that, per thread, in the caller's thread-local storage). */
static inline cudaStream_t fw_thread_stream(fw_stream_kind kind, cudaStream_t *stream, int *made, const char *who)
{
    if (!*made) {
        *made = 1;
        if (kind == FW_NON_BLOCKING)
            fw_check(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), who, "stream");
        else if (kind == FW_BLOCKING)
            fw_check(cudaStreamCreate(stream), who, "stream");
        else
            *stream = kind == FW_PER_THREAD ? cudaStreamPerThread : 0;
    }
    return *stream;
}

/* ---- libfakemx.so ---- */
typedef struct mx_array mx_array;

int MXNDArrayToDLPack(void *handle, DLManagedTensor **out);
int MXNDArrayFromDLPack(DLManagedTensor *tensor, void **out);

void mx_init(fw_stream_kind kind);                 /* before first use; applies to streams made later */
cudaStream_t mx_stream(void);                      /* the calling thread's stream */
mx_array *mx_empty(int n, DLDeviceType where);     /* kDLCUDA or kDLCUDAHost; memory from the cache */
mx_array *mx_view(mx_array *a, int offset, int n); /* a view of a's memory (a must outlive it) */
void mx_fill(mx_array *a, float value);            /* write kernel on the thread's stream */
void mx_copy(mx_array *dst, const mx_array *src);  /* async copy on the thread's stream */
void mx_read(mx_array *a);                         /* read kernel on the thread's stream into a's result buffer */
float mx_result(mx_array *a, int i);               /* synchronizes the stream, returns element i read by mx_read */
void mx_sync(void);                                /* synchronizes the thread's stream */
void mx_free(mx_array *a);                         /* drops the program's reference */
/* Readiness through a host function, as XLA orders a buffer's definition: an event recorded on
 * the thread's stream, the thread's second (non-blocking) stream waiting for it, and a host
 * function there that marks a ready. mx_wait_ready blocks on the host until it has. */
void mx_signal_ready(mx_array *a);
void mx_wait_ready(mx_array *a);

/* ---- libfaketvm.so ---- */
typedef struct tvm_array tvm_array;

int TVMArrayFromDLPack(DLManagedTensor *from, void **out);
int TVMArrayToDLPack(void *from, DLManagedTensor **out);

void tvm_init(fw_stream_kind kind);
cudaStream_t tvm_stream(void);
/* Reads are numbered from 0 in the order made; each writes its own pinned result buffer. */
void tvm_read(tvm_array *a);                     /* read kernel on the thread's stream */
void tvm_read_on(tvm_array *a, cudaStream_t s);  /* read kernel on stream s */
void tvm_read_opaque(tvm_array *a);              /* read through a parameter block the shim cannot scan */
void tvm_fetch(tvm_array *a);                    /* peer copy (cudaMemcpyPeerAsync, thread's stream) from the
                                                  tensor's device to the current one; later reads read it */
void tvm_fill(tvm_array *a, float value);        /* write kernel (in place) on the thread's stream */
float tvm_result(tvm_array *a, int read, int i); /* synchronizes the read's stream; element i it saw */
float tvm_host_get(tvm_array *a, int i);         /* element i read by the host (host-visible tensors) */
void tvm_sync(void);
void tvm_release(tvm_array *a); /* calls the DLPack deleter; results stay readable */
void tvm_free(tvm_array *a);    /* waits for the reads, releases, frees */

#ifdef __cplusplus
}
#endif
#endif
