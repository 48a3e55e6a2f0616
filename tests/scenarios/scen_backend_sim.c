/* scen_backend.h on the CUDA simulator: kernels are host functions registered with cudasim,
 * gates are cudasim stream holds, settle is cudasim_settle.
 *
 * A watchdog thread opens every gate when the thread that closed one has been blocked in a
 * simulated host synchronization (one the tool under test added, or an implicit one such as
 * cudaFreeHost) or in a wait it announced with scen_host_blocking, for a few milliseconds
 * outside scen_settle, so host waits on held streams finish
 * instead of deadlocking. It asks the simulator (cudasim_thread_in_host_wait) rather than guessing
 * from the thread's scheduling state: a holder descheduled or asleep for any other reason (a
 * loaded machine, a sanitizer) keeps its gates, so a racy scenario stays racy. SCEN_FAIL=name,...
 * makes the next call of each named CUDA function fail (cudasim_fail_next), for fault tests. */
#include "scen_backend.h"

#include "cudasim.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LARGE_PARAM 16384 /* bytes of the opaque kernel's parameter block */

static CUfunction g_write, g_read, g_opaque;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void k_write(void **args)
{
    float *p = *(float **)args[0];
    int n = *(int *)args[1];
    float v = *(float *)args[2];
    for (int i = 0; i < n; i++)
        p[i] = v;
}

static void k_read(void **args)
{
    const float *src = *(const float **)args[0];
    float *dst = *(float **)args[1];
    int n = *(int *)args[2];
    for (int i = 0; i < n; i++)
        dst[i] = src[i];
}

/* The opaque block: pointers at the end, after padding. */
typedef struct {
    char pad[LARGE_PARAM - 24];
    const float *src;
    float *dst;
    long n;
} opaque_block;

static void k_opaque(void **args)
{
    const opaque_block *b = args[0];
    for (long i = 0; i < b->n; i++)
        b->dst[i] = b->src[i];
}

/* Gates closed and not yet opened, with the thread that closed them. */
#define GATES 16
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cudaStream_t s;
    int device; /* current at the hold: a default-stream handle names that device's stream */
    pid_t holder;
} g_gates[GATES];
static int g_ngates;
static atomic_int g_settling;
/* Threads between scen_host_blocking(1) and (0) (g_lock). */
static pid_t g_blocking[GATES];
static int g_nblocking;

/* 1 when thread tid is blocked on the host: in a simulated synchronization or announced by
 * scen_host_blocking. g_lock held. */
static int blocked_on_host(pid_t tid)
{
    for (int i = 0; i < g_nblocking; i++)
        if (g_blocking[i] == tid)
            return 1;
    return cudasim_thread_in_host_wait(tid);
}

void scen_host_blocking(int on)
{
    pid_t me = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(&g_lock);
    if (on && g_nblocking < GATES) {
        g_blocking[g_nblocking++] = me;
    } else if (!on) {
        for (int i = 0; i < g_nblocking; i++)
            if (g_blocking[i] == me) {
                g_blocking[i] = g_blocking[--g_nblocking];
                break;
            }
    }
    pthread_mutex_unlock(&g_lock);
}

/* Opens every gate; the watchdog's thread cannot name another thread's per-thread stream, so
 * the simulator opens them all. */
static void open_all(void)
{
    cudasim_release_all();
    g_ngates = 0;
}

static void *watchdog(void *arg)
{
    (void)arg;
    int streak = 0;
    for (;;) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&g_lock);
        int blocked = 0;
        if (!atomic_load(&g_settling))
            for (int i = 0; i < g_ngates && !blocked; i++)
                blocked = blocked_on_host(g_gates[i].holder);
        streak = blocked ? streak + 1 : 0;
        if (streak >= 3) {
            open_all();
            streak = 0;
        }
        pthread_mutex_unlock(&g_lock);
    }
    return NULL;
}

static void fail_from_env(void)
{
    const char *spec = getenv("SCEN_FAIL");
    if (!spec || !*spec)
        return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        cudasim_fail_next(tok, CUDA_ERROR_LAUNCH_FAILED);
}

static void init(void)
{
    size_t w[] = {sizeof(float *), sizeof(int), sizeof(float)};
    size_t r[] = {sizeof(float *), sizeof(float *), sizeof(int)};
    size_t o[] = {sizeof(opaque_block)};
    g_write = cudasim_register_kernel("scen_write", k_write, 3, w);
    g_read = cudasim_register_kernel("scen_read", k_read, 3, r);
    g_opaque = cudasim_register_kernel("scen_read_opaque", k_opaque, 1, o);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, watchdog, NULL)) {
        fprintf(stderr, "scen: cannot start the watchdog\n");
        exit(2);
    }
    pthread_attr_destroy(&a);
    fail_from_env();
}

static void launch(const CUfunction *f, cudaStream_t s, void **args)
{
    pthread_once(&g_once, init);
    dim3 one = {1, 1, 1};
    cudaError_t e = cudaLaunchKernel((const void *)*f, one, one, args, 0, s);
    if (e != cudaSuccess) {
        fprintf(stderr, "scen: launch failed: %s\n", cudaGetErrorString(e));
        exit(2);
    }
}

void scen_write(cudaStream_t stream, float *p, int n, float value)
{
    void *args[] = {&p, &n, &value};
    launch(&g_write, stream, args);
}

void scen_read(cudaStream_t stream, const float *src, float *dst, int n)
{
    void *args[] = {&src, &dst, &n};
    launch(&g_read, stream, args);
}

void scen_read_opaque(cudaStream_t stream, const float *src, float *dst, int n)
{
    static __thread opaque_block b; /* copied at launch */
    b.src = src;
    b.dst = dst;
    b.n = n;
    void *args[] = {&b};
    launch(&g_opaque, stream, args);
}

void scen_hold(cudaStream_t stream)
{
    pthread_once(&g_once, init);
    pthread_mutex_lock(&g_lock);
    int device = 0;
    if (g_ngates < GATES && cudaGetDevice(&device) == cudaSuccess && cudasim_stream_hold((CUstream)stream) == 0) {
        g_gates[g_ngates].s = stream;
        g_gates[g_ngates].device = device;
        g_gates[g_ngates].holder = (pid_t)syscall(SYS_gettid);
        g_ngates++;
    }
    pthread_mutex_unlock(&g_lock);
}

static int is_default_stream(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* Opens the gate of `stream`, with `device` current when the handle names a default stream. */
static void release_on(int device, cudaStream_t stream)
{
    int cur = device;
    if (is_default_stream(stream) && cudaGetDevice(&cur) == cudaSuccess && cur != device)
        cudaSetDevice(device);
    cudasim_stream_release((CUstream)stream);
    if (cur != device)
        cudaSetDevice(cur);
}

void scen_release(cudaStream_t stream)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_ngates; i++)
        if (g_gates[i].s == stream) {
            release_on(g_gates[i].device, stream);
            g_gates[i] = g_gates[--g_ngates];
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

void scen_devices(int n)
{
    char want[16];
    snprintf(want, sizeof want, "%d", n);
    setenv("CUDASIM_DEVICES", want, 0);
    int have = 0;
    if (cudaGetDeviceCount(&have) != cudaSuccess || have < n) {
        printf("skip: %d simulated devices, the scenario needs %d\n", have, n);
        exit(SCEN_SKIP);
    }
}

void scen_settle(void)
{
    atomic_store(&g_settling, 1);
    cudasim_settle();
    atomic_store(&g_settling, 0);
}

int scen_await_host_sync(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!cudasim_host_waiters()) { /* runnable: the watchdog leaves this thread's gates alone */
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10)
            return -1;
    }
    return 0;
}

void scen_pause_next_call(const char *driver_function)
{
    cudasim_pause_next_exit(driver_function);
}

void scen_await_paused(pid_t tid)
{
    while (!cudasim_exit_paused(tid))
        sched_yield();
}

void scen_resume_call(pid_t tid)
{
    cudasim_resume_exit(tid);
}
