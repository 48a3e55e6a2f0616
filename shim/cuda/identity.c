/* Stream resolution caches and event ids (see identity.h). */
#include "identity.h"

#include "../common/mutex.h"
#include "../common/map.h"
#include "../common/thread_block.h"
#include "drv.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

atomic_uint_fast64_t dls_cuda_stream_gen = 1;

/* The per-thread cache of resolutions: SETS sets of WAYS slots, a key's set chosen by a
 * multiplicative hash of its canonical handle and, for default streams, the context (handles
 * come from a heap: their low bits repeat, so they are mixed, not masked); a slot is valid while
 * its generation is the current one. A key misses only when WAYS other keys of its set were
 * used since; a miss replaces the set's least recently used slot. Not a dls_map: a cache may
 * lose an entry (a miss asks the driver again). */
#define SETS 16
#define WAYS 4
typedef struct {
    uint64_t gen; /* 0 = empty */
    uintptr_t key;
    uintptr_t key_ctx;
    uint64_t made; /* a stream this thread made whose id is not asked yet: g_asked then; else 0 */
    uint64_t used; /* the thread's use count when the slot was last found or filled */
    dls_cuda_stream s;
} slot;

/* The generation of context facts: bumped when a context may have been destroyed. */
static atomic_uint_fast64_t g_ctx_gen = 1;

/* What the driver said of a context (its id and device), kept per thread: a thread uses few
 * contexts; a slot is valid while its generation is the current one. */
#define CTX_SLOTS 4
typedef struct {
    uint64_t gen; /* 0 = empty */
    uintptr_t ctx;
    uint64_t id;
    int device;
} ctx_slot;

/* A thread's caches of streams and contexts, in a block (thread_block.h) allocated at its first
 * resolution: the simulator's and the program's threads that never resolve a stream carry none. */
typedef struct {
    slot streams[SETS][WAYS];
    uint64_t uses; /* lookups so far, the clock of the slots' `used` */
    uint64_t gen;  /* the generation of the last lookup: in a later one every slot is stale */
    ctx_slot ctxs[CTX_SLOTS];
    unsigned ctx_next;
} cache;

/* How many times any thread asked the driver for a stream's id: while it has not moved since a
 * thread made a stream, no other thread can have resolved that stream. */
static atomic_uint_fast64_t g_asked = 1;

static dls_thread_block g_cache_block = DLS_THREAD_BLOCK_INIT(sizeof(cache));
static __thread cache *t_cache;

/* The calling thread's caches; NULL when out of memory (nothing is cached). */
static cache *cache_self(void)
{
    return t_cache ? t_cache : dls_thread_block_new(&g_cache_block, (void **)&t_cache);
}

/* The canonical handle of h and its kind as far as the handle tells (default streams). */
static CUstream canonical_of(CUstream h, int per_thread_call, dls_stream_kind *kind)
{
    CUstream canonical = h ? h : per_thread_call ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    *kind = canonical == CU_STREAM_LEGACY       ? DLS_STREAM_LEGACY
            : canonical == CU_STREAM_PER_THREAD ? DLS_STREAM_PER_THREAD
                                                : DLS_STREAM_UNKNOWN;
    return canonical;
}

/* The set of a key: the top bits of the key's product with a 64-bit odd constant (Fibonacci
 * hashing), which every bit of the key moves. */
static unsigned set_of(uintptr_t key, uintptr_t key_ctx)
{
    uint64_t h = ((uint64_t)key ^ ((uint64_t)key_ctx * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 60) % SETS;
}

/* The slot of cache c (NULL: none) for canonical handle `canonical` of kind `kind` (default
 * streams belong to the current context; real handles are global), with its key: the slot that
 * holds the key in generation gen when one does (*hit 1), else the slot a resolution of the key
 * should replace (*hit 0): an empty or stale one, else the least recently used of its set. */
static slot *slot_of(cache *c, CUstream canonical, dls_stream_kind kind, CUcontext cur_ctx, uint64_t gen,
                     uintptr_t *key, uintptr_t *key_ctx, int *hit)
{
    *key = (uintptr_t)canonical;
    *key_ctx = kind == DLS_STREAM_UNKNOWN ? 0 : (uintptr_t)cur_ctx;
    *hit = 0;
    if (!c)
        return NULL;
    slot *set = c->streams[set_of(*key, *key_ctx)], *victim = &set[0];
    uint64_t now = ++c->uses;
    if (c->gen != gen) { /* a stream was destroyed since: no slot holds a valid resolution */
        c->gen = gen;
        victim->used = now;
        return victim;
    }
    for (int i = 0; i < WAYS; i++) {
        slot *sl = &set[i];
        if (sl->gen == gen && sl->key == *key && sl->key_ctx == *key_ctx) {
            sl->used = now;
            *hit = 1;
            return sl;
        }
        if (victim->gen == gen && (sl->gen != gen || sl->used < victim->used))
            victim = sl;
    }
    victim->used = now;
    return victim;
}

void dls_cuda_streams_invalidate(void)
{
    atomic_fetch_add_explicit(&dls_cuda_stream_gen, 1, memory_order_acq_rel);
}

/* The device of ctx (entered for the question when it is not current), or -1. */
static int context_device(CUcontext ctx)
{
    CUdevice dev = -1;
    int pushed = 0;
    if (!ctx || dls_drv_ctx_enter(ctx, &pushed) != CUDA_SUCCESS)
        return -1;
    if (dls_drv_ctx_get_device(&dev) != CUDA_SUCCESS)
        dev = -1;
    dls_drv_ctx_leave(pushed);
    return dev;
}

/* The id (0: unknown) and device (-1: unknown) of ctx, asked once per context and generation
 * (c: the thread's caches, NULL for none). */
static void context_facts(cache *c, CUcontext ctx, uint64_t *id, int *device)
{
    uint64_t gen = atomic_load_explicit(&g_ctx_gen, memory_order_acquire);
    for (unsigned i = 0; c && i < CTX_SLOTS; i++)
        if (c->ctxs[i].gen == gen && c->ctxs[i].ctx == (uintptr_t)ctx) {
            *id = c->ctxs[i].id;
            *device = c->ctxs[i].device;
            return;
        }
    unsigned long long ctx_id = 0;
    if (!ctx || dls_drv_ctx_get_id(ctx, &ctx_id) != CUDA_SUCCESS)
        ctx_id = 0;
    *id = ctx_id;
    *device = context_device(ctx);
    if (c && ctx_id && *device >= 0)
        c->ctxs[c->ctx_next++ % CTX_SLOTS] = (ctx_slot){gen, (uintptr_t)ctx, ctx_id, *device};
}

/* Sets s's context to ctx, with that context's id and device (c: as in context_facts). */
static void set_context(cache *c, dls_cuda_stream *s, CUcontext ctx)
{
    s->ctx = (uintptr_t)ctx;
    context_facts(c, ctx, &s->ctx_id, &s->device);
}

/* Asks the driver for the id of stream h into s (resolved 0: it could not say), counted in
 * g_asked before the id can reach anyone. */
static void ask_id(CUstream h, dls_cuda_stream *s)
{
    unsigned long long id = 0;
    atomic_fetch_add_explicit(&g_asked, 1, memory_order_acq_rel);
    s->resolved = dls_drv_stream_get_id(h, &id) == CUDA_SUCCESS;
    s->id = s->resolved ? id : 0;
}

/* Asks the driver for what the caches (c) do not know. */
static void query(cache *c, CUstream canonical, dls_stream_kind kind, CUcontext cur_ctx, dls_cuda_stream *s)
{
    ask_id(canonical, s);
    CUcontext ctx = cur_ctx;
    if (kind != DLS_STREAM_LEGACY && kind != DLS_STREAM_PER_THREAD) {
        CUcontext c = NULL;
        if (dls_drv_stream_get_ctx(canonical, &c) == CUDA_SUCCESS && c)
            ctx = c;
        unsigned int flags = 0;
        if (dls_drv_stream_get_flags(canonical, &flags) == CUDA_SUCCESS)
            kind = (flags & CU_STREAM_NON_BLOCKING) ? DLS_STREAM_NON_BLOCKING : DLS_STREAM_BLOCKING;
        else
            kind = DLS_STREAM_UNKNOWN;
    }
    s->kind = kind;
    set_context(c, s, ctx);
}

/* Keeps resolution s of the slot's key (sl: NULL for none), made in generation gen, when it is
 * resolved. */
static void keep(slot *sl, uint64_t gen, uintptr_t key, uintptr_t key_ctx, const dls_cuda_stream *s)
{
    if (sl && s->resolved) {
        sl->gen = gen;
        sl->key = key;
        sl->key_ctx = key_ctx;
        sl->made = 0;
        sl->s = *s;
    }
}

/* Where handle h as passed lives in the calling thread's caches (c; NULL: it has none): its
 * canonical handle and kind, its key, the generation it was looked up in, and its slot. */
typedef struct {
    cache *c;
    CUstream canonical;
    dls_stream_kind kind;
    uint64_t gen;
    uintptr_t key, key_ctx;
    slot *sl;
} place;

/* Fills *p for h; returns its slot when that holds a valid resolution of h, else NULL (p->sl is
 * then the slot a resolution of h replaces). */
static slot *lookup(CUstream h, int per_thread_call, CUcontext cur_ctx, place *p)
{
    p->canonical = canonical_of(h, per_thread_call, &p->kind);
    p->gen = atomic_load_explicit(&dls_cuda_stream_gen, memory_order_acquire);
    p->c = cache_self();
    int hit;
    p->sl = slot_of(p->c, p->canonical, p->kind, cur_ctx, p->gen, &p->key, &p->key_ctx, &hit);
    return hit ? p->sl : NULL;
}

/* Resolves h (see dls_cuda_stream_resolve); a stream this thread made and nobody asked about
 * since is left unresolved when `leave_made` (its id is then asked of nobody). */
static void resolve(CUstream h, int per_thread_call, CUcontext cur_ctx, int leave_made, dls_cuda_stream *out)
{
    place p;
    slot *hit = lookup(h, per_thread_call, cur_ctx, &p);
    if (hit && hit->made && !(leave_made && atomic_load_explicit(&g_asked, memory_order_acquire) == hit->made)) {
        ask_id(p.canonical, &hit->s); /* a stream made here, now used: its id is asked once */
        hit->made = 0;
        if (!hit->s.resolved)
            hit->gen = 0;
    }
    if (hit) {
        *out = hit->s;
        out->handle = (uintptr_t)h;
        return;
    }
    dls_cuda_stream s = {.handle = (uintptr_t)h};
    query(p.c, p.canonical, p.kind, cur_ctx, &s);
    *out = s;
    keep(p.sl, p.gen, p.key, p.key_ctx, &s);
}

void dls_cuda_stream_resolve(CUstream h, int per_thread_call, CUcontext cur_ctx, dls_cuda_stream *out)
{
    resolve(h, per_thread_call, cur_ctx, 0, out);
}

void dls_cuda_stream_resolve_destroyed(CUstream h, int per_thread_call, CUcontext cur_ctx, dls_cuda_stream *out)
{
    resolve(h, per_thread_call, cur_ctx, 1, out);
}

void dls_cuda_stream_resolve_created(CUstream h, CUcontext ctx, unsigned flags, dls_cuda_stream *out)
{
    if (!ctx || !h) {
        dls_cuda_stream_resolve(h, 0, ctx, out);
        out->kind = (flags & CU_STREAM_NON_BLOCKING) ? DLS_STREAM_NON_BLOCKING : DLS_STREAM_BLOCKING;
        return;
    }
    place p;
    lookup(h, 0, ctx, &p);
    dls_cuda_stream s = {.handle = (uintptr_t)h}; /* its id is asked at its first use */
    s.kind = (flags & CU_STREAM_NON_BLOCKING) ? DLS_STREAM_NON_BLOCKING : DLS_STREAM_BLOCKING;
    set_context(p.c, &s, ctx);
    *out = s;
    if (p.sl)
        *p.sl = (slot){.gen = p.gen,
                       .key = p.key,
                       .key_ctx = p.key_ctx,
                       .made = atomic_load_explicit(&g_asked, memory_order_acquire),
                       .used = p.sl->used,
                       .s = s};
}

void dls_cuda_contexts_invalidate(void)
{
    atomic_fetch_add_explicit(&g_ctx_gen, 1, memory_order_acq_rel);
    dls_cuda_streams_invalidate();
}

/* Event ids: a dls_map by handle under one lock (events are not on the launch path). */
typedef struct {
    uintptr_t handle; /* the key */
    uint64_t id;
} ev_slot;

static dls_mutex g_ev_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_map g_ev DLS_GUARDED_BY(g_ev_lock) = DLS_MAP_INIT(DLS_MAP_WORDS, ev_slot);
static uint64_t g_next_event_id DLS_GUARDED_BY(g_ev_lock) = 1;

/* The slot of h, claimed for it (its id unset, *claimed 1) when h has none; NULL when the table
 * cannot grow (memory). */
static ev_slot *ev_slot_of(uintptr_t h, int *claimed) DLS_REQUIRES(g_ev_lock)
{
    ev_slot *sl = dls_map_get(&g_ev, h);
    *claimed = !sl;
    if (sl)
        return sl;
    if (dls_map_full(&g_ev)) {
        size_t cap = g_ev.cap ? 2 * g_ev.cap : 64;
        void *slots = calloc(cap, sizeof(ev_slot));
        if (!slots)
            return NULL;
        free(dls_map_rehash(&g_ev, slots, cap));
    }
    return dls_map_claim(&g_ev, dls_map_index(&g_ev, h), h);
}

/* Changes whenever a handle's id changes (a creation gives it a new one, a destroy takes it away):
 * the threads' caches of ids are good while it stays as they read it. */
static atomic_ulong g_ev_gen;

/* Returns e's id, giving it a new one when `fresh` or when it has none. 0 when out of memory. */
static uint64_t ev_lookup(CUevent e, int fresh)
{
    if (!e)
        return 0;
    uint64_t id = 0;
    int claimed;
    dls_mutex_lock(&g_ev_lock);
    ev_slot *sl = ev_slot_of((uintptr_t)e, &claimed);
    if (sl) {
        if (fresh || claimed)
            sl->id = g_next_event_id++;
        id = sl->id;
    }
    if (fresh)
        atomic_fetch_add_explicit(&g_ev_gen, 1, memory_order_release);
    dls_mutex_unlock(&g_ev_lock);
    return id;
}

/* A thread's latest event ids, direct-mapped by handle, each good while g_ev_gen is `gen`: the
 * program's own records and waits (two of each per exchange) find their ids without the lock. */
#define EV_CACHE 16
static __thread struct {
    uintptr_t handle;
    unsigned long gen;
    uint64_t id;
} t_ev[EV_CACHE] __attribute__((tls_model("local-dynamic")));

uint64_t dls_cuda_event_id(CUevent e)
{
    uintptr_t h = (uintptr_t)e;
    unsigned i = (unsigned)(h >> 4) % EV_CACHE;
    unsigned long gen = atomic_load_explicit(&g_ev_gen, memory_order_acquire);
    if (h && t_ev[i].handle == h && t_ev[i].gen == gen)
        return t_ev[i].id;
    uint64_t id = ev_lookup(e, 0); /* read after gen: a change since makes the entry stale */
    if (id) {
        t_ev[i].handle = h;
        t_ev[i].gen = gen;
        t_ev[i].id = id;
    }
    return id;
}

uint64_t dls_cuda_event_id_new(CUevent e)
{
    return ev_lookup(e, 1);
}

void dls_cuda_event_forget(CUevent e, uint64_t id)
{
    dls_mutex_lock(&g_ev_lock);
    if (g_ev.cap) {
        size_t i = dls_map_index(&g_ev, (uintptr_t)e);
        const ev_slot *sl = dls_map_at(&g_ev, i);
        if (sl->handle && sl->id == id) {
            dls_map_remove_at(&g_ev, i);
            atomic_fetch_add_explicit(&g_ev_gen, 1, memory_order_release);
        }
    }
    dls_mutex_unlock(&g_ev_lock);
}
