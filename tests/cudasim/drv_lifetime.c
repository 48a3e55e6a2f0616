/* drv_lifetime.c: how long a stream lives: creation, handles (resolution, per-thread default
 * streams), destruction, and reclamation.
 *
 * Models CUDA's rule that a destroyed stream's pending work still runs and can still be waited
 * for (through events recorded on it, or the legacy stream's implicit synchronization), also for
 * the per-thread default stream of a thread that exited with work pending.
 *
 * A stream is counted by its references (all under the scheduler lock): its handle (until the
 * stream is destroyed: cuStreamDestroy, the exit of the thread of a per-thread stream, the reset
 * that replaces a legacy stream), its worker thread (while it runs), each queued operation that
 * depends on one of its positions, each event whose most recent record is on it, and each host
 * thread waiting for it. The last reference dropped reclaims it: it is unlinked from the list of
 * streams and its context's list, and its memory is kept, zeroed, for the next stream created.
 * A stream with no reference has no handle, no worker and so no queued work: there is no limit on
 * how many streams a program makes over its life, and the memory they take is bounded by how many
 * live at once. Kept rather than freed, a destroyed handle stays readable: using it fails with
 * CUDA_ERROR_INVALID_HANDLE until a new stream takes its place (as real CUDA reuses handles). */
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"
#include "trace.h"

static struct CUstream_st *g_streams;  /* every stream not reclaimed, linked by next_all */
static struct CUstream_st *g_recycled; /* reclaimed, zeroed, linked by next_all */

struct CUstream_st *dls_sim_streams_locked(void)
{
    return g_streams;
}

struct CUstream_st *dls_sim_stream_new(struct CUctx_st *ctx, int kind, unsigned flags, int prio)
{
    dls_sim_lock();
    struct CUstream_st *s = g_recycled;
    if (s)
        g_recycled = s->next_all;
    else if (!(s = calloc(1, sizeof *s))) {
        dls_sim_unlock();
        return NULL;
    }
    s->magic = SIM_MAGIC_STREAM;
    s->ctx = ctx;
    s->kind = kind;
    s->flags = flags;
    s->priority = prio;
    s->refs = 1; /* the handle */
    pthread_cond_init(&s->cv, NULL);
    s->id = dls_sim_next_stream_id();
    s->next_all = g_streams;
    g_streams = s;
    s->next_in_ctx = ctx->streams;
    ctx->streams = s;
    if (SIM_TRACING())
        dls_sim_trace_line("S %llu %u %d %s %d", s->id, (unsigned)ctx->uid, ctx->dev,
                           kind == SIM_STREAM_USER     ? "user"
                           : kind == SIM_STREAM_LEGACY ? "legacy"
                                                       : "ptds",
                           !(flags & CU_STREAM_NON_BLOCKING));
    dls_sim_unlock();
    return s;
}

void dls_sim_stream_get_locked(struct CUstream_st *s)
{
    s->refs++;
}

static void unlink_stream(struct CUstream_st **head, struct CUstream_st *s, int in_ctx)
{
    for (struct CUstream_st **p = head; *p; p = in_ctx ? &(*p)->next_in_ctx : &(*p)->next_all) {
        if (*p == s) {
            *p = in_ctx ? s->next_in_ctx : s->next_all;
            return;
        }
    }
}

void dls_sim_stream_put_locked(struct CUstream_st *s)
{
    if (--s->refs)
        return;
    unlink_stream(&g_streams, s, 0);
    unlink_stream(&s->ctx->streams, s, 1);
    if (s->cap)
        dls_sim_capture_drop_locked(s);
    pthread_cond_destroy(&s->cv);
    memset(s, 0, sizeof *s); /* magic 0: its handle is invalid */
    s->next_all = g_recycled;
    g_recycled = s;
}

void dls_sim_stream_retire(struct CUstream_st *s)
{
    dls_sim_lock();
    if (!s->destroyed) { /* a second destroy of one handle drops nothing more */
        s->destroyed = 1;
        if (SIM_TRACING())
            dls_sim_trace_line("X %llu %u", s->id, dls_sim_trace_call());
        pthread_cond_signal(&s->cv); /* an idle worker exits */
        dls_sim_stream_put_locked(s);
    }
    dls_sim_unlock();
}

/* The calling thread's per-thread default stream of each device's primary context. It is
 * retired when the thread exits. */
static __thread struct CUstream_st *tls_ptds[SIM_MAX_DEVICES];
static pthread_key_t g_ptds_key;
static pthread_once_t g_ptds_once = PTHREAD_ONCE_INIT;

static void retire_thread_streams(void *unused)
{
    (void)unused;
    for (int i = 0; i < SIM_MAX_DEVICES; i++) {
        if (tls_ptds[i]) {
            dls_sim_stream_retire(tls_ptds[i]);
            tls_ptds[i] = NULL;
        }
    }
}

static void make_ptds_key(void)
{
    if (pthread_key_create(&g_ptds_key, retire_thread_streams) != 0)
        abort();
}

static struct CUstream_st *per_thread_stream(struct CUctx_st *ctx)
{
    struct CUstream_st **slot = &tls_ptds[ctx->dev];
    if (!*slot) {
        pthread_once(&g_ptds_once, make_ptds_key);
        *slot = dls_sim_stream_new(ctx, SIM_STREAM_PER_THREAD, CU_STREAM_DEFAULT, 0);
        pthread_setspecific(g_ptds_key, slot);
    }
    return *slot;
}

CUresult dls_sim_stream_resolve(CUstream h, int ptds, struct CUstream_st **out)
{
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        struct CUctx_st *ctx = dls_sim_current_ctx();
        if (!ctx)
            return CUDA_ERROR_INVALID_CONTEXT;
        int want_ptds = h == CU_STREAM_PER_THREAD || (h == NULL && ptds);
        *out = want_ptds ? per_thread_stream(ctx) : ctx->legacy;
        return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    dls_sim_lock();
    int dead = h->magic != SIM_MAGIC_STREAM || h->destroyed;
    dls_sim_unlock();
    if (dead)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = h;
    return CUDA_SUCCESS;
}
