/* sim.h: internal state and helpers shared by the sources of the simulated libcuda.so.1.
 *
 * Models: devices with one primary context each, streams executed in order by one worker thread
 * each (started at the stream's first work to run), dependencies between stream positions (event
 * waits and the legacy default stream's implicit synchronization), a range-tracking allocator,
 * and registered host-function kernels.
 * Stream capture into graphs and graph launch are modelled in drv_graph.c / drv_capture.c (see
 * there). Does not model: non-primary contexts, graphs built node by node, modules, arrays, peer
 * access enablement (every device reads all memory), unified memory migration, priorities'
 * effect on scheduling.
 *
 * Locking: one global mutex (dls_sim_lock) guards all scheduler state; API callbacks are never
 * reported while it is held. The trace's mutex (trace.h) nests inside it, never the reverse. Everything here is hidden from the library's exports. */
#ifndef CUDASIM_SIM_H
#define CUDASIM_SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
/* generated_cuda_meta.h also describes the pre-3.2 entry points, whose types cuda.h declares
 * only for the driver's own build. It uses the structs only through pointers, so incomplete
 * types with cuda.h's tags suffice; CUdeviceptr_v1 is cuda.h's own definition. */
typedef unsigned int CUdeviceptr_v1;
typedef struct CUDA_MEMCPY2D_v1_st CUDA_MEMCPY2D_v1;
typedef struct CUDA_MEMCPY3D_v1_st CUDA_MEMCPY3D_v1;
typedef struct CUDA_ARRAY_DESCRIPTOR_v1_st CUDA_ARRAY_DESCRIPTOR_v1;
typedef struct CUDA_ARRAY3D_DESCRIPTOR_v1_st CUDA_ARRAY3D_DESCRIPTOR_v1;
#include <generated_cuda_meta.h>
#include "cudasim_hook.h"

#pragma GCC visibility push(hidden)

#define SIM_MAX_DEVICES 4
#define SIM_MAGIC_CTX 0x43545853u
#define SIM_MAGIC_STREAM 0x5354524du
#define SIM_MAGIC_EVENT 0x45564e54u
#define SIM_MAGIC_FUNC 0x46554e43u
#define SIM_MAGIC_GRAPH 0x47524148u
#define SIM_MAGIC_EXEC 0x47455845u

/* 1 in the per-thread-default-stream build of a source (the _ptsz / _ptds exports). */
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define SIM_PTDS 1
#else
#define SIM_PTDS 0
#endif

enum dls_sim_stream_kind { SIM_STREAM_USER, SIM_STREAM_LEGACY, SIM_STREAM_PER_THREAD };
/* SIM_OP_EXT_WAIT exists only in graphs: an external event wait node (CU_EVENT_WAIT_EXTERNAL),
 * which waits for the event's most recent record as of the graph's launch. */
enum dls_sim_op_kind {
    SIM_OP_MARK,
    SIM_OP_KERNEL,
    SIM_OP_COPY,
    SIM_OP_SET8,
    SIM_OP_SET32,
    SIM_OP_HOSTFN,
    SIM_OP_EXT_WAIT
};

struct CUctx_st {
    uint32_t magic;
    int dev;
    _Atomic uint32_t uid; /* cuCtxGetId; a reset makes it a new one */
    int refs;
    struct CUstream_st *legacy;
    struct CUstream_st *streams; /* every stream of the context, linked by next_in_ctx */
    struct CUevent_st *events;   /* its live events, linked by next_in_ctx (scheduler lock) */
};

/* "Stream s has completed its operation number seq." */
typedef struct {
    struct CUstream_st *s;
    uint64_t seq;
} dls_sim_dep;

/* What a marker operation stands for (the trace's kind: mark, record or wait). */
enum dls_sim_mark_role { SIM_ROLE_MARK, SIM_ROLE_RECORD, SIM_ROLE_WAIT };

/* A memory range a kernel may read and write (traced kernels only). */
typedef struct {
    uintptr_t addr;
    size_t len;
} dls_sim_access;

typedef struct dls_sim_op {
    struct dls_sim_op *next;
    uint64_t seq;
    uint64_t gseq; /* its place in the order of all enqueues, on all streams */
    int kind;
    int role; /* SIM_OP_MARK: enum dls_sim_mark_role (u.wait.e is the event of a record or wait) */
    unsigned ndeps;
    dls_sim_dep *deps;
    /* The trace's view (trace.h): the op's id, the graph exec and node a launch enqueued it for
     * (gexec 0 otherwise), and a kernel's pointer arguments' ranges. */
    unsigned long long id, gexec;
    unsigned gnode;
    unsigned nacc;
    dls_sim_access *acc;
    union {
        struct {
            struct CUfunc_st *f;
            void **args;
            unsigned char *buf;
        } k;
        struct {
            void *dst;
            const void *src;
            size_t n;
        } copy;
        struct {
            void *dst;
            unsigned value;
            size_t n;
        } set;
        struct {
            CUhostFn fn;
            void *user;
        } host;
        struct {
            struct CUevent_st *e;
        } wait;
    } u;
} dls_sim_op;

/* A capture sequence in progress on its origin stream (guarded by the scheduler lock). */
typedef struct {
    struct CUgraph_st *graph; /* the nodes captured so far */
    CUstreamCaptureMode mode;
    unsigned long long id; /* unique per capture sequence, never 0 */
    pthread_t thread;      /* the thread that began it */
    int invalidated;       /* an error invalidated it: EndCapture fails and returns no graph */
} dls_sim_capture;

/* A graph: captured nodes in capture order (a single-stream capture is a chain). */
struct CUgraph_st {
    uint32_t magic;
    dls_sim_op *head, *tail;
    unsigned nnodes;
};

/* An executable graph: its own copy of the nodes, taken at instantiation. */
struct CUgraphExec_st {
    uint32_t magic;
    unsigned long long id; /* never reused (the trace's exec id) */
    dls_sim_op *head;
    unsigned nnodes;
};

/* A stream lives while something refers to it (drv_lifetime.c): a destroyed stream's worker
 * drains its queue and exits, and the stream is reclaimed once no dependency, event or host
 * waiter refers to it either. */
struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    int kind;
    unsigned flags;
    int priority;
    unsigned long long id;
    uint64_t submitted, completed;
    uint64_t running_gseq; /* the gseq of the operation running (while `running`) */
    unsigned refs;         /* references (drv_lifetime.c) */
    dls_sim_op *head, *tail;
    int running, held, destroyed;
    int started;          /* its worker runs (started at its first work to run) */
    pthread_cond_t cv;    /* the stream's worker waits on it for work it can start */
    dls_sim_capture *cap; /* non-NULL while the stream is capturing */
    struct CUstream_st *next_in_ctx;
    struct CUstream_st *next_all; /* the list of every stream not reclaimed */
};

struct CUevent_st {
    uint32_t magic;
    unsigned flags;
    struct CUctx_st *ctx;  /* the context current at creation: records need a stream of it */
    uint32_t ctx_uid;      /* ctx's uid then: after a reset of ctx the event is gone */
    unsigned long long id; /* never reused (the trace's event id) */
    struct CUevent_st *next_in_ctx;
    struct CUstream_st *s; /* NULL until first recorded; holds a reference to it */
    uint64_t seq;
    unsigned long long cap_id; /* last recorded into capture sequence cap_id (0: recorded for real) */
};

struct CUfunc_st {
    uint32_t magic;
    char *name;
    void (*fn)(void **args);
    unsigned nparams;
    size_t *sizes, *offsets;
    size_t argbytes;
    unsigned duration_us;          /* guarded by the scheduler lock */
    struct dls_sim_loaded *loaded; /* contexts the kernel was loaded in (lazy loading; scheduler lock) */
    struct CUfunc_st *next;
};

/* Scheduler lock. */
void dls_sim_lock(void);
void dls_sim_unlock(void);

/* --- contexts (drv_init.c) --- */
/* Non-zero once cuInit succeeded. */
int dls_sim_initialized(void);
/* The calling thread's current context, or NULL. */
struct CUctx_st *dls_sim_current_ctx(void);

/* --- stream lifetimes (drv_lifetime.c) --- */
/* Creates a stream of `ctx` (its worker starts at its first work), holding its handle's
 * reference; reports nothing. NULL when out of memory. */
struct CUstream_st *dls_sim_stream_new(struct CUctx_st *ctx, int kind, unsigned flags, int prio);
/* Marks a stream destroyed and drops its handle's reference: it finishes queued work, its worker
 * (if started) exits, and it is reclaimed when nothing refers to it. Once per stream. */
void dls_sim_stream_retire(struct CUstream_st *s);
/* Resolves a handle: NULL means the per-thread stream when `ptds`, else the legacy stream;
 * CU_STREAM_LEGACY / CU_STREAM_PER_THREAD as named. Sets *out or returns an error. */
CUresult dls_sim_stream_resolve(CUstream h, int ptds, struct CUstream_st **out);
/* The first stream not reclaimed (the others follow through next_all). Lock held. */
struct CUstream_st *dls_sim_streams_locked(void);
/* Takes / drops a reference to s (lock held); dropping the last one reclaims s. */
void dls_sim_stream_get_locked(struct CUstream_st *s);
void dls_sim_stream_put_locked(struct CUstream_st *s);

/* --- scheduler (drv_sched.c) --- */
/* A zeroed operation of `kind` (aborts on allocation failure: test infrastructure). */
dls_sim_op *dls_sim_op_new(int kind);
/* Drops an operation's dependencies and the references they hold (lock held). */
void dls_sim_op_drop_deps_locked(dls_sim_op *op);
/* Frees an operation and what it owns (a kernel's argument copies; its dependencies, which must
 * hold no reference: dropped, or never given). */
void dls_sim_op_free(dls_sim_op *op);
/* Appends `op` to `s`, with the legacy-stream implicit dependencies and `extra` (may be NULL),
 * and returns its sequence number. Takes ownership of op. While s is capturing, op becomes a
 * node of the capture's graph instead (not executed, dependencies dropped) and 0 is returned. */
uint64_t dls_sim_enqueue(struct CUstream_st *s, dls_sim_op *op, const dls_sim_dep *extra);
/* The sequence number of the last operation submitted to s (takes the lock). */
uint64_t dls_sim_position(struct CUstream_st *s);
/* Records event e at the current end of s (a marker operation) and returns CUDA_SUCCESS. */
CUresult dls_sim_event_record(struct CUevent_st *e, struct CUstream_st *s);
/* Makes s wait for e's most recent record (nothing when e was never recorded). While s is
 * capturing, see drv_graph.c for what a wait means; `flags` are cuStreamWaitEvent's. Returns
 * CUDA_SUCCESS or the capture error. */
CUresult dls_sim_event_wait(struct CUstream_st *s, struct CUevent_st *e, unsigned flags);
/* Same, for an external event wait node `gnode` of graph exec `gexec` being launched. */
CUresult dls_sim_event_wait_node(struct CUstream_st *s, struct CUevent_st *e, unsigned flags, unsigned long long gexec,
                                 unsigned gnode);
/* Blocks the host until s has completed operation `seq` (traced as a host wait). */
void dls_sim_wait(struct CUstream_st *s, uint64_t seq);
/* Non-zero when s has completed all its submitted work (traced as a host wait when it has). */
int dls_sim_stream_idle(struct CUstream_st *s);
/* Event synchronize (`block`) or query of e: waits for (or checks) the completion of its most
 * recent record. CUDA_SUCCESS, CUDA_ERROR_NOT_READY (a query of an incomplete record) or
 * CUDA_ERROR_CAPTURED_EVENT (last recorded in a capture). */
CUresult dls_sim_event_host_wait(struct CUevent_st *e, int block);
/* Blocks until every stream of ctx has completed what was submitted before the call. */
void dls_sim_ctx_sync(struct CUctx_st *ctx);
/* The next unique stream id. Call with the lock held. */
unsigned long long dls_sim_next_stream_id(void);
/* The place of the last operation enqueued so far, on any stream (lock held). */
uint64_t dls_sim_work_mark_locked(void);
/* The place of the oldest operation not completed, on any stream, or UINT64_MAX when every
 * operation enqueued has completed (lock held). */
uint64_t dls_sim_oldest_pending_locked(void);

/* --- capture and graphs (drv_graph.c); the *_locked functions need the scheduler lock --- */
/* Appends op to the graph of s's capture (s->cap non-NULL); takes ownership. */
void dls_sim_capture_add_locked(struct CUstream_st *s, dls_sim_op *op);
/* Ends s's capture and frees what it captured (s is being freed). */
void dls_sim_capture_drop_locked(struct CUstream_st *s);
/* Marks s's capture invalidated (an error happened in it) and returns `err`. */
CUresult dls_sim_capture_invalidate_locked(struct CUstream_st *s, CUresult err);
/* The error a host synchronization covering s must return while s captures (invalidating the
 * capture), or CUDA_SUCCESS when s is not capturing. Takes the lock. */
CUresult dls_sim_capture_forbids_sync(struct CUstream_st *s);
/* Starts a capture sequence on s / ends it into *graph (see drv_capture.c for the errors). */
CUresult dls_sim_capture_begin(struct CUstream_st *s, CUstreamCaptureMode mode);
CUresult dls_sim_capture_end(struct CUstream_st *s, CUgraph *graph);
/* s's capture status and, when capturing, its id and graph (outputs may be NULL). */
void dls_sim_capture_status(struct CUstream_st *s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph);
/* Enqueues the nodes of exec on s in order (a graph launch). */
CUresult dls_sim_graph_launch(CUgraphExec exec, struct CUstream_st *s);

/* --- memory blocks (drv_blocks.c) --- */
/* A 256-byte aligned block of at least `size` bytes of device (is_host 0) memory, or whole pages
 * of page-locked host memory with the device's view of them in *view (NULL for device memory),
 * its first `size` bytes 0xA5; NULL when out of memory. Takes the lock. */
void *dls_sim_block_take(size_t size, int is_host, void **view);
/* Takes back the block p (device view `view`) of an allocation of `size` bytes being freed (lock
 * held): it is not handed out again, nor freed, until the operations enqueued so far have
 * completed. */
void dls_sim_block_give_locked(void *p, void *view, size_t size, int is_host);

/* --- memory (drv_mem.c) --- */
/* Finds the allocation containing p: sets base, size, is_host, ctx; returns 0 or -1. */
int dls_sim_mem_find(const void *p, uintptr_t *base, size_t *size, int *is_host, struct CUctx_st **ctx);
/* The address through which stream work touches p: its place in the device's view of the
 * page-locked allocation holding it (drv_blocks.c), else p itself. Takes the lock. */
void *dls_sim_mem_device_view(const void *p);

/* --- kernels (drv_kernel.c) --- */
/* The registered kernel behind f, or NULL when f is not one. */
struct CUfunc_st *dls_sim_kernel(CUfunction f);
/* Module loading: under CUDA_MODULE_LOADING=LAZY, a kernel is loaded into a context at its first
 * launch there, and loading waits for the context's earlier work (as CUDA's lazy loading may:
 * it needs a context synchronization). Returns 1 when this launch of k in ctx is that first one
 * under lazy loading (and records k as loaded in ctx), else 0. Eager loading (the default here,
 * or CUDA_MODULE_LOADING=EAGER) loads every kernel up front: always 0. */
int dls_sim_kernel_first_load(struct CUfunc_st *k, struct CUctx_st *ctx);

/* --- API reporting (drv_call.c) --- */
/* Fills in context fields of a report for the calling thread. */
void dls_sim_fill_context(CUpti_CallbackData *d);

/* --- cuGetProcAddress (drv_procaddr.c) --- */
/* One entry point by its base name (the name cuGetProcAddress is asked for). Each source file
 * lists its functions in a NULL-terminated table; the per-thread builds list their _ptsz/_ptds
 * exports under the same base names in a second table. */
typedef struct {
    const char *name;
    void (*fn)(void);
} dls_sim_proc;
extern const dls_sim_proc dls_sim_procs_init[], dls_sim_procs_errors[], dls_sim_procs_stream[], dls_sim_procs_mem[],
    dls_sim_procs_kernel[], dls_sim_procs_queue[], dls_sim_procs_work[], dls_sim_procs_graph[], dls_sim_procs_capture[],
    dls_sim_procs_queue_ptds[], dls_sim_procs_work_ptds[], dls_sim_procs_capture_ptds[];

#pragma GCC visibility pop

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define SIM_TABLE(name) SIM_CAT(name, _ptds)
#else
#define SIM_TABLE(name) name
#endif
/* A table entry: the base name as written, the function as cuda.h renames it. */
#define SIM_PROC(fn)            \
    {                           \
#fn, (void (*)(void))fn \
    }

#define SIM_CAT_(a, b) a##b
#define SIM_CAT(a, b) SIM_CAT_(a, b)
#define SIM_STR_(a) #a
#define SIM_STR(a) SIM_STR_(a)
/* The real params struct / callback id / name of driver function fn, after cuda.h's renaming
 * (cuMemAlloc -> cuMemAlloc_v2, cuStreamQuery -> cuStreamQuery_ptsz in the per-thread build). */
#define DRV_PARAMS(fn) SIM_CAT(fn, _params)
#define DRV_CBID(fn) SIM_CAT(CUPTI_DRIVER_TRACE_CBID_, fn)

/* The body of a simulated driver function: reports ENTER with `params_ptr`, evaluates `expr`
 * unless the driver is not initialized or a forced error is pending, reports EXIT, returns. */
#define DRV_CALL(fn, params_ptr, symbol, expr)                                                                 \
    do {                                                                                                       \
        cudasim_call c_;                                                                                       \
        CUresult r_ = (CUresult)cudasim_call_enter(&c_, CUPTI_CB_DOMAIN_DRIVER_API, DRV_CBID(fn), SIM_STR(fn), \
                                                   (params_ptr), (symbol));                                    \
        if (r_ == CUDA_SUCCESS)                                                                                \
            r_ = dls_sim_initialized() ? (expr) : CUDA_ERROR_NOT_INITIALIZED;                                  \
        cudasim_call_exit(&c_, &r_);                                                                           \
        return r_;                                                                                             \
    } while (0)

/* Same, for the few functions that work before cuInit. */
#define DRV_CALL_ANYTIME(fn, params_ptr, expr)                                                                 \
    do {                                                                                                       \
        cudasim_call c_;                                                                                       \
        CUresult r_ = (CUresult)cudasim_call_enter(&c_, CUPTI_CB_DOMAIN_DRIVER_API, DRV_CBID(fn), SIM_STR(fn), \
                                                   (params_ptr), NULL);                                        \
        if (r_ == CUDA_SUCCESS)                                                                                \
            r_ = (expr);                                                                                       \
        cudasim_call_exit(&c_, &r_);                                                                           \
        return r_;                                                                                             \
    } while (0)

#endif
