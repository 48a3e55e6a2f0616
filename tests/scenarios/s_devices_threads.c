/* Scenario devices_threads (two devices, two threads, at the same time): thread d works on device
 * d. Each writes an array on its own stream and exports it; once both have exported, each
 * imports the other's tensor and reads it on its own stream, so every exchange crosses devices
 * and both are made concurrently. Racy: nothing orders the reads; correct: each producer records
 * an event after its write and each consumer's stream waits for the other thread's event.
 * The main thread holds both producer streams and waits by spinning: the simulator backend's
 * watchdog opens every gate when the thread that closed one sleeps. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#define N 4

static int g_racy;
static atomic_int g_ready, g_held, g_exported, g_done;
static DLManagedTensor *g_t[2];
static cudaEvent_t g_written[2];
static cudaStream_t g_producer[2];
static void *g_h[2];

static void ck(cudaError_t e, const char *what)
{
    fw_check(e, "scenario", what);
}

/* Returns once *v reaches n, without sleeping. */
static void spin_until(atomic_int *v, int n)
{
    while (atomic_load(v) < n)
        sched_yield();
}

static void *worker(void *arg)
{
    int d = (int)(intptr_t)arg;
    ck(cudaSetDevice(d), "cudaSetDevice");
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    g_producer[d] = mx_stream();
    atomic_fetch_add(&g_ready, 1);
    spin_until(&g_held, 1);
    mx_fill(a, SCEN_VALUE);
    if (!g_racy) {
        ck(cudaEventCreateWithFlags(&g_written[d], cudaEventDisableTiming), "cudaEventCreateWithFlags");
        ck(cudaEventRecord(g_written[d], g_producer[d]), "cudaEventRecord");
    }
    if (MXNDArrayToDLPack(a, &g_t[d]))
        exit(2);
    mx_free(a);
    atomic_fetch_add(&g_exported, 1);
    spin_until(&g_exported, 2);
    if (TVMArrayFromDLPack(g_t[1 - d], &g_h[d]))
        exit(2);
    if (!g_racy)
        ck(cudaStreamWaitEvent(tvm_stream(), g_written[1 - d], 0), "cudaStreamWaitEvent");
    tvm_read(g_h[d]);
    atomic_fetch_add(&g_done, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    g_racy = scen_racy(argc, argv);
    scen_devices(2);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    pthread_t t[2];
    for (intptr_t d = 0; d < 2; d++)
        if (pthread_create(&t[d], NULL, worker, (void *)d))
            return 2;
    spin_until(&g_ready, 2);
    for (int d = 1; d >= 0; d--) { /* with the stream's device current (a GPU holds with a kernel) */
        ck(cudaSetDevice(d), "cudaSetDevice");
        scen_hold(g_producer[d]);
    }
    atomic_store(&g_held, 1);
    spin_until(&g_done, 2);
    for (int d = 0; d < 2; d++)
        if (pthread_join(t[d], NULL))
            return 2;
    scen_settle();
    for (int d = 0; d < 2; d++)
        scen_release(g_producer[d]);
    float seen[2 * N];
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < N; i++)
            seen[d * N + i] = tvm_result(g_h[d], 0, i);
    scen_verdict(seen, 2 * N, SCEN_VALUE);
    for (int d = 0; d < 2; d++) {
        tvm_free(g_h[d]);
        if (!g_racy)
            ck(cudaEventDestroy(g_written[d]), "cudaEventDestroy");
    }
    return 0;
}
