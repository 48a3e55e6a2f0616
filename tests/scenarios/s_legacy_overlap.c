/* Scenario legacy_overlap: a legacy-stream call of one thread overlaps the producer's write of
 * another, so the driver enqueues it first, though it returns after the write (the shape of the
 * stale reads seen with eight CuPy-like threads on the legacy stream and blocking streams). The
 * producer writes on a blocking stream while thread B's legacy cudaMemsetAsync is in the driver;
 * the consumer reads on a blocking stream, behind that legacy operation. The legacy operation
 * does not wait for the write (it came first), so nothing orders the read after the write; in
 * the correct twin the program orders the consumer's stream after the write itself. Another
 * exchange is live throughout, so every call's ENTER is seen (the overlap, not a late horizon,
 * is what leaves the order unknown). */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 4

static float *g_scratch;
static _Atomic pid_t g_b;

/* Thread B: one legacy operation that returns only when the main thread lets it. */
static void *legacy_caller(void *arg)
{
    (void)arg;
    g_b = (pid_t)syscall(SYS_gettid);
    scen_pause_next_call("cuMemsetD8Async"); /* the driver call beneath cudaMemsetAsync */
    fw_check(cudaMemsetAsync(g_scratch, 0, sizeof(float), cudaStreamLegacy), "scen", "cudaMemsetAsync");
    return NULL;
}

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_BLOCKING);
    tvm_init(FW_BLOCKING);
    fw_check(cudaMalloc((void **)&g_scratch, sizeof(float)), "scen", "cudaMalloc");
    /* An unrelated exchange stays live: memory is watched, every ENTER is delivered. */
    mx_array *other = mx_empty(N, kDLCUDA);
    DLManagedTensor *ot;
    void *oh;
    if (MXNDArrayToDLPack(other, &ot) || TVMArrayFromDLPack(ot, &oh))
        return 2;
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    pthread_t b;
    if (pthread_create(&b, NULL, legacy_caller, NULL))
        return 2;
    while (!g_b)
        ;
    scen_await_paused(g_b); /* B's legacy operation is enqueued, its call not returned */
    scen_hold(mx_stream());
    mx_fill(a, SCEN_VALUE); /* enqueued after B's operation, returns before it */
    scen_resume_call(g_b);
    pthread_join(b, NULL);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    if (!racy)
        scen_order(mx_stream(), tvm_stream());
    tvm_read(h); /* behind B's legacy operation on a blocking stream */
    scen_finish(h, 1, N);
    tvm_free(oh);
    mx_free(other);
    return 0;
}
