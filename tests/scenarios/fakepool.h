/* libfakepool.so ("mxnet"): a legacy framework whose arrays each live on a stream of their own
 * (fakepool.c), for the loader pipeline. Every function exits the process (status 2) on a CUDA
 * error. */
#ifndef FAKEPOOL_H
#define FAKEPOOL_H

#include "fakefw.h"

typedef struct pool_array pool_array;

/* n bytes of device memory, zeroed (synchronizes), on a stream of `kind` made for it. */
pool_array *pool_make(int64_t n, fw_stream_kind kind);
/* Sets every byte to `value` on the array's stream. */
void pool_fill(pool_array *a, int value);
/* Copies the last byte to pinned *dst on the array's stream. */
void pool_read_last(pool_array *a, unsigned char *dst);
/* The kind of stream each later import makes for itself. */
void pool_set_import_kind(fw_stream_kind kind);
/* A new event recorded on the array's stream now. */
cudaEvent_t pool_event(pool_array *a);
/* The array's stream waits for e, which is then destroyed. */
void pool_wait_event(pool_array *a, cudaEvent_t e);
/* Synchronizes the array's stream. */
void pool_sync(pool_array *a);
/* Calls an imported array's deleter and destroys the stream made for it (nothing waits). */
void pool_release(pool_array *a);

int MXNDArrayToDLPack(void *handle, DLManagedTensor **out);
int MXNDArrayFromDLPack(DLManagedTensor *tensor, void **out);

#endif
