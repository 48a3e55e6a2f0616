/* Scenario concurrent_sync: a host synchronize completes only the work submitted before it began.
 * Thread B launches a kernel on its own stream (held) and calls cudaFreeHost, which waits for the
 * device's work. Racy: while B waits, the main thread writes the tensor on MXNet's stream; B's
 * synchronize returns with that write still pending; the tensor is exported and TVM reads it, so
 * the read needs a wait. Correct: the write is submitted before B's synchronize begins, which
 * therefore completes it; the read needs nothing. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define N 4

static cudaStream_t g_b_stream;
static float *g_scratch, *g_pinned;
static atomic_int g_b_done;

static void *syncer(void *arg)
{
    (void)arg;
    scen_write(g_b_stream, g_scratch, N, 1.0f);
    fw_check(cudaFreeHost(g_pinned), "scenario", "cudaFreeHost");
    atomic_store(&g_b_done, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    fw_check(cudaStreamCreateWithFlags(&g_b_stream, cudaStreamNonBlocking), "scenario", "stream");
    fw_check(cudaMalloc((void **)&g_scratch, N * sizeof(float)), "scenario", "cudaMalloc");
    fw_check(cudaMallocHost((void **)&g_pinned, N * sizeof(float)), "scenario", "cudaMallocHost");
    scen_hold(g_b_stream);
    mx_array *a = racy ? NULL : scen_held_write(N);
    pthread_t b;
    if (pthread_create(&b, NULL, syncer, NULL))
        return 2;
    if (scen_await_host_sync()) /* B is inside cudaFreeHost */
        return 2;
    if (racy)
        a = scen_held_write(N);
    else
        scen_release(mx_stream());
    scen_release(g_b_stream);
    while (!atomic_load(&g_b_done))
        sched_yield(); /* runnable: MXNet's stream stays held in the racy version */
    pthread_join(b, NULL);
    return scen_handover(a, N);
}
