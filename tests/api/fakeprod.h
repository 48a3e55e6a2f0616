/* libapi_fakeprod.so: a fake legacy producer for the C API tests, exporting two real profiled
 * entry points so the preloaded shim wraps them:
 *   MXNDArrayToDLPack              ("mxnet", DLPack 0.x, out-parameter)
 *   TVMFFITensorToDLPackVersioned  ("tvm-ffi", DLPack 1.x, out-parameter)
 * An array holds n floats of device memory (cudaMalloc on the simulator) written by a kernel on
 * the producer's own non-blocking side stream. Exported tensors count their deleter calls.
 * Kernels: "fp_write" (p[i] = value) and "fp_read" (dst[i] = src[i]); CUDA errors make the
 * functions print a line and return -1 / NULL. */
#ifndef API_FAKEPROD_H
#define API_FAKEPROD_H

#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>

typedef struct fp_array fp_array;

int MXNDArrayToDLPack(void *handle, DLManagedTensor **out);
int TVMFFITensorToDLPackVersioned(void *handle, void **out);

/* The producer's side stream (created non-blocking on first use, shared by all threads). */
cudaStream_t fp_side_stream(void);

/* A new array of n floats (zeroed, synchronized), or NULL. */
fp_array *fp_new(int n);

/* Writes value into every element on the side stream (asynchronous). Returns 0 or -1. */
int fp_write(fp_array *a, float value);

/* Consumer kernel: copies n floats from src to dst on `stream`. Returns 0 or -1. */
int fp_read(cudaStream_t stream, const float *src, float *dst, int n);

/* The next export fails (returns -1 and hands nothing out). */
void fp_fail_next_export(void);

/* The next versioned export reports DLPack major version `major` (1 restores normal). */
void fp_next_major(unsigned major);

/* Deleter calls of the producer's tensors so far (all arrays). */
int fp_deleter_calls(void);

/* Frees the array (its exports must have been released). */
void fp_free(fp_array *a);

#endif
