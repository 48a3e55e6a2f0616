/* cudasim.h: test-only controls of the CUDA simulator, exported from its libcuda.so.1.
 *
 * The simulator (libcuda.so.1, libcudart.so.13, libcupti.so.13 built from tests/cudasim) stands in
 * for CUDA on machines without a GPU. A "kernel" is a host function registered here with its
 * parameter layout; the handle it returns is a CUfunction usable with cuLaunchKernel(Ex),
 * cudaLaunchKernel(ExC) (as `func`) and the param-info calls (cuFuncGetParamInfo,
 * cuKernelGetParamInfo after a cast to CUkernel, cudaFuncGetParamInfo).
 * Gates, durations and forced errors make orderings and failures reproducible without sleeps.
 * Programs using this header link with -lcuda from the simulator's build folder. */
#ifndef CUDASIM_H
#define CUDASIM_H

#include <stddef.h>
#include <sys/types.h>
#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel body: called once per launch on the stream's worker thread with `args[i]` pointing at
 * a private copy of parameter i (copied when the launch was enqueued). */
typedef void (*cudasim_kernel_fn)(void **args);

/* Registers a kernel named `name` (copied) whose body is `fn`, with `nparams` parameters of the
 * given byte sizes (laid out at their natural alignment: sizes 1, 2, 4 align to themselves, larger
 * ones to 8). Returns a handle valid for the rest of the process, or NULL when name or fn is NULL,
 * nparams > 0 with no sizes, or a size is 0. Registering a name again adds a new kernel. */
CUfunction cudasim_register_kernel(const char *name, cudasim_kernel_fn fn, unsigned nparams, const size_t *param_sizes);

/* Makes every later launch of the kernel(s) named `name` take `usec` microseconds on its stream
 * (after the body ran), so overlapping work is observable. 0 restores instant kernels.
 * Returns 0, or -1 when no kernel has that name. */
int cudasim_set_kernel_duration(const char *name, unsigned usec);

/* Closes the gate of a stream: it finishes the operation it is running, then starts nothing new
 * until cudasim_stream_release. Work can still be enqueued. Accepts a stream handle, NULL or
 * CU_STREAM_LEGACY (the current context's legacy stream) and CU_STREAM_PER_THREAD (the calling
 * thread's per-thread stream). Needs a current context for the special handles. Host syncs
 * that cover a held stream (including cuMemFree / cudaFree, which wait for the context's work)
 * block until it is released. Returns 0, or -1 for an unknown handle or no current context. */
int cudasim_stream_hold(CUstream stream);

/* Opens the gate closed by cudasim_stream_hold (same handle rules). Returns 0 or -1. */
int cudasim_stream_release(CUstream stream);

/* Opens every closed gate, whichever thread closed it (CU_STREAM_PER_THREAD names the calling
 * thread's stream, so only this call can open another thread's per-thread stream, or the gate of
 * a stream destroyed with work pending). */
void cudasim_release_all(void);

/* Returns once every stream worker is quiescent: idle, held, or blocked on an unmet dependency
 * (an event wait or a legacy-stream implicit wait). Work that can run has run when it returns, so
 * a test can hold a producer, enqueue a consumer on another stream, settle, and know whether the
 * consumer already ran (and what it read) before releasing the producer. Host functions and kernel
 * bodies that block forever make it block forever. */
void cudasim_settle(void);

/* Number of threads now blocked in a host synchronization (stream, event or context
 * synchronize, a synchronous copy, cuMemFree / cudaFreeHost): such a thread has passed the
 * call's ENTER callback and waits for work submitted before it began (work submitted meanwhile,
 * by any thread, is not waited for). Lets a test act while another thread synchronizes. */
unsigned cudasim_host_waiters(void);

/* 1 when the thread with kernel thread id `tid` is blocked in a host synchronization (as counted
 * by cudasim_host_waiters, including the implicit ones of cuMemFree / cudaFreeHost and of lazy
 * loading), else 0. Lets a test harness open its gates exactly when a thread would otherwise
 * wait for them forever. */
int cudasim_thread_in_host_wait(pid_t tid);

/* The next call of the API function `function_name` (matched as cudasim_call_count does) returns
 * `err` without doing anything; its ENTER and EXIT callbacks still fire. For runtime functions
 * `err` is used as a cudaError_t. Several pending failures are consumed in order. */
void cudasim_fail_next(const char *function_name, CUresult err);

/* Makes every later API call pause for a random moment (none, a yield, or a sleep of up to
 * max_usec microseconds; capped at 100000) after its ENTER callback and before its EXIT callback,
 * so that the calls of threads running at the same time overlap and return in every order. 0
 * turns it off. CUDASIM_JITTER_US=N sets it at start.
 * Each thread draws its pauses from its own generator. Without a seed it is seeded by the
 * thread's id (so runs differ). With CUDASIM_SEED=N (decimal, or 0x hex) at start, or after
 * cudasim_set_seed(N), threads are numbered 1, 2, ... in the order of their first API call, and
 * thread k's sequence of pauses is a function of N and k alone: a replay of a program with the
 * same seed draws the same pauses for each logical thread, as long as its threads make their
 * first calls in the same order (let one thread call before starting the next, for example).
 * Where the pauses fall still depends on the calls each thread makes. */
void cudasim_set_jitter(unsigned max_usec);

/* Seeds the jitter (as CUDASIM_SEED=seed does at start, which it overrides): thread numbers
 * start again from 1, and each thread takes its number, and restarts its sequence, at its next
 * API call. Call it while no other thread is making calls. */
void cudasim_set_seed(unsigned long long seed);

/* The calling thread's most recent jitter draw (a 32-bit value the pause is chosen from; 0 before
 * its first draw since its number was taken). Lets a test compare the sequences of two runs. */
unsigned cudasim_jitter_last_draw(void);

/* The calling thread's next call of the API function `function_name` (matched as
 * cudasim_call_count does), once it has done its work (enqueued it, for stream work), waits
 * before its EXIT callback until another thread calls cudasim_resume_exit with this thread's
 * kernel thread id: a call that returns late, after calls other threads made later. */
void cudasim_pause_next_exit(const char *function_name);

/* 1 when thread `tid` waits in a paused call (cudasim_pause_next_exit), else 0. */
int cudasim_exit_paused(pid_t tid);

/* Lets thread tid's paused call go on to its EXIT callback (nothing when it is not paused). */
void cudasim_resume_exit(pid_t tid);

/* Number of calls of an API function since start or the last cudasim_reset_counts, counting
 * calls made by the runtime and from inside callbacks. `function_name` matches the callback
 * function name exactly, or a versioned/per-thread variant of it: "cuMemAlloc" counts
 * cuMemAlloc_v2, "cuStreamSynchronize" counts cuStreamSynchronize and cuStreamSynchronize_ptsz,
 * "cudaMemcpy" counts cudaMemcpy_v3020 and cudaMemcpy_ptds_v7000. */
unsigned long cudasim_call_count(const char *function_name);

/* Sets every call count to zero and drops pending cudasim_fail_next failures. */
void cudasim_reset_counts(void);

/* Writes a note line (N) into the trace with printf's formatting of fmt (line breaks in the text
 * become spaces), stamped in order with the calls and operations around it, so a test can mark
 * the trace. Does nothing when tracing is off. The trace (format: tests/cudasim/trace.h) is on
 * when CUDASIM_TRACE=PATH is set as the program starts: the file PATH (%p is replaced by the pid)
 * then records every API call's begin and end, every stream, operation (with its memory
 * accesses), event record and wait, dependency, host wait, allocation and free. */
void cudasim_trace_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What a program's probe of the simulated CUPTI is called at: the library being loaded (inside
 * dlopen), a cuptiSubscribe(_v2), a cuptiEnableCallback (with its enable, domain and cbid). */
typedef enum { CUDASIM_PROBE_LOAD, CUDASIM_PROBE_SUBSCRIBE, CUDASIM_PROBE_ENABLE } cudasim_probe_site;

/* A program that defines `void cudasim_cupti_probe(cudasim_probe_site, unsigned enable, unsigned
 * domain, unsigned cbid)` where dlsym(RTLD_DEFAULT) finds it (link it with -rdynamic) has it
 * called by libcupti.so.13 on the calling thread at each such site, before the call does
 * anything: a test sees there what the caller holds. Resolved when libcupti.so.13 is loaded. */
typedef void (*cudasim_cupti_probe_fn)(cudasim_probe_site site, unsigned enable, unsigned domain, unsigned cbid);

#ifdef __cplusplus
}
#endif
#endif
