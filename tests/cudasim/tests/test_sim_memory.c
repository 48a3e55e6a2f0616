/* test_sim_memory.c: the simulated allocator, pointer queries, copies and sets (driver and
 * runtime), synchronous-copy semantics. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "simtest.h"

static CUcontext g_ctx;

static int setup(void **state)
{
    (void)state;
    g_ctx = simtest_init();
    return 0;
}

static void pointer_attributes_of_device_memory(void **state)
{
    (void)state;
    CUdeviceptr d, start = 0, dp = 0;
    size_t size = 0;
    unsigned type = 0;
    CUcontext ctx = NULL;
    int ordinal = -1;
    assert_int_equal(cuMemAlloc(&d, 1000), CUDA_SUCCESS);
    CUdeviceptr inner = d + 123;
    assert_int_equal(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, inner), CUDA_SUCCESS);
    assert_ptr_equal(ctx, g_ctx);
    assert_int_equal(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inner), CUDA_SUCCESS);
    assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
    assert_int_equal(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, inner), CUDA_SUCCESS);
    assert_int_equal(dp, inner);
    assert_int_equal(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inner), CUDA_SUCCESS);
    assert_int_equal(start, d);
    assert_int_equal(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, inner), CUDA_SUCCESS);
    assert_int_equal(size, 1000);
    assert_int_equal(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, inner), CUDA_SUCCESS);
    assert_int_equal(ordinal, 0);
    start = size = 0;
    assert_int_equal(cuMemGetAddressRange(&start, &size, d + 999), CUDA_SUCCESS);
    assert_int_equal(start, d);
    assert_int_equal(size, 1000);
    assert_int_equal(cuMemGetAddressRange(&start, &size, d + 1000 + 4096), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(cuMemFree(d), CUDA_SUCCESS);
    assert_int_equal(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
}

static void pointer_attributes_batch_and_unknown_pointers(void **state)
{
    (void)state;
    void *h;
    unsigned type = 99;
    size_t size = 99;
    void *host = (void *)1;
    CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                   CU_POINTER_ATTRIBUTE_HOST_POINTER};
    void *data[] = {&type, &size, &host};
    assert_int_equal(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
    assert_int_equal(cuPointerGetAttributes(3, which, data, (CUdeviceptr)(uintptr_t)h + 8), CUDA_SUCCESS);
    assert_int_equal(type, CU_MEMORYTYPE_HOST);
    assert_int_equal(size, 64);
    assert_ptr_equal(host, (char *)h + 8);
    int local;
    assert_int_equal(cuPointerGetAttributes(3, which, data, (CUdeviceptr)(uintptr_t)&local), CUDA_SUCCESS);
    assert_int_equal(type, 0);
    assert_int_equal(size, 0);
    assert_null(host);
    assert_int_equal(cuMemFreeHost(h), CUDA_SUCCESS);
}

static void runtime_pointer_attributes(void **state)
{
    (void)state;
    void *d, *h;
    int local = 0;
    struct cudaPointerAttributes a;
    assert_int_equal(cudaMalloc(&d, 16), cudaSuccess);
    assert_int_equal(cudaMallocHost(&h, 16), cudaSuccess);
    assert_int_equal(cudaPointerGetAttributes(&a, (char *)d + 4), cudaSuccess);
    assert_int_equal(a.type, cudaMemoryTypeDevice);
    assert_int_equal(a.device, 0);
    assert_ptr_equal(a.devicePointer, (char *)d + 4);
    assert_int_equal(cudaPointerGetAttributes(&a, h), cudaSuccess);
    assert_int_equal(a.type, cudaMemoryTypeHost);
    assert_ptr_equal(a.hostPointer, h);
    assert_int_equal(cudaPointerGetAttributes(&a, &local), cudaSuccess);
    assert_int_equal(a.type, cudaMemoryTypeUnregistered);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFreeHost(h), cudaSuccess);
    assert_int_equal(cudaFree(NULL), cudaSuccess);
}

static void copies_and_sets(void **state)
{
    (void)state;
    CUdeviceptr a, b;
    unsigned in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuMemAlloc(&a, sizeof in), CUDA_SUCCESS);
    assert_int_equal(cuMemAlloc(&b, sizeof in), CUDA_SUCCESS);
    assert_int_equal(cuMemcpyHtoD(a, in, sizeof in), CUDA_SUCCESS);
    assert_int_equal(cuMemcpyDtoD(b, a, sizeof in), CUDA_SUCCESS);
    assert_int_equal(cuMemcpyDtoH(out, b, sizeof out), CUDA_SUCCESS);
    assert_memory_equal(in, out, sizeof in);
    assert_int_equal(cuMemsetD32Async(b, 0xdeadbeef, 8, s), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD8Async(b, 0x11, 4, s), CUDA_SUCCESS);
    assert_int_equal(cuMemcpyDtoHAsync(out, b, sizeof out, s), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(out[0], 0x11111111);
    assert_int_equal(out[7], 0xdeadbeef);
    assert_int_equal(cuMemsetD32(b + 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
    cuMemFree(a);
    cuMemFree(b);
    cuStreamDestroy(s);
}

static void synchronous_copy_waits_for_earlier_legacy_work(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0), out = 0;
    assert_int_equal(cudasim_set_kernel_duration("store_int", 20000), 0);
    assert_int_equal(simtest_store(NULL, x, 12), CUDA_SUCCESS);
    assert_int_equal(cudaMemcpy(&out, x, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(out, 12);
    assert_int_equal(cudasim_set_kernel_duration("store_int", 0), 0);
    assert_int_equal(cudaMemcpy(&out, x, sizeof out, (enum cudaMemcpyKind)17), cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

static void runtime_async_copy_and_set(void **state)
{
    (void)state;
    cudaStream_t s;
    char *d, in[32], out[32];
    memset(in, 'x', sizeof in);
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, sizeof in), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(d, in, sizeof in, cudaMemcpyHostToDevice, s), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(d + 16, 'y', 16, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(out, d, sizeof out, cudaMemcpyDefault, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(out[15], 'x');
    assert_int_equal(out[16], 'y');
    cudaFree(d);
    cudaStreamDestroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pointer_attributes_of_device_memory),
        cmocka_unit_test(pointer_attributes_batch_and_unknown_pointers),
        cmocka_unit_test(runtime_pointer_attributes),
        cmocka_unit_test(copies_and_sets),
        cmocka_unit_test(synchronous_copy_waits_for_earlier_legacy_work),
        cmocka_unit_test(runtime_async_copy_and_set),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
