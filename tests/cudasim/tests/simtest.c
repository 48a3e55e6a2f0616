/* simtest.c: helpers shared by the simulator's tests (see simtest.h). */
#include "simtest.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cudasim.h"

CUcontext simtest_init(void)
{
    CUcontext ctx = NULL;
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    simtest_store_kernel(); /* registers the kernels, so durations can be set by name */
    return ctx;
}

void simtest_init_streams(CUstream *a, CUstream *b, CUstream *c)
{
    simtest_init();
    assert_int_equal(cuStreamCreate(a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(c, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
}

static void store_body(void **args)
{
    **(int **)args[0] = *(int *)args[1];
}
static void copy_body(void **args)
{
    **(int **)args[0] = **(const int **)args[1];
}

static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_log[4096];
static int g_nlog;

static void append_body(void **args)
{
    pthread_mutex_lock(&g_log_lock);
    if (g_nlog < 4096)
        g_log[g_nlog++] = *(int *)args[0];
    pthread_mutex_unlock(&g_log_lock);
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CUfunction g_store, g_copy, g_append;

static void register_all(void)
{
    size_t two_ptr[] = {sizeof(int *), sizeof(const int *)};
    size_t ptr_int[] = {sizeof(int *), sizeof(int)};
    size_t one_int[] = {sizeof(int)};
    g_store = cudasim_register_kernel("store_int", store_body, 2, ptr_int);
    g_copy = cudasim_register_kernel("copy_int", copy_body, 2, two_ptr);
    g_append = cudasim_register_kernel("append_int", append_body, 1, one_int);
}

CUfunction simtest_store_kernel(void)
{
    pthread_once(&g_once, register_all);
    return g_store;
}
CUfunction simtest_copy_kernel(void)
{
    pthread_once(&g_once, register_all);
    return g_copy;
}
CUfunction simtest_append_kernel(void)
{
    pthread_once(&g_once, register_all);
    return g_append;
}

CUresult simtest_store(CUstream s, int *dst, int value)
{
    void *args[] = {&dst, &value};
    return cuLaunchKernel(simtest_store_kernel(), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

CUresult simtest_copy(CUstream s, int *dst, const int *src)
{
    void *args[] = {&dst, &src};
    return cuLaunchKernel(simtest_copy_kernel(), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

CUresult simtest_append(CUstream s, int value)
{
    void *args[] = {&value};
    return cuLaunchKernel(simtest_append_kernel(), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

int simtest_log(int *out, int max, int clear)
{
    pthread_mutex_lock(&g_log_lock);
    int n = g_nlog;
    for (int i = 0; i < n && i < max; i++)
        out[i] = g_log[i];
    if (clear)
        g_nlog = 0;
    pthread_mutex_unlock(&g_log_lock);
    return n;
}

int *simtest_dev_int(int value)
{
    CUdeviceptr d = 0;
    assert_int_equal(cuMemAlloc(&d, sizeof(int)), CUDA_SUCCESS);
    assert_int_equal(cuMemcpyHtoD(d, &value, sizeof value), CUDA_SUCCESS);
    return (int *)(uintptr_t)d;
}
