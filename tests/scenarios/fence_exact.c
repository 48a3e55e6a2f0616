/* The release fence waits for the consumer's access, not for what the consumer's stream does after
 * it (fix's after events). MXNet writes an array (known complete) and exports it; TVM imports it
 * and reads it on its stream, then makes that stream wait for an event on a held stream: later
 * consumer work that cannot run yet. TVM releases the tensor; MXNet's allocator hands the memory
 * to a new array, which MXNet overwrites on its stream. After settling, prints "reuse ran: 1" when
 * the overwrite ran (it waited for the read only) or 0 (it waits for the held work too); then
 * opens the held stream and prints the reads' result and verdict (scen.h).
 *
 *   fence_exact one|two-streams|devices
 * two-streams: TVM also reads the tensor on a second stream, which waits for the held work too;
 * devices: the consumer (its streams, the held stream and the event) is on device 1, the producer
 * on device 0 (exit 77 without a second device). Exits 2 on a CUDA error or a bad argument. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <stdio.h>
#include <string.h>

#define N 4

int main(int argc, char **argv)
{
    const char *v = argc == 2 ? argv[1] : "";
    int two = strcmp(v, "two-streams") == 0, devices = strcmp(v, "devices") == 0;
    if (!two && !devices && strcmp(v, "one") != 0) {
        fprintf(stderr, "usage: fence_exact one|two-streams|devices\n");
        return 2;
    }
    if (devices)
        scen_devices(2);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, SCEN_VALUE);
    mx_sync();
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t))
        return 2;
    if (devices)
        fw_check(cudaSetDevice(1), "fence_exact", "cudaSetDevice");
    if (TVMArrayFromDLPack(t, &h))
        return 2;
    cudaStream_t held, second = NULL;
    cudaEvent_t later;
    fw_check(cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking), "fence_exact", "stream");
    fw_check(cudaEventCreateWithFlags(&later, cudaEventDisableTiming), "fence_exact", "event");
    scen_hold(held);
    fw_check(cudaEventRecord(later, held), "fence_exact", "cudaEventRecord");
    tvm_read(h);
    fw_check(cudaStreamWaitEvent(tvm_stream(), later, 0), "fence_exact", "cudaStreamWaitEvent");
    if (two) {
        fw_check(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), "fence_exact", "stream");
        tvm_read_on(h, second);
        fw_check(cudaStreamWaitEvent(second, later, 0), "fence_exact", "cudaStreamWaitEvent");
    }
    tvm_release(h);
    if (devices)
        fw_check(cudaSetDevice(0), "fence_exact", "cudaSetDevice");
    mx_free(a);
    mx_array *c = mx_empty(N, kDLCUDA); /* a's block, from the cache */
    mx_fill(c, 7);
    scen_settle();
    printf("reuse ran: %d\n", cudaStreamQuery(mx_stream()) == cudaSuccess);
    scen_release(held);
    int reads = two ? 2 : 1;
    float seen[2 * N];
    for (int r = 0; r < reads; r++)
        for (int i = 0; i < N; i++)
            seen[r * N + i] = tvm_result(h, r, i);
    scen_verdict(seen, reads * N, SCEN_VALUE);
    tvm_free(h);
    mx_sync();
    mx_free(c);
    return 0;
}
