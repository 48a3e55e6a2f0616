/* Helpers of the scenario programs (see scen.h). */
#include <cuda_runtime_api.h>

#include "scen.h"

#include "fakefw.h"
#include "scen_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scen_racy(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "racy") == 0)
        return 1;
    if (argc == 2 && strcmp(argv[1], "correct") == 0)
        return 0;
    fprintf(stderr, "usage: %s racy|correct\n", argc ? argv[0] : "scenario");
    exit(2);
}

void *scen_synced_handover(int n, DLManagedTensor **t, void **h)
{
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(n, kDLCUDA);
    mx_fill(a, SCEN_VALUE);
    mx_sync();
    if (MXNDArrayToDLPack(a, t) || TVMArrayFromDLPack(*t, h))
        exit(2);
    return a;
}

void scen_verdict(const float *seen, int n, float want)
{
    int ok = 1;
    printf("result:");
    for (int i = 0; i < n; i++) {
        printf(" %g", seen[i]);
        ok &= seen[i] == want;
    }
    printf("\nverdict: %s\n", ok ? "correct" : "stale");
    fflush(stdout);
}

/* Exits (status 2) naming `what` when e is an error. */
static void ck(cudaError_t e, const char *what)
{
    fw_check(e, "scenario", what);
}

void scen_order(cudaStream_t from, cudaStream_t to)
{
    cudaEvent_t e;
    ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ck(cudaEventRecord(e, from), "cudaEventRecord");
    ck(cudaStreamWaitEvent(to, e, 0), "cudaStreamWaitEvent");
    ck(cudaEventDestroy(e), "cudaEventDestroy");
}

void scen_order_across(int device, cudaStream_t from, cudaStream_t to)
{
    int current;
    cudaEvent_t e;
    ck(cudaGetDevice(&current), "cudaGetDevice");
    ck(cudaSetDevice(device), "cudaSetDevice");
    ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ck(cudaEventRecord(e, from), "cudaEventRecord");
    ck(cudaSetDevice(current), "cudaSetDevice");
    ck(cudaStreamWaitEvent(to, e, 0), "cudaStreamWaitEvent");
    ck(cudaEventDestroy(e), "cudaEventDestroy");
}

void *scen_to_device1(fw_stream_kind producer, int racy, int n)
{
    scen_devices(2);
    mx_init(producer);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(n);
    cudaStream_t from = mx_stream();
    ck(cudaSetDevice(1), "cudaSetDevice");
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h)) {
        fprintf(stderr, "scenario: exchange failed\n");
        exit(2);
    }
    mx_free(a);
    if (!racy)
        scen_order_across(0, from, tvm_stream());
    return h;
}

void *scen_held_write(int n)
{
    mx_array *a = mx_empty(n, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    scen_hold(mx_stream());
    mx_fill(a, SCEN_VALUE);
    return a;
}

void scen_collect(void *h, int reads, int n, float *seen)
{
    scen_settle();
    scen_release(mx_stream());
    for (int r = 0; r < reads; r++)
        for (int i = 0; i < n; i++)
            seen[r * n + i] = tvm_result(h, r, i);
    tvm_free(h);
}

void scen_finish(void *h, int reads, int n)
{
    float *seen = calloc((size_t)reads * (size_t)n, sizeof *seen);
    if (!seen)
        exit(2);
    scen_collect(h, reads, n, seen);
    scen_verdict(seen, reads * n, SCEN_VALUE);
    free(seen);
}

void *scen_side_exchange(int racy, int n)
{
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(n);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        exit(2);
    mx_free(a);
    if (!racy)
        scen_order(mx_stream(), tvm_stream());
    tvm_read(h);
    return h;
}

void scen_side_stream(int racy, int n)
{
    scen_finish(scen_side_exchange(racy, n), 1, n);
}

int scen_handover(void *a, int n)
{
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    tvm_read(h);
    scen_finish(h, 1, n);
    return 0;
}
