/* gpu_probe: says whether this machine can run CUDA work, without hanging.
 *
 * Prints "gpu: <n> device(s): <name of device 0>" and exits 0 when the CUDA runtime finds at least
 * one device; otherwise prints "gpu: none (<reason>)" and exits 1. Callers still run it under
 * `timeout`, since a broken driver can block inside cudaGetDeviceCount. */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("gpu: none (cudaGetDeviceCount: %s)\n", cudaGetErrorString(e));
        return 1;
    }
    if (n < 1) {
        printf("gpu: none (no CUDA device)\n");
        return 1;
    }
    struct cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, 0);
    printf("gpu: %d device(s): %s\n", n, e == cudaSuccess ? p.name : "(properties unavailable)");
    return 0;
}
