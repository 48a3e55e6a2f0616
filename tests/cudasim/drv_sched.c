/* drv_sched.c: the stream scheduler: one worker thread per stream runs its operations in
 * submission order; operations wait for dependencies on other streams' positions. A stream's
 * worker starts when the stream is first given work to run: a stream given no work, or only
 * marks that complete at once, has no thread (a GPU makes no thread per stream, and each thread
 * created costs every library in the process the zeroing of its thread-local storage).
 *
 * Models: asynchronous in-order streams, concurrency across streams, event waits (a dependency
 * on the recorded position), the legacy default stream's implicit synchronization with the
 * blocking streams of its context (both ways; non-blocking streams exempt; per-thread streams
 * count as blocking), host waits, and the test gates (hold / release / settle).
 * Does not model: priorities, preemption, device-side limits on concurrency.
 *
 * All state is guarded by one mutex. Each stream's worker sleeps on its own condition variable,
 * woken only when its stream may start something (work enqueued, a dependency completed, its
 * gate opened); host threads wait on one shared condition variable, broadcast on completions
 * only while some host thread waits. An operation that does nothing (an event record, a wait
 * whose dependencies are met) enqueued on an idle stream completes at once, in the calling
 * thread: the host pays no thread switch for it, as a GPU's command processor would not.
 * Streams a stream's work depends on, and streams a host thread waits for, are held by a
 * reference (drv_lifetime.c) until the work completes or the wait ends. Every operation gets a
 * place in the order of all enqueues (gseq), so freed memory can be kept until the work enqueued
 * before the free has completed (drv_blocks.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudasim.h"
#include "sim.h"
#include "trace.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER; /* host waiters */
static unsigned g_host_waiters;
static unsigned long long g_next_id;
static uint64_t g_gseq; /* the last operation's place in the order of all enqueues */

void dls_sim_lock(void)
{
    pthread_mutex_lock(&g_lock);
}
void dls_sim_unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

unsigned long long dls_sim_next_stream_id(void)
{
    return ++g_next_id;
}

static int deps_met(const dls_sim_op *op)
{
    for (unsigned i = 0; i < op->ndeps; i++)
        if (op->deps[i].s->completed < op->deps[i].seq)
            return 0;
    return 1;
}

static int can_start(const struct CUstream_st *s)
{
    return s->head && !s->held && deps_met(s->head);
}

/* Wakes whoever may proceed now that an operation completed: host waiters, and the workers of
 * streams whose next operation can start. Lock held. */
static void wake_after_completion(void)
{
    if (g_host_waiters)
        pthread_cond_broadcast(&g_cv);
    for (struct CUstream_st *s = dls_sim_streams_locked(); s; s = s->next_all)
        if (!s->running && can_start(s))
            pthread_cond_signal(&s->cv);
}

/* A thread blocked in host_wait_locked, on that thread's stack (g_lock). */
typedef struct host_waiter {
    pid_t tid;
    struct host_waiter *next;
} host_waiter;
static host_waiter *g_waiting;

/* Host side: waits for a change under the lock. */
static void host_wait_locked(void)
{
    host_waiter me = {(pid_t)syscall(SYS_gettid), g_waiting};
    g_waiting = &me;
    g_host_waiters++;
    pthread_cond_wait(&g_cv, &g_lock);
    g_host_waiters--;
    host_waiter **p = &g_waiting;
    while (*p != &me)
        p = &(*p)->next;
    *p = me.next;
}

int cudasim_thread_in_host_wait(pid_t tid)
{
    pthread_mutex_lock(&g_lock);
    const host_waiter *w = g_waiting;
    while (w && w->tid != tid)
        w = w->next;
    pthread_mutex_unlock(&g_lock);
    return w != NULL;
}

static void sleep_us(unsigned us)
{
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* A kernel's pointer-sized arguments that point into page-locked memory point into the device's
 * view of it (dls_sim_mem_device_view), as the GPU reaches pinned memory by DMA. */
static void device_args(dls_sim_op *op)
{
    const struct CUfunc_st *k = op->u.k.f;
    for (unsigned i = 0; i < k->nparams; i++)
        if (k->sizes[i] == sizeof(void *)) {
            void *v;
            memcpy(&v, op->u.k.args[i], sizeof v);
            if (v) {
                v = dls_sim_mem_device_view(v);
                memcpy(op->u.k.args[i], &v, sizeof v);
            }
        }
}

/* Runs op on its stream's worker; memory is touched through the device's view. */
static void run_op(dls_sim_op *op, unsigned duration_us)
{
    switch (op->kind) {
    case SIM_OP_KERNEL:
        device_args(op);
        op->u.k.f->fn(op->u.k.args);
        if (duration_us)
            sleep_us(duration_us);
        break;
    case SIM_OP_COPY:
        if (op->u.copy.n)
            memmove(dls_sim_mem_device_view(op->u.copy.dst), dls_sim_mem_device_view(op->u.copy.src), op->u.copy.n);
        break;
    case SIM_OP_SET8:
        memset(dls_sim_mem_device_view(op->u.set.dst), (int)(op->u.set.value & 0xff), op->u.set.n);
        break;
    case SIM_OP_SET32: {
        unsigned char *dst = dls_sim_mem_device_view(op->u.set.dst);
        for (size_t i = 0; i < op->u.set.n; i++)
            memcpy(dst + 4 * i, &op->u.set.value, 4);
        break;
    }
    case SIM_OP_HOSTFN:
        op->u.host.fn(op->u.host.user);
        break;
    default:
        break;
    }
}

void dls_sim_op_drop_deps_locked(dls_sim_op *op)
{
    for (unsigned i = 0; i < op->ndeps; i++)
        dls_sim_stream_put_locked(op->deps[i].s);
    free(op->deps);
    op->deps = NULL;
    op->ndeps = 0;
}

void dls_sim_op_free(dls_sim_op *op)
{
    if (op->kind == SIM_OP_KERNEL) {
        free(op->u.k.args);
        free(op->u.k.buf);
    }
    free(op->acc);
    free(op->deps);
    free(op);
}

static void *worker(void *arg)
{
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        while (!can_start(s) && !(s->destroyed && !s->head))
            pthread_cond_wait(&s->cv, &g_lock);
        if (!s->head)
            break;
        dls_sim_op *op = s->head;
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->running = 1;
        s->running_gseq = op->gseq;
        unsigned duration = op->kind == SIM_OP_KERNEL ? op->u.k.f->duration_us : 0;
        pthread_mutex_unlock(&g_lock);
        run_op(op, duration);
        pthread_mutex_lock(&g_lock);
        s->completed = op->seq;
        s->running = 0;
        wake_after_completion();
        dls_sim_op_drop_deps_locked(op);
        dls_sim_op_free(op);
    }
    dls_sim_stream_put_locked(s); /* may free s: the worker's reference was the last */
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* Starts s's worker, once (g_lock). The simulator cannot run a stream without it: it says so
 * and aborts the test program. */
static void start_worker(struct CUstream_st *s)
{
    if (s->started)
        return;
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, worker, s);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        fprintf(stderr, "cudasim: cannot start the worker thread of stream %llu: %s\n", s->id, strerror(rc));
        abort();
    }
    s->started = 1;
    dls_sim_stream_get_locked(s); /* the worker's, dropped as it exits */
}

dls_sim_op *dls_sim_op_new(int kind)
{
    dls_sim_op *op = calloc(1, sizeof *op);
    if (!op)
        abort();
    op->kind = kind;
    return op;
}

/* Makes op wait for position seq of s (traced as a P line, met or not). A dependency not met yet
 * holds a reference to s until op completes. */
static void add_dep(dls_sim_op *op, struct CUstream_st *s, uint64_t seq)
{
    if (SIM_TRACING() && seq)
        dls_sim_trace_line("P %llu %llu %llu", op->id, s->id, (unsigned long long)seq);
    if (s->completed >= seq)
        return;
    dls_sim_dep *d = realloc(op->deps, (op->ndeps + 1) * sizeof *d);
    if (!d)
        abort();
    op->deps = d;
    op->deps[op->ndeps++] = (dls_sim_dep){s, seq};
    dls_sim_stream_get_locked(s);
}

static int is_blocking(const struct CUstream_st *s)
{
    return !(s->flags & CU_STREAM_NON_BLOCKING);
}

static uint64_t enqueue_locked(struct CUstream_st *s, dls_sim_op *op, const dls_sim_dep *extra)
{
    if (s->cap) {
        dls_sim_capture_add_locked(s, op);
        return 0;
    }
    op->seq = ++s->submitted; /* its dependencies are on other streams, or earlier on s */
    op->gseq = ++g_gseq;
    if (SIM_TRACING())
        dls_sim_trace_op_locked(op, s);
    if (extra)
        add_dep(op, extra->s, extra->seq);
    if (s->kind == SIM_STREAM_LEGACY) {
        for (struct CUstream_st *o = s->ctx->streams; o; o = o->next_in_ctx)
            if (o != s && is_blocking(o))
                add_dep(op, o, o->submitted);
    } else if (is_blocking(s)) {
        add_dep(op, s->ctx->legacy, s->ctx->legacy->submitted);
    }
    if (op->kind == SIM_OP_MARK && !s->head && !s->running && !s->held && deps_met(op)) {
        s->completed = op->seq; /* nothing ahead of it and nothing to do: complete at once */
        dls_sim_op_free(op);
        wake_after_completion();
        return s->submitted;
    }
    start_worker(s);
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    if (!s->running && can_start(s))
        pthread_cond_signal(&s->cv);
    return s->submitted;
}

uint64_t dls_sim_enqueue(struct CUstream_st *s, dls_sim_op *op, const dls_sim_dep *extra)
{
    if (SIM_TRACING() && op->kind == SIM_OP_KERNEL)
        dls_sim_trace_kernel_accesses(op);
    pthread_mutex_lock(&g_lock);
    uint64_t seq = enqueue_locked(s, op, extra);
    pthread_mutex_unlock(&g_lock);
    return seq;
}

uint64_t dls_sim_position(struct CUstream_st *s)
{
    pthread_mutex_lock(&g_lock);
    uint64_t seq = s->submitted;
    pthread_mutex_unlock(&g_lock);
    return seq;
}

CUresult dls_sim_event_record(struct CUevent_st *e, struct CUstream_st *s)
{
    dls_sim_op *op = dls_sim_op_new(SIM_OP_MARK);
    op->role = SIM_ROLE_RECORD;
    op->u.wait.e = e;
    pthread_mutex_lock(&g_lock);
    if (s->cap) { /* a captured record: only capture-internal ordering, nothing runs */
        e->cap_id = s->cap->id;
        pthread_mutex_unlock(&g_lock);
        dls_sim_op_free(op);
        return CUDA_SUCCESS;
    }
    e->cap_id = 0;
    dls_sim_stream_get_locked(s); /* the event's, until it is recorded again or destroyed */
    if (e->s)
        dls_sim_stream_put_locked(e->s);
    e->s = s;
    e->seq = enqueue_locked(s, op, NULL);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

/* A wait made by a capturing stream s: on a record of the same capture it adds nothing (the
 * capture is a chain); on another capture's record it would merge two captures; on a record made
 * outside capture it is an external event wait node with CU_EVENT_WAIT_EXTERNAL and a capture
 * isolation error without it. Errors invalidate the capture. */
static CUresult capture_wait_locked(struct CUstream_st *s, struct CUevent_st *e, unsigned flags)
{
    if (e->cap_id == s->cap->id)
        return CUDA_SUCCESS;
    if (e->cap_id)
        return dls_sim_capture_invalidate_locked(s, CUDA_ERROR_STREAM_CAPTURE_MERGE);
    if (!(flags & CU_EVENT_WAIT_EXTERNAL))
        return dls_sim_capture_invalidate_locked(s, CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    dls_sim_op *op = dls_sim_op_new(SIM_OP_EXT_WAIT);
    op->u.wait.e = e;
    dls_sim_capture_add_locked(s, op);
    return CUDA_SUCCESS;
}

CUresult dls_sim_event_wait(struct CUstream_st *s, struct CUevent_st *e, unsigned flags)
{
    return dls_sim_event_wait_node(s, e, flags, 0, 0);
}

CUresult dls_sim_event_wait_node(struct CUstream_st *s, struct CUevent_st *e, unsigned flags, unsigned long long gexec,
                                 unsigned gnode)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    if (s->cap) {
        r = capture_wait_locked(s, e, flags);
    } else if (flags & CU_EVENT_WAIT_EXTERNAL) {
        r = CUDA_ERROR_INVALID_VALUE; /* "invalid outside of stream capture" */
    } else if (e->cap_id) {
        r = CUDA_ERROR_NOT_SUPPORTED; /* joining a capture through its event (fork): not modelled */
    } else if (e->s) {
        dls_sim_dep dep = {e->s, e->seq};
        dls_sim_op *op = dls_sim_op_new(SIM_OP_MARK);
        op->role = SIM_ROLE_WAIT;
        op->u.wait.e = e;
        op->gexec = gexec;
        op->gnode = gnode;
        enqueue_locked(s, op, &dep);
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

/* Threads inside a host synchronize (g_lock). */
static unsigned g_syncing;

void dls_sim_wait(struct CUstream_st *s, uint64_t seq)
{
    pthread_mutex_lock(&g_lock);
    dls_sim_stream_get_locked(s);
    g_syncing++;
    while (s->completed < seq)
        host_wait_locked();
    g_syncing--;
    if (SIM_TRACING() && seq)
        dls_sim_trace_line("H %u %llu %llu", dls_sim_trace_call(), s->id, (unsigned long long)seq);
    dls_sim_stream_put_locked(s);
    pthread_mutex_unlock(&g_lock);
}

unsigned cudasim_host_waiters(void)
{
    pthread_mutex_lock(&g_lock);
    unsigned n = g_syncing;
    pthread_mutex_unlock(&g_lock);
    return n;
}

int dls_sim_stream_idle(struct CUstream_st *s)
{
    pthread_mutex_lock(&g_lock);
    int done = s->completed >= s->submitted;
    if (SIM_TRACING() && done && s->submitted)
        dls_sim_trace_line("H %u %llu %llu", dls_sim_trace_call(), s->id, (unsigned long long)s->submitted);
    pthread_mutex_unlock(&g_lock);
    return done;
}

CUresult dls_sim_event_host_wait(struct CUevent_st *e, int block)
{
    pthread_mutex_lock(&g_lock);
    if (e->cap_id) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_CAPTURED_EVENT;
    }
    struct CUstream_st *s = e->s;
    uint64_t seq = e->seq;
    int done = !s || s->completed >= seq;
    if (SIM_TRACING() && (done || block))
        dls_sim_trace_line("HE %u %llu", dls_sim_trace_call(), e->id);
    if (!done && block) {
        dls_sim_stream_get_locked(s); /* e may be recorded again or destroyed meanwhile */
        g_syncing++;
        while (s->completed < seq)
            host_wait_locked();
        g_syncing--;
        dls_sim_stream_put_locked(s);
        done = 1;
    }
    pthread_mutex_unlock(&g_lock);
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

void dls_sim_ctx_sync(struct CUctx_st *ctx)
{
    pthread_mutex_lock(&g_lock);
    unsigned n = 0;
    for (struct CUstream_st *s = ctx->streams; s; s = s->next_in_ctx)
        n++;
    dls_sim_dep *snap = malloc((n ? n : 1) * sizeof *snap);
    if (!snap)
        abort();
    n = 0;
    for (struct CUstream_st *s = ctx->streams; s; s = s->next_in_ctx) {
        snap[n++] = (dls_sim_dep){s, s->submitted};
        dls_sim_stream_get_locked(s);
    }
    g_syncing++;
    for (unsigned i = 0; i < n; i++)
        while (snap[i].s->completed < snap[i].seq)
            host_wait_locked();
    g_syncing--;
    if (SIM_TRACING())
        for (unsigned i = 0; i < n; i++)
            if (snap[i].seq)
                dls_sim_trace_line("H %u %llu %llu", dls_sim_trace_call(), snap[i].s->id,
                                   (unsigned long long)snap[i].seq);
    for (unsigned i = 0; i < n; i++)
        dls_sim_stream_put_locked(snap[i].s);
    pthread_mutex_unlock(&g_lock);
    free(snap);
}

static int set_hold(CUstream h, int held)
{
    struct CUstream_st *s;
    if (dls_sim_stream_resolve(h, 0, &s) != CUDA_SUCCESS)
        return -1;
    pthread_mutex_lock(&g_lock);
    s->held = held;
    pthread_cond_signal(&s->cv);
    if (g_host_waiters)
        pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int cudasim_stream_hold(CUstream stream)
{
    return set_hold(stream, 1);
}
int cudasim_stream_release(CUstream stream)
{
    return set_hold(stream, 0);
}

void cudasim_release_all(void)
{
    pthread_mutex_lock(&g_lock);
    for (struct CUstream_st *s = dls_sim_streams_locked(); s; s = s->next_all) {
        s->held = 0;
        pthread_cond_signal(&s->cv);
    }
    if (g_host_waiters)
        pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
}

static int quiescent(const struct CUstream_st *s)
{
    return !s->running && !can_start(s);
}

void cudasim_settle(void)
{
    pthread_mutex_lock(&g_lock);
    for (;;) { /* from the first stream again after each wait: streams come and go meanwhile */
        struct CUstream_st *s = dls_sim_streams_locked();
        while (s && quiescent(s))
            s = s->next_all;
        if (!s)
            break;
        host_wait_locked();
    }
    pthread_mutex_unlock(&g_lock);
}

uint64_t dls_sim_work_mark_locked(void)
{
    return g_gseq;
}

uint64_t dls_sim_oldest_pending_locked(void)
{
    uint64_t oldest = UINT64_MAX;
    for (const struct CUstream_st *s = dls_sim_streams_locked(); s; s = s->next_all) {
        /* a stream runs in order: its oldest incomplete operation is the running one, or its head */
        if (s->running && s->running_gseq < oldest)
            oldest = s->running_gseq;
        else if (!s->running && s->head && s->head->gseq < oldest)
            oldest = s->head->gseq;
    }
    return oldest;
}
