/* The stream of CUDA operations the observer hands to the policy layer.
 *
 * The observer (shim/cuda) turns every CUPTI driver-API callback it handles into one operation,
 * delivered twice: at DLS_PHASE_ENTER, before the driver enqueues the work (the receiver may
 * inject waits then, through drv.h), and at DLS_PHASE_EXIT, after the call returned (with its
 * CUresult). Both phases carry the same decoded content, except that a stream creation knows its
 * stream only at EXIT. Each call reaches the policy one way, chosen by its row in calls.def:
 * launches, linear asynchronous copies and sets as a dls_cuda_work (the work lane), the calls
 * that teach a model nothing as a bare call (the lifetime lane), every other call as a dls_cuda_op
 * (the op lane), each to its receiver in the table the policy registers (dls_cuda_receivers).
 *
 * One operation, one report: the driver domain is the authority for what happened. When the
 * call was made by the CUDA runtime, the runtime call only annotates the driver operation (`api`
 * names the runtime function), so a cudaMemcpyAsync and the cuMemcpyAsync beneath it are one
 * operation.
 *
 * Everything an op or a work points to (ranges, words, names, the stream) is valid only during
 * the receiver's call. The receivers run on the thread that made the CUDA call, inside a CUPTI
 * callback: they must not block on other CUDA threads, and every CUDA call they make must go
 * through drv.h. */
#ifndef DLS_CUDA_OPS_H
#define DLS_CUDA_OPS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    DLS_OP_LAUNCH = 0,        /* kernel launch, every form (ranges: none; words: the arguments) */
    DLS_OP_MEMCPY,            /* copy: a read range (source) and a write range (destination) */
    DLS_OP_MEMSET,            /* set: one write range */
    DLS_OP_HOST_FUNC,         /* cuLaunchHostFunc / cuStreamAddCallback: host code on a stream */
    DLS_OP_GRAPH_LAUNCH,      /* graph launch of `exec`: always conservative (may touch anything) */
    DLS_OP_EVENT_CREATE,      /* event known at EXIT (event_id fresh) */
    DLS_OP_EVENT_RECORD,      /* event recorded on stream */
    DLS_OP_EVENT_DESTROY,     /* event id retired after EXIT */
    DLS_OP_STREAM_WAIT_EVENT, /* stream waits for the event's last record */
    DLS_OP_EVENT_SYNC,        /* host waits for the event */
    DLS_OP_EVENT_QUERY,       /* host polls the event; result 0 (CUDA_SUCCESS) = complete */
    DLS_OP_STREAM_SYNC,       /* host waits for the stream */
    DLS_OP_STREAM_QUERY,      /* host polls the stream; result 0 = all its work complete */
    DLS_OP_CTX_SYNC,          /* host waits for every stream of the context */
    DLS_OP_STREAM_CREATE,     /* stream known at EXIT, with its kind */
    DLS_OP_STREAM_DESTROY,    /* stream id retired after EXIT */
    DLS_OP_FREE, /* cuMemFree / cuMemFreeHost (host-ordered) or cuMemFreeAsync (on stream); freeing NULL: no range, not conservative */
    DLS_OP_CAPTURE_BEGIN,      /* the stream starts capturing into a graph: its later work is recorded, not run */
    DLS_OP_CAPTURE_END,        /* the stream's capture ends (whatever the result: it no longer captures);
                             `graph` is the graph it made (EXIT, 0 when none) */
    DLS_OP_GRAPH_INSTANTIATE,  /* `exec` is made from `graph` (at a successful EXIT; else both 0) */
    DLS_OP_GRAPH_EXEC_CHANGED, /* `exec` is destroyed or updated from another graph */
    DLS_OP_GRAPH_DESTROY,      /* `graph` is destroyed */
    DLS_OP_KIND_COUNT
} dls_op_kind;

typedef enum { DLS_PHASE_ENTER = 0, DLS_PHASE_EXIT = 1 } dls_op_phase;

typedef enum {
    DLS_STREAM_NONE = 0,     /* the op has no stream */
    DLS_STREAM_LEGACY,       /* the legacy default stream (NULL, CU_STREAM_LEGACY) */
    DLS_STREAM_PER_THREAD,   /* the per-thread default stream (CU_STREAM_PER_THREAD, NULL in _ptsz/_ptds calls) */
    DLS_STREAM_BLOCKING,     /* created without CU_STREAM_NON_BLOCKING: syncs with the legacy stream */
    DLS_STREAM_NON_BLOCKING, /* created with CU_STREAM_NON_BLOCKING */
    DLS_STREAM_UNKNOWN,      /* a stream whose flags could not be read */
} dls_stream_kind;

/* A stream as the driver names it. `id` is the driver's stream id (cuStreamGetId: unique in the
 * process, never reused, so it is the identity to key models on); `resolved` is 0 when it could
 * not be read (then id is 0 and only handle/kind are meaningful). */
typedef struct {
    uint64_t id;
    uintptr_t handle; /* the handle as passed by the caller (0, 0x1, 0x2 or a real CUstream) */
    uint64_t ctx_id;  /* cuCtxGetId of the stream's context; 0 when unknown */
    uintptr_t ctx;    /* CUcontext of the stream */
    int device;       /* ordinal of the device of the stream's context; -1 when unknown */
    dls_stream_kind kind;
    int resolved;
} dls_cuda_stream;

#define DLS_ACCESS_READ 1u
#define DLS_ACCESS_WRITE 2u

/* A byte range [addr, addr + len) the op reads or writes (unified virtual addresses: device and
 * pinned or pageable host memory alike). 2D/3D copies and sets give their bounding range. */
typedef struct {
    uintptr_t addr;
    size_t len;
    unsigned access; /* DLS_ACCESS_READ or DLS_ACCESS_WRITE */
} dls_cuda_range;

/* dls_cuda_op.flags */
#define DLS_OPF_CONSERVATIVE 1u /* what the op touches is not known: treat it as touching anything in its context */
#define DLS_OPF_ASYNC 2u        /* an *Async / stream-taking form: not ordered with the host */
#define DLS_OPF_HAS_STREAM 4u   /* `stream` is meaningful */
#define DLS_OPF_HAS_EVENT 8u    /* `event` / `event_id` are meaningful */

typedef struct {
    dls_op_kind kind;
    dls_op_phase phase;
    int result;              /* EXIT: the call's CUresult; ENTER: 0 */
    unsigned flags;          /* DLS_OPF_* */
    const char *api;         /* the runtime function when the runtime made the call, else the driver function */
    const char *name;        /* launches: the kernel's symbol name (may be NULL); else NULL */
    uint64_t tid;            /* kernel thread id of the calling thread */
    uint32_t correlation_id; /* CUPTI correlation id of the driver call */
    int nested;              /* the thread was inside another driver call of its own when this one began (a
                   call made from a callback of that call, say): it began after that call did */
    dls_cuda_stream stream;  /* with DLS_OPF_HAS_STREAM; sync copies and sets: the default stream they run on */
    uintptr_t event;         /* with DLS_OPF_HAS_EVENT: the CUevent */
    uint64_t event_id;       /* stable per event lifetime: a handle reused after destroy gets a new id */
    uintptr_t ctx;           /* CTX_SYNC: the context synchronized (the current one when the call names none);
                                FREE: the allocation's context, which a synchronous free waits for (0: unknown) */
    uintptr_t graph;         /* CAPTURE_END, GRAPH_INSTANTIATE, GRAPH_DESTROY: the CUgraph */
    uintptr_t exec;          /* GRAPH_LAUNCH, GRAPH_INSTANTIATE, GRAPH_EXEC_CHANGED: the CUgraphExec */
    const dls_cuda_range *ranges;
    uint32_t nranges;
    const uint64_t *words; /* launches: aligned 8-byte words of the argument buffer, in order */
    uint32_t nwords;
} dls_cuda_op;

/* A launch, copy or set as the work lane delivers it (dls_cuda_receivers.work): what the call
 * enqueues and where, decoded from its parameters alone, and its stream resolved. These calls
 * reach the policy only this way, never as a dls_cuda_op; the multi-device cooperative launch
 * (one operation per device), the N-D and batched copies and the synchronous copies are
 * dls_cuda_op. The kinds and flags are those such an op would have without DLS_OPF_HAS_STREAM:
 * a work always has a stream. Ranges are inline; words, names and the stream point into the
 * observer's per-thread state and are valid only during the receiver's call. */
typedef struct {
    dls_op_kind kind;              /* DLS_OP_LAUNCH, DLS_OP_MEMCPY or DLS_OP_MEMSET */
    dls_op_phase phase;            /* ENTER (while the gate is open) or EXIT */
    int result;                    /* EXIT: the call's CUresult; ENTER: 0 */
    unsigned flags;                /* DLS_OPF_ASYNC, DLS_OPF_CONSERVATIVE */
    const char *api;               /* as in dls_cuda_op */
    const char *name;              /* launches: the kernel's symbol name (may be NULL); else NULL */
    uint64_t tid;                  /* kernel thread id of the calling thread */
    uint32_t correlation_id;       /* CUPTI correlation id of the driver call */
    int nested;                    /* as in dls_cuda_op */
    const dls_cuda_stream *stream; /* the stream it enqueues on, resolved (resolved 0: not known) */
    uintptr_t handle;              /* the stream as passed */
    int per_thread;                /* a _ptsz entry point (a NULL handle names the per-thread stream) */
    uint32_t nranges, nwords;
    dls_cuda_range ranges[2]; /* copies: the read range, then the write range; sets: one */
    const uint64_t *words;    /* launches: as in dls_cuda_op */
} dls_cuda_work;

/* What the policy registers with the observer: a receiver per lane, and the ENTER gate. The
 * receivers run on the CUDA-calling thread (see the file comment); every one must be set but
 * `begins`. */
typedef struct {
    /* The op lane: every call that is neither of the work lane nor of the lifetime lane. */
    void (*op)(const dls_cuda_op *op);
    /* The work lane: the ENTER (while the gate is open) and the EXIT of every launch, copy or set
     * the lane decodes. */
    void (*work)(const dls_cuda_work *w);
    /* The lifetime lane: a stream's creation, and the destruction of a stream that no model can
     * hold (never resolved: identity.h, dls_cuda_stream_resolve_destroyed), teach a model
     * nothing. They are not decoded into operations: the receiver hears only that a call of the
     * thread returned, and whether it is nested (its ENTER would tell no more: what a receiver
     * learns at a call's ENTER, that the thread is in a call, its EXIT tells later). With
     * DLSYNC_DEBUG_OPS on they are operations, so that they are printed; the destruction of a
     * resolved stream always is. */
    void (*lifetime)(int nested);
    /* Optional (NULL: none): the ENTER of every call the observer handles (cbids.h), gated or
     * not, told before it decodes anything or makes a call of its own (identity.h) -- as near to
     * the call's begin as the observer sees -- with its correlation id and whether it is nested. */
    void (*begins)(uint32_t correlation_id, int nested);
    /* The ENTER gate: the ENTER of work that only enqueues on a stream (launches, async copies,
     * sets, graph launches: cbids.h, STREAM_WORK) is delivered only while *watching is nonzero
     * (or DLSYNC_DEBUG_OPS is on); its EXIT always is. The policy's flag says whether any memory
     * is watched: while none is, such an ENTER has nothing to order or check. NULL: every ENTER
     * is delivered. */
    const atomic_int *watching;
} dls_cuda_receivers;

/* Registers the receivers: once, at start-up (tests register their own in turn). The table and
 * what it points to must stay valid for the life of the process: a delivery in progress may
 * still use the table a later call replaced. NULL: calls are decoded, and printed with
 * DLSYNC_DEBUG_OPS, but delivered to nobody (the default). */
void dls_cuda_set_receivers(const dls_cuda_receivers *r);

/* Stable lower-case names, used in logs: "launch", "memcpy", ... and "legacy", "per-thread",
 * "blocking", "non-blocking", "unknown", "none". Never NULL. */
const char *dls_cuda_op_kind_name(dls_op_kind k);
const char *dls_cuda_stream_kind_name(dls_stream_kind k);

/* Writes a one-line description of op into buf (size n, always NUL-terminated, no newline):
 * "op <enter|exit> <kind> api=<api> stream=<id>/<kind> event=<id> ranges=<n> words=<n>
 * conservative=<0|1> result=<r> name=<kernel>". Returns the length written. */
size_t dls_cuda_op_format(const dls_cuda_op *op, char *buf, size_t n);

/* The same line for work w (event=0): what dls_cuda_op_format writes for the op of the same
 * call. */
size_t dls_cuda_work_format(const dls_cuda_work *w, char *buf, size_t n);

#endif
