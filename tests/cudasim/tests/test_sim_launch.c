/* test_sim_launch.c: kernel launches (cuLaunchKernel, cuLaunchKernelEx, packed `extra`
 * arguments, cudaLaunchKernel, cudaLaunchKernelExC) and parameter info (cuFuncGetParamInfo,
 * cuKernelGetParamInfo, cudaFuncGetParamInfo); arguments are copied at launch. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "simtest.h"

typedef struct {
    int a, b, c;
} triple;

static int g_out[4];
static void mixed_body(void **args)
{
    g_out[0] = *(char *)args[0];
    g_out[1] = *(int *)args[1];
    g_out[2] = (int)*(double *)args[2];
    g_out[3] = ((triple *)args[4])->c + **(int **)args[3];
}

static CUfunction g_mixed;
static int g_ptr_target = 100;

static int setup(void **state)
{
    (void)state;
    simtest_init();
    size_t sizes[] = {sizeof(char), sizeof(int), sizeof(double), sizeof(int *), sizeof(triple)};
    g_mixed = cudasim_register_kernel("mixed", mixed_body, 5, sizes);
    assert_non_null(g_mixed);
    return 0;
}

static void param_info_gives_natural_offsets(void **state)
{
    (void)state;
    size_t expect_off[] = {0, 4, 8, 16, 24}, expect_size[] = {1, 4, 8, 8, 12};
    for (size_t i = 0; i < 5; i++) {
        size_t off = 99, size = 99;
        assert_int_equal(cuFuncGetParamInfo(g_mixed, i, &off, &size), CUDA_SUCCESS);
        assert_int_equal(off, expect_off[i]);
        assert_int_equal(size, expect_size[i]);
        off = size = 99;
        assert_int_equal(cuKernelGetParamInfo((CUkernel)(void *)g_mixed, i, &off, &size), CUDA_SUCCESS);
        assert_int_equal(off, expect_off[i]);
        off = size = 99;
        assert_int_equal(cudaFuncGetParamInfo((const void *)g_mixed, i, &off, &size), cudaSuccess);
        assert_int_equal(size, expect_size[i]);
    }
    assert_int_equal(cuFuncGetParamInfo(g_mixed, 5, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cudaFuncGetParamInfo((const void *)g_mixed, 5, NULL, NULL), cudaErrorInvalidValue);
    int not_a_kernel;
    assert_int_equal(cuFuncGetParamInfo((CUfunction)(void *)&not_a_kernel, 0, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
}

static void registration_rejects_bad_layouts(void **state)
{
    (void)state;
    size_t zero[] = {0};
    assert_null(cudasim_register_kernel(NULL, mixed_body, 0, NULL));
    assert_null(cudasim_register_kernel("k", NULL, 0, NULL));
    assert_null(cudasim_register_kernel("k", mixed_body, 1, NULL));
    assert_null(cudasim_register_kernel("k", mixed_body, 1, zero));
}

static void arguments_are_copied_at_launch(void **state)
{
    (void)state;
    CUstream s;
    char c = 7;
    int i = 8, *p = &g_ptr_target;
    double d = 9.0;
    triple t = {0, 0, 10};
    void *args[] = {&c, &i, &d, &p, &t};
    assert_int_equal(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    cudasim_stream_hold(s);
    assert_int_equal(cuLaunchKernel(g_mixed, 1, 1, 1, 32, 1, 1, 0, s, args, NULL), CUDA_SUCCESS);
    c = i = 0;
    d = 0;
    t.c = 0;
    cudasim_stream_release(s);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(g_out[0], 7);
    assert_int_equal(g_out[1], 8);
    assert_int_equal(g_out[2], 9);
    assert_int_equal(g_out[3], 110);
    cuStreamDestroy(s);
}

static void packed_extra_arguments(void **state)
{
    (void)state;
    unsigned char buf[40] = {0};
    size_t size = sizeof buf;
    int i = 21, *p = &g_ptr_target;
    double d = 22.0;
    triple t = {0, 0, 1};
    buf[0] = 20;
    memcpy(buf + 4, &i, sizeof i);
    memcpy(buf + 8, &d, sizeof d);
    memcpy(buf + 16, &p, sizeof p);
    memcpy(buf + 24, &t, sizeof t);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    assert_int_equal(cuLaunchKernel(g_mixed, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra), CUDA_SUCCESS);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(g_out[0], 20);
    assert_int_equal(g_out[2], 22);
    assert_int_equal(g_out[3], 101);
    size = 8;
    assert_int_equal(cuLaunchKernel(g_mixed, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_VALUE);
}

static void launch_ex_and_runtime_launches(void **state)
{
    (void)state;
    CUstream s;
    int *x = simtest_dev_int(0), v = 31;
    void *args[] = {&x, &v};
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUlaunchConfig cfg = {
        .gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1, .hStream = s};
    assert_int_equal(cuLaunchKernelEx(&cfg, simtest_store_kernel(), args, NULL), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(*x, 31);
    v = 32;
    dim3 one = {1, 1, 1};
    assert_int_equal(cudaLaunchKernel((const void *)simtest_store_kernel(), one, one, args, 0, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(*x, 32);
    v = 33;
    cudaLaunchConfig_t rcfg = {.gridDim = one, .blockDim = one, .stream = s};
    assert_int_equal(cudaLaunchKernelExC(&rcfg, (const void *)simtest_store_kernel(), args), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(*x, 33);
    cuStreamDestroy(s);
}

static void invalid_launches_are_rejected(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0), v = 1;
    void *args[] = {&x, &v};
    int not_a_kernel;
    assert_int_equal(cuLaunchKernel(simtest_store_kernel(), 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuLaunchKernel((CUfunction)(void *)&not_a_kernel, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuLaunchKernel(simtest_store_kernel(), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    dim3 zero = {0, 1, 1}, one = {1, 1, 1};
    assert_int_equal(cudaLaunchKernel((const void *)simtest_store_kernel(), zero, one, args, 0, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(param_info_gives_natural_offsets), cmocka_unit_test(registration_rejects_bad_layouts),
        cmocka_unit_test(arguments_are_copied_at_launch),   cmocka_unit_test(packed_extra_arguments),
        cmocka_unit_test(launch_ex_and_runtime_launches),   cmocka_unit_test(invalid_launches_are_rejected),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
