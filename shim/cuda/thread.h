/* The observer's per-thread state: everything the callback keeps for the calling thread, in one
 * block. The callback asks for the block once per call (dls_cuda_thread_self) and hands it to
 * what it calls, so a call reads the thread-local storage once, whatever it then does. */
#ifndef DLS_CUDA_THREAD_H
#define DLS_CUDA_THREAD_H

#include "cuda_api.h"
#include "ops.h"

#include <stdint.h>

/* The decoders' room for an operation's ranges and words (decode.h). */
#define DLS_SCRATCH_RANGES 256
#define DLS_SCRATCH_WORDS 1024

typedef struct {
    dls_cuda_range ranges[DLS_SCRATCH_RANGES];
    uint64_t words[DLS_SCRATCH_WORDS];
} dls_cuda_scratch;

/* A thread's latest resolutions, keyed by the arguments as passed and the generation,
 * direct-mapped by handle: a thread enqueues mostly on the few streams it used last (a producer's
 * and a consumer's), and these are asked before the per-thread cache of dls_cuda_stream_resolve.
 * The caller keeps them per thread (zeroed: none). */
#define DLS_CUDA_LATEST 4
typedef struct {
    struct {
        uintptr_t handle, ctx;
        int per_thread;
        uint64_t gen; /* 0: none */
        dls_cuda_stream s;
    } one[DLS_CUDA_LATEST];
} dls_cuda_stream_latest;

#define DLS_CUDA_OPEN_CALLS 4 /* driver calls a thread is inside that nesting keeps apart */

/* `work` is the work lane's decode of the thread's latest call: when `work_kept`, that of the
 * delivered ENTER of call (work_cbid, its correlation id, work_params), which the EXIT of the
 * same call delivers again instead of decoding it twice (these calls have no output parameter,
 * so both phases decode the same); `op` likewise for the op lane's event records and waits. Every delivery on the thread drops it first (a nested call
 * rewrites the scratch area). `latest` is the thread's latest stream resolutions (identity.h). */
typedef struct {
    int guarded;                        /* depth of the shim's guarded driver calls in progress (drv.h) */
    int delivering;                     /* a delivery to the policy is in progress */
    CUcontext current;                  /* during a delivery, the context current on the thread (the
                                         * callback's), NULL when not known (drv.h asks the driver) */
    uint32_t open[DLS_CUDA_OPEN_CALLS]; /* correlation ids of the driver calls the thread is inside */
    unsigned nopen;                     /* how many (more than DLS_CUDA_OPEN_CALLS: the rest are not kept) */
    int nested;                         /* the phase being delivered is of a nested call */
    int rt_depth;                       /* runtime calls in progress */
    const char *rt_name;                /* the outermost one's name */
    uint64_t tid;                       /* kernel thread id; 0 until the thread's first delivery */
    int work_kept;
    CUpti_CallbackId work_cbid;
    const void *work_params;
    dls_cuda_work work;
    int op_kept; /* the same for the op lane's event records and waits (inputs only) */
    CUpti_CallbackId op_cbid;
    const void *op_params;
    dls_cuda_op op;
    dls_cuda_stream_latest latest;
    dls_cuda_scratch *scratch; /* the decoders' room for ranges and words: dls_cuda_thread_scratch */
} dls_cuda_thread;

/* The calling thread's block (zeroed when the thread starts). */
dls_cuda_thread *dls_cuda_thread_self(void);

/* The decoders' scratch area of t, the calling thread's block: allocated at the thread's first
 * decode and freed at its exit (common/thread_block.h), so a thread that never calls CUDA does not
 * pay for its kilobytes at creation. NULL when memory is short (warned once): the thread's
 * operations with ranges or words are then conservative. */
dls_cuda_scratch *dls_cuda_thread_scratch(dls_cuda_thread *t);

#endif
