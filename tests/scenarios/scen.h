/* Shared by the scenario programs: mode parsing, the result line and the verdict line.
 *
 * Every scenario program takes one argument, `racy` or `correct`, runs its exchange once, and
 * prints exactly two lines on stdout: "result: <values>" and "verdict: correct" (the consumer
 * saw the producer's data) or "verdict: stale" (it did not). It exits 0 (2 on a CUDA error). */
#ifndef SCEN_H
#define SCEN_H

#include <cuda_runtime_api.h>

/* 1 for "racy", 0 for "correct"; anything else prints usage and exits 2. */
int scen_racy(int argc, char **argv);

/* Prints the result line for the n values seen and the verdict (correct when every seen[i]
 * equals want). */
void scen_verdict(const float *seen, int n, float want);

/* Records an event on `from` and makes `to` wait for it (the correct twins' synchronization). */
void scen_order(cudaStream_t from, cudaStream_t to);

#endif
