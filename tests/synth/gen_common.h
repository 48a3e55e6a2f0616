/* gen_common.h: what the generated programs share, each a program of its own (one translation
 * unit): a seeded xorshift generator, error checks that stop the program with exit status 2, and
 * the two kernels (a delay and a write of one value). Define GEN_NAME (the program's name, for
 * messages) before including it. */
#ifndef GEN_COMMON_H
#define GEN_COMMON_H

#include "fakefw.h"

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static unsigned below(uint64_t *x, unsigned n)
{
    return (unsigned)(next(x) % n);
}

static void ck(cudaError_t e, const char *what)
{
    fw_check(e, GEN_NAME, what);
}

static void ckd(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, GEN_NAME ": %s: CUDA error %d\n", what, (int)r);
        exit(2);
    }
}

static void k_delay(void **args)
{
    (void)args;
}

static void k_write(void **args)
{
    float *p = *(float **)args[0];
    int n = *(int *)args[1];
    float v = *(float *)args[2];
    for (int i = 0; i < n; i++)
        p[i] = v;
}

#endif
