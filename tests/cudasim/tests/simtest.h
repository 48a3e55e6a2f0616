/* simtest.h: helpers shared by the simulator's own tests: context setup and three tiny kernels
 * (store a value, copy a value, append a value to an in-order log). */
#ifndef SIMTEST_H
#define SIMTEST_H

#include <cuda.h>

/* cuInit, then makes device 0's primary context current on the calling thread, registers the
 * three kernels; returns the context. */
CUcontext simtest_init(void);
/* simtest_init, then creates three non-blocking streams into *a, *b and *c. */
void simtest_init_streams(CUstream *a, CUstream *b, CUstream *c);

/* Kernel "store_int" (int *dst, int value): *dst = value. */
CUfunction simtest_store_kernel(void);
/* Kernel "copy_int" (int *dst, const int *src): *dst = *src. */
CUfunction simtest_copy_kernel(void);
/* Kernel "append_int" (int value): appends value to the log read by simtest_log. */
CUfunction simtest_append_kernel(void);

/* Launches store_int / copy_int / append_int on stream s (driver API). */
CUresult simtest_store(CUstream s, int *dst, int value);
CUresult simtest_copy(CUstream s, int *dst, const int *src);
CUresult simtest_append(CUstream s, int value);

/* Copies up to `max` logged values into out and returns how many there are; clears the log
 * when `clear`. */
int simtest_log(int *out, int max, int clear);

/* A device int allocated with cuMemAlloc, set to `value` synchronously. */
int *simtest_dev_int(int value);

#endif
