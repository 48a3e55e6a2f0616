/* The kernels and test controls the scenarios and fake frameworks use, behind one small
 * interface so the same sources run on the CUDA simulator (scen_backend_sim.c) and on a real
 * GPU (a CUDA backend compiled with nvcc, where hold/release/settle do nothing and the writer
 * kernel is slow enough for the race to show).
 *
 * All kernels work on `n` floats and are launched on `stream` with the CUDA runtime; errors
 * make the process print a line and exit 2 (a scenario cannot continue without its kernels). */
#ifndef SCEN_BACKEND_H
#define SCEN_BACKEND_H

#include <cuda_runtime_api.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* p[i] = value for i < n. */
void scen_write(cudaStream_t stream, float *p, int n, float value);

/* dst[i] = src[i] for i < n (the consumer's "read"). */
void scen_read(cudaStream_t stream, const float *src, float *dst, int n);

/* The same read, but src and dst travel inside a large parameter block passed by value, so a
 * tool scanning the launch's arguments cannot find them (it must be conservative). */
void scen_read_opaque(cudaStream_t stream, const float *src, float *dst, int n);

/* Makes `n` devices usable by the scenario: asks the simulator for n devices (CUDASIM_DEVICES,
 * unless set), or on a GPU enables peer access among the first n, so a kernel on one device can
 * read another's memory. Call before any other CUDA call. When fewer than n devices (or no peer
 * access) are available, prints "skip: <why>" and exits 77. Leaves device 0 current. */
void scen_devices(int n);

/* Exit status of a scenario that cannot run here (see scen_devices). */
#define SCEN_SKIP 77

/* Test control: the stream starts nothing new until scen_release (simulator gate; no-op on a
 * GPU). A host wait on a held stream does not deadlock: the backend opens the gates when the
 * thread that closed one is blocked in a host synchronization (or between scen_host_blocking(1)
 * and (0)) outside scen_settle. */
void scen_hold(cudaStream_t stream);

/* Opens the gate of scen_hold; a default-stream handle (0, cudaStreamLegacy, cudaStreamPerThread)
 * names the stream of the device that was current at scen_hold, whichever is current now. */
void scen_release(cudaStream_t stream);

/* Returns once all work that can run has run (simulator; on a GPU: nothing). */
void scen_settle(void);

/* on = 1: the calling thread is about to block on the host until GPU work completes, by a path the
 * simulator cannot see (a host function's signal): the gate watchdog treats it as a host
 * synchronization; on = 0: it no longer blocks. Nothing on a GPU. */
void scen_host_blocking(int on);

/* Returns 0 once another thread is blocked in a host synchronization, past its start, or -1
 * when none was after 10 s (simulator; on a GPU: 0 after 100 ms). The caller stays runnable
 * meanwhile. */
int scen_await_host_sync(void);

/* Test control: the calling thread's next call of the CUDA driver function `driver_function`,
 * once enqueued, returns only after scen_resume_call(its thread id) (simulator: its EXIT
 * callback waits, so the call returns after calls other threads make meanwhile; on a GPU:
 * nothing). */
void scen_pause_next_call(const char *driver_function);

/* Returns once thread tid waits in its paused call (on a GPU: after 100 ms, its call made). */
void scen_await_paused(pid_t tid);

/* Lets thread tid's paused call return (on a GPU: nothing). */
void scen_resume_call(pid_t tid);

#ifdef __cplusplus
}
#endif
#endif
