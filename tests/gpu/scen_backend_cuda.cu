/* scen_backend.h on a real GPU: the scenarios' kernels as CUDA kernels, built with nvcc against
 * the real CUDA runtime.
 *
 * Races show without gates because the writer is slow: before writing, scen_write's kernel spins
 * SCEN_SPIN_CYCLES GPU clock cycles (default 20,000,000: about 10 ms at 2 GHz), so a reader on
 * another stream that nothing orders after it runs first and sees the old values.
 *
 * scen_hold(stream) enqueues a delay on the stream: a kernel that spins SCEN_HOLD_CYCLES cycles
 * (default ten times the writer's spin). Work enqueued after it starts later, as behind the
 * simulator's gate, but the delay ends by itself, so no host wait can deadlock on it. This is
 * what makes the scenarios that hold a consumer stream (release_reuse) race on a GPU: the held
 * read runs after the producer's next write. scen_release and scen_settle do nothing.
 *
 * scen_devices enables peer access among the devices a scenario needs, or skips it (exit
 * SCEN_SKIP) on a machine with fewer devices or without peer access.
 *
 * SCEN_FAIL (simulator fault injection) has no meaning here and is ignored. Every CUDA error
 * prints a line and exits 2, as scen_backend.h says. */
#include "scen_backend.h"

#include <atomic>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>

#define LARGE_PARAM 16384 /* bytes of the opaque kernel's parameter block, as on the simulator */

/* The opaque block: pointers at the end, after padding, passed by value. */
struct opaque_block {
    char pad[LARGE_PARAM - 24];
    const float *src;
    float *dst;
    long n;
};

static void ck(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "scen: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

/* Reads a cycle count from the environment: a positive decimal number, else `fallback`. */
static long long cycles_from_env(const char *name, long long fallback)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || v < 0) {
        fprintf(stderr, "scen: %s=%s is not a cycle count; using %lld\n", name, s, fallback);
        return fallback;
    }
    return v;
}

static long long spin_cycles(void)
{
    static long long v = -1;
    if (v < 0)
        v = cycles_from_env("SCEN_SPIN_CYCLES", 20000000LL);
    return v;
}

static long long hold_cycles(void)
{
    static long long v = -1;
    if (v < 0)
        v = cycles_from_env("SCEN_HOLD_CYCLES", 10 * spin_cycles());
    return v;
}

__device__ static void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

__global__ static void k_write(float *p, int n, float value, long long cycles)
{
    spin(cycles);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = value;
}

__global__ static void k_read(const float *src, float *dst, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ static void k_opaque(opaque_block b)
{
    for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < b.n; i += gridDim.x * blockDim.x)
        b.dst[i] = b.src[i];
}

__global__ static void k_delay(long long cycles)
{
    spin(cycles);
}

/* Loads every kernel of this file into the current device's context once, before its first
 * launch there: with lazy loading (CUDA's default since 12.2) the first launch of a kernel loads
 * it, and loading may synchronize the context, which orders a racy read after the write it races
 * with and hides the race (the first GPU run showed exactly that). cudaFuncGetAttributes loads a
 * kernel. Two threads may both load: harmless. */
static void load_kernels(void)
{
    static std::atomic<unsigned long long> loaded; /* bit d: device d's context has them */
    int dev = 0;
    ck(cudaGetDevice(&dev), "cudaGetDevice");
    unsigned long long bit = 1ULL << (dev & 63);
    if (loaded.load() & bit)
        return;
    cudaFuncAttributes a;
    ck(cudaFuncGetAttributes(&a, k_write), "load k_write");
    ck(cudaFuncGetAttributes(&a, k_read), "load k_read");
    ck(cudaFuncGetAttributes(&a, k_opaque), "load k_opaque");
    ck(cudaFuncGetAttributes(&a, k_delay), "load k_delay");
    loaded.fetch_or(bit);
}

/* Blocks of 256 threads covering n elements, at most 1024 blocks (the loops stride over more). */
static unsigned blocks_for(long n)
{
    long b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

extern "C" void scen_write(cudaStream_t stream, float *p, int n, float value)
{
    load_kernels();
    k_write<<<blocks_for(n), 256, 0, stream>>>(p, n, value, spin_cycles());
    ck(cudaGetLastError(), "scen_write launch");
}

extern "C" void scen_read(cudaStream_t stream, const float *src, float *dst, int n)
{
    load_kernels();
    k_read<<<blocks_for(n), 256, 0, stream>>>(src, dst, n);
    ck(cudaGetLastError(), "scen_read launch");
}

extern "C" void scen_read_opaque(cudaStream_t stream, const float *src, float *dst, int n)
{
    load_kernels();
    static thread_local opaque_block b; /* large: kept off the stack; copied at launch */
    b.src = src;
    b.dst = dst;
    b.n = n;
    k_opaque<<<blocks_for(n), 256, 0, stream>>>(b);
    ck(cudaGetLastError(), "scen_read_opaque launch");
}

extern "C" void scen_hold(cudaStream_t stream)
{
    load_kernels();
    k_delay<<<1, 1, 0, stream>>>(hold_cycles());
    ck(cudaGetLastError(), "scen_hold delay launch");
}

extern "C" void scen_release(cudaStream_t stream)
{
    (void)stream;
}

extern "C" void scen_settle(void)
{
}

extern "C" void scen_host_blocking(int on)
{
    (void)on;
}

/* Prints why the scenario cannot run here and exits with SCEN_SKIP. */
static void skip(const char *why, int have, int n)
{
    printf("skip: %s (%d devices, the scenario needs %d)\n", why, have, n);
    exit(SCEN_SKIP);
}

extern "C" void scen_devices(int n)
{
    int have = 0;
    if (cudaGetDeviceCount(&have) != cudaSuccess || have < n)
        skip("too few CUDA devices", have, n);
    for (int d = 0; d < n; d++) {
        ck(cudaSetDevice(d), "cudaSetDevice");
        for (int peer = 0; peer < n; peer++) {
            int can = 0;
            if (peer == d)
                continue;
            ck(cudaDeviceCanAccessPeer(&can, d, peer), "cudaDeviceCanAccessPeer");
            if (!can)
                skip("no peer access between the devices", have, n);
            cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else
                ck(e, "cudaDeviceEnablePeerAccess");
        }
    }
    ck(cudaSetDevice(0), "cudaSetDevice");
}

extern "C" int scen_await_host_sync(void)
{
    usleep(100000);
    return 0;
}

extern "C" void scen_pause_next_call(const char *driver_function)
{
    (void)driver_function;
}

/* A call cannot be paused on a GPU: the thread's call goes on and returns. Waiting 100 ms gives it
 * the time to, so the scenario's order of enqueues is the simulator's (the paused call's
 * operation enqueued first), not a race between the two host threads. */
extern "C" void scen_await_paused(pid_t tid)
{
    (void)tid;
    usleep(100000);
}

extern "C" void scen_resume_call(pid_t tid)
{
    (void)tid;
}
