/* Shared by the scenario programs: mode parsing, the result line and the verdict line.
 *
 * Every scenario program takes one argument, `racy` or `correct`, runs its exchange once, and
 * prints exactly two lines on stdout: "result: <values>" and "verdict: correct" (the consumer
 * saw the producer's data) or "verdict: stale" (it did not). It exits 0 (2 on a CUDA error). */
#ifndef SCEN_H
#define SCEN_H

#include <cuda_runtime_api.h>

#include "fakefw.h"

/* 1 for "racy", 0 for "correct"; anything else prints usage and exits 2. */
int scen_racy(int argc, char **argv);

/* Prints the result line for the n values seen and the verdict (correct when every seen[i]
 * equals want). */
void scen_verdict(const float *seen, int n, float want);

/* Records an event on `from` and makes `to` wait for it (the correct twins' synchronization). */
void scen_order(cudaStream_t from, cudaStream_t to);

/* Records an event on stream `from` with `device` current (an event records only on a stream of
 * its own context, and a default-stream handle names the current device's stream), then makes
 * `to` wait for it with the calling thread's device current again (a stream may wait on an
 * event of another device). */
void scen_order_across(int device, cudaStream_t from, cudaStream_t to);

/* The start the two-device scenarios share: two devices (scen_devices), the fake MXNet on
 * streams of kind `producer` and the fake TVM on non-blocking ones; with device 0 current, the
 * held producer write (scen_held_write); then device 1 current for the export, the import and,
 * in the correct twin (`racy` 0), the program's own ordering of TVM's stream (made on device 1)
 * after the write. Returns the TVM array (a tvm_array *). */
void *scen_to_device1(fw_stream_kind producer, int racy, int n);

/* The producer side most scenarios share: an n-float array of the fake MXNet, zeroed and known
 * complete, then MXNet's stream held and SCEN_VALUE written on it (so the write cannot run before
 * scen_finish releases the stream). Returns the array (an mx_array *). */
void *scen_held_write(int n);

/* Settles, releases MXNet's stream, stores in seen[r * n + i] element i of read r of TVM array h
 * (reads 0 .. reads-1), and frees h. */
void scen_collect(void *h, int reads, int n, float *seen);

/* The ending most scenarios share: scen_collect, then the verdict of what the reads saw against
 * SCEN_VALUE. */
void scen_finish(void *h, int reads, int n);

/* The plain handover most scenarios end with: MXNet exports the n-float array a (an mx_array *),
 * TVM imports it, the program drops a, TVM reads it once on its stream, then scen_finish.
 * Returns the exit status (0, or 2 when an exchange call failed). */
int scen_handover(void *a, int n);

/* The handover the two-way scenarios start from: the fake MXNet (on non-blocking streams, as the
 * fake TVM) writes SCEN_VALUE into an n-float array and synchronizes, exports it (*t) and the fake
 * TVM imports it (*h). Returns the array (an mx_array *); exits 2 when an exchange call fails. */
void *scen_synced_handover(int n, DLManagedTensor **t, void **h);

/* The side_stream scenario's exchange of n floats (see s_side_stream.c), racy or correct, up to
 * the consumer's read: returns the TVM array (a tvm_array *) for scen_collect / scen_finish. */
void *scen_side_exchange(int racy, int n);

/* scen_side_exchange with its verdict. */
void scen_side_stream(int racy, int n);

/* The value the producer writes. */
#define SCEN_VALUE 42

#endif
