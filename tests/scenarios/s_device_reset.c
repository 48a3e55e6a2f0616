/* Scenario device_reset: an exchange, cudaDeviceReset, and a second exchange in the context that
 * replaces the reset one (often at the same handle). Each exchange runs on a thread of its own, so
 * the fake frameworks make their streams in the context it uses, and allocates its own size, so
 * the fake MXNet's cache never hands out memory of the reset context. Producer and consumer are
 * on streams of their own; racy: nothing orders them; correct: an event does. Under fix an event
 * the shim kept from the first context must never be recorded in the second. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>
#include <stdint.h>

#define N 4

static int g_racy;
static float g_seen[2 * N + N];
static int g_nseen;

/* One side_stream exchange of n floats; appends what the consumer read to g_seen. */
static void *exchange(void *arg)
{
    int n = (int)(intptr_t)arg;
    scen_collect(scen_side_exchange(g_racy, n), 1, n, g_seen + g_nseen);
    g_nseen += n;
    return NULL;
}

static void run(int n)
{
    pthread_t t;
    if (pthread_create(&t, NULL, exchange, (void *)(intptr_t)n) || pthread_join(t, NULL))
        exit(2);
}

int main(int argc, char **argv)
{
    g_racy = scen_racy(argc, argv);
    run(N);
    fw_check(cudaDeviceReset(), "scenario", "cudaDeviceReset");
    run(2 * N);
    scen_verdict(g_seen, g_nseen, SCEN_VALUE);
    return 0;
}
