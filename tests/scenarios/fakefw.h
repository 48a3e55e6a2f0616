/* Two fake legacy frameworks for the scenarios, each a shared library with its own stream per
 * thread and the REAL DLPack C entry points of the framework it imitates, so the shim's built-in
 * profiles wrap them:
 *   libfakemx.so  ("mxnet")  MXNDArrayToDLPack / MXNDArrayFromDLPack; a caching allocator that
 *                             hands freed blocks of the same size and kind out again; a DLPack C
 *                             exchange API table in a "dlpack_exchange_api" capsule, as paddle's
 *                             tensor type offers it (libfakemx also stands for libpython's
 *                             PyCapsule_GetPointer).
 *   libfaketvm.so ("tvm")    TVMArrayFromDLPack / TVMArrayToDLPack, and tvm-ffi's
 *                             TVMFFITensorFromDLPackVersioned.
 * Kernels come from scen_backend.h. Every function exits the process (status 2) on a CUDA
 * error; none synchronizes unless it says so. */
#ifndef FAKEFW_H
#define FAKEFW_H

#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>
#include <stdint.h>
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

/* ---- DLPack 1.3's versioned tensor and C exchange API, as dlpack.h declares them (the system
 * dlpack.h may be older; these names cannot clash with a newer one) ---- */
typedef struct {
    uint32_t major, minor;
} fw_dlpack_version;

typedef struct fw_managed_versioned {
    fw_dlpack_version version;
    void *manager_ctx;
    void (*deleter)(struct fw_managed_versioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} fw_managed_versioned;

typedef struct fw_exchange_api_header {
    fw_dlpack_version version;
    struct fw_exchange_api_header *prev_api;
} fw_exchange_api_header;

typedef struct {
    fw_exchange_api_header header;
    int (*managed_tensor_allocator)(DLTensor *prototype, fw_managed_versioned **out, void *error_ctx,
                                    void (*set_error)(void *error_ctx, const char *kind, const char *message));
    int (*managed_tensor_from_py_object_no_sync)(void *py_object, fw_managed_versioned **out);
    int (*managed_tensor_to_py_object_no_sync)(fw_managed_versioned *tensor, void **out_py_object);
    int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out);
    int (*current_work_stream)(DLDeviceType device_type, int32_t device_id, void **out_current_stream);
} fw_exchange_api;

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
void mx_set_read_only(mx_array *a);                /* its later exchange-API exports are READ_ONLY (DLPack 1.x) */
float *mx_data(mx_array *a);                       /* its memory, for a program's own kernels */
/* on = 1: a released MXNDArrayToDLPack tensor's struct is not freed but handed to the next export,
 * on any thread, so DLManagedTensor addresses come round again (as malloc's often do). */
void mx_reuse_exports(int on);
unsigned long mx_exports_released(void); /* MXNDArrayToDLPack tensors whose deleter has run */
/* Readiness through a host function, as XLA orders a buffer's definition: an event recorded on
 * the thread's stream, the thread's second (non-blocking) stream waiting for it, and a host
 * function there that marks a ready. mx_wait_ready blocks on the host until it has. */
void mx_signal_ready(mx_array *a);
void mx_wait_ready(mx_array *a);
/* The "dlpack_exchange_api" capsule of mx_array's type: an fw_exchange_api whose "Python
 * objects" are mx_array pointers; current_work_stream gives the calling thread's stream. Read it
 * with PyCapsule_GetPointer(capsule, "dlpack_exchange_api") (NULL for another name). */
void *mx_exchange_api_capsule(void);
void *PyCapsule_GetPointer(void *capsule, const char *name);

/* ---- libfaketvm.so ---- */
typedef struct tvm_array tvm_array;

int TVMArrayFromDLPack(DLManagedTensor *from, void **out);
int TVMArrayToDLPack(void *from, DLManagedTensor **out);
/* tvm-ffi's import of a versioned tensor (alignment and contiguity requirements ignored). */
int TVMFFITensorFromDLPackVersioned(fw_managed_versioned *from, int32_t require_alignment, int32_t require_contiguous,
                                    void **out);

void tvm_init(fw_stream_kind kind);
cudaStream_t tvm_stream(void);
tvm_array *tvm_view(const DLTensor *t); /* a view of a non-owning DLTensor's memory (no release) */
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
/* Element i that read `read` saw, without synchronizing (the caller synchronized the device). */
float tvm_seen(const tvm_array *a, int read, int i);
/* Releases (unless done) and frees a without waiting for its reads: the caller synchronized the
 * device (their streams may be destroyed). */
void tvm_discard(tvm_array *a);

#ifdef __cplusplus
}
#endif
#endif
