/* check mode: finding unordered uses of exchanged tensors and describing them (the reports
 * themselves are formatted and deduplicated by shim/report/race.c). Never changes ordering.
 * Every function runs with dls_pol_g.lock held, except dls_pol_check_flush: a report is copied
 * into a per-thread queue under the lock and written (symbolized with dladdr) after it. */
#include "check.h"

#include "../common/thread_block.h"
#include "../hooks/extent.h"
#include "../report/race.h"
#include "access.h"
#include "complete.h"
#include "exch.h"
#include "pages.h"
#include "queue.h"
#include "stream_table.h"

#include <stdio.h>
#include <string.h>

/* Reports found under the lock, written by dls_pol_check_flush. Beyond PENDING, a report takes
 * the place of one whose exchange and kind another queued report has too, so that each exchange
 * and kind found keeps a report (a release-reuse is not lost behind one operation's write-reads
 * of many producer streams); else it is dropped (the same use is checked, and reported, again at
 * its next operation), as is one the thread has no queue for (out of memory). A thread's queue is
 * a block (thread_block.h) allocated at its first report: most threads make none. */
#define PENDING 8
typedef struct {
    dls_race r;
    char dtype[48], why[320], pop[160], cop[160];
    int64_t shape[DLS_POL_NDIM];
    dls_stack pstack, cstack;
} pending;
typedef struct {
    unsigned n;
    pending q[PENDING];
} pending_queue;
static dls_thread_block g_pending_block = DLS_THREAD_BLOCK_INIT(sizeof(pending_queue));
static __thread pending_queue *t_pending;

/* Copies into `out` (n bytes) the string s, and returns out (NULL for NULL). */
static const char *keep(char *out, size_t n, const char *s)
{
    if (!s)
        return NULL;
    snprintf(out, n, "%s", s);
    return out;
}

/* The number of reports in pq of exchange xid and kind k. */
static unsigned queued(const pending_queue *pq, uint64_t xid, dls_race_kind k)
{
    unsigned n = 0;
    for (unsigned i = 0; i < pq->n; i++)
        n += pq->q[i].r.xid == xid && pq->q[i].r.kind == k;
    return n;
}

/* Where in pq report r goes: the next free place; in a full queue, the latest report whose
 * exchange and kind another one has too, unless r's own are queued already (NULL: dropped). */
static pending *place_for(pending_queue *pq, const dls_race *r)
{
    if (pq->n < PENDING)
        return &pq->q[pq->n++];
    if (queued(pq, r->xid, r->kind))
        return NULL;
    for (unsigned i = PENDING; i-- > 0;)
        if (queued(pq, pq->q[i].r.xid, pq->q[i].r.kind) > 1)
            return &pq->q[i];
    return NULL;
}

/* Queues report r (everything it points to is copied). */
static void report(const dls_race *r)
{
    pending_queue *pq = t_pending ? t_pending : dls_thread_block_new(&g_pending_block, (void **)&t_pending);
    pending *q = pq ? place_for(pq, r) : NULL;
    if (!q)
        return;
    q->r = *r;
    q->r.dtype = keep(q->dtype, sizeof q->dtype, r->dtype);
    q->r.why = keep(q->why, sizeof q->why, r->why);
    q->r.producer.op = keep(q->pop, sizeof q->pop, r->producer.op);
    q->r.consumer.op = keep(q->cop, sizeof q->cop, r->consumer.op);
    int nd = r->ndim < DLS_POL_NDIM ? r->ndim : DLS_POL_NDIM;
    if (r->shape && nd > 0)
        memcpy(q->shape, r->shape, (size_t)nd * sizeof *q->shape);
    q->r.shape = r->shape ? q->shape : NULL;
    if (r->producer.stack) {
        q->pstack = *r->producer.stack;
        q->r.producer.stack = &q->pstack;
    }
    if (r->consumer.stack) {
        q->cstack = *r->consumer.stack;
        q->r.consumer.stack = &q->cstack;
    }
}

void dls_pol_check_flush(void)
{
    pending_queue *pq = t_pending;
    if (!pq)
        return;
    for (unsigned i = 0; i < pq->n; i++)
        dls_race_report(&pq->q[i].r);
    pq->n = 0;
}

/* Report name of a frontier entry. */
static const char *touch_name(const dls_pol_touch *t)
{
    return t->name[0] ? t->name : t->api;
}

/* Report name of a frontier entry's latest operation that may write. */
static const char *write_name(const dls_pol_touch *t)
{
    return t->wname[0] ? t->wname : t->wapi;
}

/* The report's view of stream id: its own device when known, else `device` (the tensor's). */
static dls_race_stream race_stream(uint64_t id, int device) DLS_REQUIRES(dls_pol_g.lock)
{
    const dls_pol_stream *st = dls_pol_stream_find(id);
    dls_race_stream r = {.id = id, .device = device, .kind = "unknown"};
    if (st) {
        r.handle = st->handle;
        r.kind = dls_cuda_stream_kind_name(st->kind);
        if (st->device >= 0)
            r.device = st->device;
    }
    return r;
}

static dls_race_stream host_side(int device)
{
    dls_race_stream r = {.host = 1, .device = device, .kind = "host"};
    return r;
}

/* The parts of a report that describe the tensor. */
static void fill_tensor(dls_race *r, const dls_pol_x *x, char *dtype, size_t n)
{
    const char *dev = dls_device_type_name(x->device.device_type);
    r->xid = x->xid;
    r->path = x->path;
    r->framework = x->framework;
    r->symbol = x->symbol;
    r->device = dev ? dev : "unknown";
    r->device_id = x->device.device_id;
    r->dtype = dls_dtype_name(x->dtype, dtype, n);
    r->ndim = x->ndim;
    r->shape = x->shape;
    r->data = x->data;
    r->lo = x->lo;
    r->hi = x->hi;
}

/* Checks access a on st against live x's frontier: an access that only reads must follow each
 * producer stream's pending writes, any other its every pending access. */
static void check_live(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid, uint64_t begin, dls_pol_x *x)
    DLS_REQUIRES(dls_pol_g.lock)
{
    int all = 1, reads = dls_pol_direction(a, x, st->id) == DLS_POL_READS;
    for (unsigned i = 0; i < x->nfront; i++) {
        const dls_pol_touch *f = &x->front[i];
        if (dls_pol_ordered(tid, st->id, begin, &f->at))
            continue;
        all = 0;
        dls_hb_epoch w = {.stream = f->at.stream, .pos = f->write};
        if (reads && (!f->write || dls_pol_ordered(tid, st->id, begin, &w)))
            continue; /* only reads of the producer's are pending */
        char dtype[48], why[320];
        dls_race r = {.kind = dls_pol_writes(a, x->lo, x->hi) ? DLS_RACE_WRITE_WRITE : DLS_RACE_WRITE_READ};
        fill_tensor(&r, x, dtype, sizeof dtype);
        r.producer.op = reads ? write_name(f) : touch_name(f);
        r.producer.stream = race_stream(f->at.stream, x->device.device_id);
        r.producer.stack = &x->stack;
        r.consumer.op = dls_pol_access_name(a);
        r.consumer.stream = race_stream(st->id, x->device.device_id);
        snprintf(why, sizeof why,
                 "stream %llu (%s) has no wait on stream %llu (%s) after position %llu: no event wait, host "
                 "synchronization or legacy-stream rule orders the use after the producer's write",
                 (unsigned long long)st->id, r.consumer.stream.kind, (unsigned long long)f->at.stream,
                 r.producer.stream.kind, (unsigned long long)(reads ? f->write : f->at.pos));
        r.why = why;
        report(&r);
    }
    if (all)
        dls_pol_x_mark_ordered(x, st->id);
}

/* Reports a two-way race of kind `kind`: access a on st (the report's producer side) against
 * use u's operation `uop` at position upos (its consumer side), with why-line `why`. */
static void report_use(dls_race_kind kind, const dls_pol_access *a, dls_pol_stream *st, const dls_pol_x *x,
                       const dls_pol_use *u, const char *uop, uint64_t upos, const char *why_text)
    DLS_REQUIRES(dls_pol_g.lock)
{
    char dtype[48], why[320];
    dls_race r = {.kind = kind};
    fill_tensor(&r, x, dtype, sizeof dtype);
    r.producer.op = dls_pol_access_name(a);
    r.producer.stream = race_stream(st->id, x->device.device_id);
    r.producer.stack = NULL;
    r.consumer.op = uop;
    r.consumer.stream = race_stream(u->stream, x->device.device_id);
    static const dls_stack unknown; /* the use's own call is long gone: no stack */
    r.consumer.stack = x->released ? &x->stack : &unknown;
    snprintf(why, sizeof why,
             "%s at position %llu of stream %llu (%s) is pending; stream %llu (%s) %s, with no wait on it", uop,
             (unsigned long long)upos, (unsigned long long)u->stream, r.consumer.stream.kind,
             (unsigned long long)st->id, r.producer.stream.kind, why_text);
    r.why = why;
    report(&r);
}

/* 1 when the next operation of tid on st is not ordered after position pos (nonzero) of u. */
static int pending_for(uint64_t tid, uint64_t begin, const dls_pol_stream *st, const dls_pol_use *u, uint64_t pos)
    DLS_REQUIRES(dls_pol_g.lock)
{
    dls_hb_epoch at = {.stream = u->stream, .pos = pos};
    return pos && !dls_pol_ordered(tid, st->id, begin, &at);
}

/* Checks access a on st against the uses of live x on other streams (the two-way rule, fix.c's
 * wait_target): a known write on either side is a race of its own kind; pairs where only
 * kernels may write, across the producer's and the consumer's sides, are kernel-pair races. */
static void check_uses(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid, uint64_t begin, dls_pol_x *x)
    DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_dir dir = dls_pol_direction(a, x, st->id);
    for (unsigned i = 0; i < x->nuse; i++) {
        const dls_pol_use *u = &x->use[i];
        if (u->stream == st->id)
            continue;
        int consumer_side = !dls_pol_x_produced_on(x, st->id) && !dls_pol_x_produced_on(x, u->stream);
        if (dir == DLS_POL_WRITES && pending_for(tid, begin, st, u, u->pos))
            report_use(DLS_RACE_WRITE_AFTER_USE, a, st, x, u, u->name, u->pos,
                       "writes the tensor that operation still uses (it may see the new data)");
        else if (pending_for(tid, begin, st, u, u->known))
            report_use(DLS_RACE_USE_AFTER_WRITE, a, st, x, u, u->kname, u->known,
                       "touches the tensor that operation writes in place");
        else if (!consumer_side && dir == DLS_POL_MAY_WRITE && pending_for(tid, begin, st, u, u->pos))
            report_use(DLS_RACE_KERNEL_PAIR, a, st, x, u, u->name, u->pos,
                       "runs a kernel on the tensor (neither kernel is known to write it)");
        else if (!consumer_side && pending_for(tid, begin, st, u, u->write))
            report_use(DLS_RACE_KERNEL_PAIR, a, st, x, u, u->wname, u->write,
                       "touches the tensor that kernel may write (neither side is known to write it)");
    }
}

/* Checks access a on st against released x: a touch of memory the consumer's work may still use
 * (its accesses before the release: release-reuse; after it: use-after-release). */
static void check_released(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid, uint64_t begin, dls_pol_x *x)
    DLS_REQUIRES(dls_pol_g.lock)
{
    if (!dls_pol_x_is_ordered(x, st->id)) /* a first use after the release, after the producer's writes */
        check_live(a, st, tid, begin, x);
    for (unsigned i = 0; i < x->nuse; i++) {
        const dls_pol_use *u = &x->use[i];
        if (u->stream == st->id || !pending_for(tid, begin, st, u, u->pos))
            continue;
        if (u->pos > u->rel) {
            report_use(DLS_RACE_USE_AFTER_RELEASE, a, st, x, u, u->name, u->pos,
                       "reuses the memory that operation, enqueued after the tensor was released, still uses");
            continue;
        }
        char dtype[48], why[320];
        dls_race r = {.kind = DLS_RACE_RELEASE_REUSE};
        fill_tensor(&r, x, dtype, sizeof dtype);
        r.producer.op = dls_pol_access_name(a);
        r.producer.stream = race_stream(st->id, x->device.device_id);
        r.producer.stack = NULL;
        r.consumer.op = u->name;
        r.consumer.stream = race_stream(u->stream, x->device.device_id);
        r.consumer.stack = &x->stack;
        snprintf(why, sizeof why,
                 "the consumer released the tensor while its operation at position %llu of stream %llu (%s) "
                 "was pending; stream %llu (%s) then touches the memory with no wait on it",
                 (unsigned long long)u->pos, (unsigned long long)u->stream, r.consumer.stream.kind,
                 (unsigned long long)st->id, r.producer.stream.kind);
        r.why = why;
        report(&r);
    }
}

void dls_pol_check_use(const dls_pol_access *a, dls_pol_stream *st, uint64_t tid, uint64_t begin)
{
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next) {
        if (!dls_pol_touches(a, x->lo, x->lo, x->hi))
            continue;
        if (!dls_pol_x_is_ordered(x, st->id))
            check_live(a, st, tid, begin, x);
        if (x->nuse)
            check_uses(a, st, tid, begin, x);
    }
    for (dls_pol_x *x = dls_pol_g.released, *next; x; x = next) {
        next = x->next;
        if (!dls_pol_touches(a, x->lo, x->lo, x->hi))
            continue;
        if (dls_pol_x_released_done(x, tid, begin) && dls_pol_x_front_complete(x, tid, begin))
            dls_pol_x_drop(x);
        else
            check_released(a, st, tid, begin, x);
    }
}

/* Checks synchronous free a (of context ctx) against x's uses: each use on a stream of another
 * context the host has not waited for is a free-during-use race (the free waits only for its own
 * context's work). */
static void check_freed(const dls_pol_access *a, uintptr_t ctx, uint64_t tid, uint64_t begin, const dls_pol_x *x)
    DLS_REQUIRES(dls_pol_g.lock)
{
    for (unsigned i = 0; i < x->nuse; i++) {
        const dls_pol_use *u = &x->use[i];
        dls_hb_epoch at = {.stream = u->stream, .pos = u->pos};
        const dls_pol_stream *us = dls_pol_stream_find(u->stream);
        if (!us || us->ctx == ctx || dls_pol_ordered(tid, DLS_POL_HOST_STREAM, begin, &at))
            continue; /* forgotten (its work is complete), waited for by the free, or already done */
        char dtype[48], why[320];
        dls_race r = {.kind = DLS_RACE_FREE_DURING_USE};
        fill_tensor(&r, x, dtype, sizeof dtype);
        r.producer.op = dls_pol_access_name(a);
        r.producer.stream = host_side(x->device.device_id);
        r.producer.stack = NULL;
        r.consumer.op = u->name;
        r.consumer.stream = race_stream(u->stream, x->device.device_id);
        static const dls_stack unknown; /* the use's own call is long gone: no stack */
        r.consumer.stack = x->released ? &x->stack : &unknown;
        snprintf(why, sizeof why,
                 "%s at position %llu of stream %llu (%s, device %d) is pending; the free waits only for the "
                 "work of its own device's context, and the host has not waited for that stream",
                 u->name, (unsigned long long)u->pos, (unsigned long long)u->stream, r.consumer.stream.kind,
                 r.consumer.stream.device);
        r.why = why;
        report(&r);
    }
}

void dls_pol_check_free(const dls_pol_access *a, uintptr_t ctx, uint64_t tid, uint64_t begin)
{
    if (!ctx) /* which context's work the free waits for is not known: nothing can be said */
        return;
    for (dls_pol_x *x = dls_pol_x_first(); x; x = dls_pol_x_next(x))
        if (x->nuse && dls_pol_reuses(a, x))
            check_freed(a, ctx, tid, begin, x);
}

/* 1 when frontier entry f's pending writes are ordered before thread tid's host. */
static int host_after_writes(const dls_pol_touch *f, uint64_t tid, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_hb_epoch w = {.stream = f->at.stream, .pos = f->write};
    return !f->write || dls_pol_ordered(tid, DLS_POL_HOST_STREAM, begin, &w);
}

/* Reports host-read of x for each producer write pending at its import (x->host_pending): the
 * host access `op` (with its stack: NULL for the caller's) made while they were pending, `how`
 * saying what happened and what dlsync could see. */
static void report_host(const dls_pol_x *x, const char *op, const dls_stack *stack, const char *how)
    DLS_REQUIRES(dls_pol_g.lock)
{
    for (unsigned i = 0; i < x->nfront; i++) {
        const dls_pol_touch *f = &x->front[i];
        if (!(x->host_pending & (1u << i)))
            continue;
        char dtype[48], why[320];
        dls_race r = {.kind = DLS_RACE_HOST_READ};
        fill_tensor(&r, x, dtype, sizeof dtype);
        r.producer.op = write_name(f);
        r.producer.stream = race_stream(f->at.stream, x->device.device_id);
        r.producer.stack = &x->stack;
        r.consumer.op = op;
        r.consumer.stream = host_side(x->device.device_id);
        r.consumer.stack = stack;
        snprintf(why, sizeof why,
                 "the tensor is host-visible and the host had not synchronized with stream %llu (%s) since position "
                 "%llu (%s): %s",
                 (unsigned long long)f->at.stream, r.producer.stream.kind, (unsigned long long)f->write,
                 r.producer.op ? r.producer.op : "?", how);
        r.why = why;
        report(&r);
    }
}

/* Reports the host access caught on x's pages, fault. */
static void report_fault(const dls_pol_x *x, const dls_pol_fault *fault) DLS_REQUIRES(dls_pol_g.lock)
{
    char op[160], how[160];
    snprintf(op, sizeof op, "host %s after %s", fault->store ? "write" : "read",
             x->host_importer ? x->host_importer : "import");
    snprintf(how, sizeof how, "thread %d %s byte 0x%jx of it, caught on its protected pages", (int)fault->tid,
             fault->store ? "wrote" : "read", (uintmax_t)fault->addr);
    report_host(x, op, &fault->stack, how);
}

/* Ends x's watch, reporting an access caught and not reported yet. */
static void unwatch(dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_fault fault;
    if (dls_pol_pages_unwatch(x->watch, &fault))
        report_fault(x, &fault);
    x->watch = 0;
    atomic_fetch_sub_explicit(&dls_pol_g.nhost, 1, memory_order_relaxed);
}

/* Why the pages of host-visible x, imported from page-locked memory ending at pinned_end (0: not
 * page-locked memory CUDA knows), cannot be protected without protecting other data, or NULL. */
static const char *unwatchable(const dls_pol_x *x, uintptr_t pinned_end) DLS_REQUIRES(dls_pol_g.lock)
{
    uintptr_t page = dls_pol_pages_size();
    if (x->device.device_type == kDLCUDAManaged)
        return "managed memory migrates between host and device, so its pages are not protected";
    if (!pinned_end)
        return "the memory is not page-locked memory of CUDA's, which the driver may write through the CPU's page "
               "tables, so its pages are not protected";
    if (x->lo % page)
        return "the tensor does not start on a page boundary and its pages are not protected (they hold other data)";
    if (x->hi % page && x->hi != pinned_end)
        return "the tensor ends inside a page that holds other data, so its pages are not protected";
    return NULL;
}

void dls_pol_check_import(dls_pol_x *x, uint64_t tid, const char *importer, uintptr_t pinned_end)
{
    if (x->watch) /* imported again while its pages are watched: they stay watched */
        return;
    x->host_pending = 0;
    for (unsigned i = 0; i < x->nfront; i++)
        if (!host_after_writes(&x->front[i], tid, DLS_HB_NOW))
            x->host_pending |= 1u << i;
    if (!x->host_pending)
        return;
    x->host_tid = tid;
    x->host_importer = importer;
    const char *why = unwatchable(x, pinned_end);
    uintptr_t page = dls_pol_pages_size();
    if (!why)
        x->watch = dls_pol_pages_watch(x->lo, (x->hi + page - 1) / page * page, &why);
    if (x->watch) {
        atomic_fetch_add_explicit(&dls_pol_g.nhost, 1, memory_order_relaxed);
        return;
    }
    char op[160], how[320];
    snprintf(op, sizeof op, "host access after %s", importer ? importer : "import");
    snprintf(how, sizeof how,
             "it was imported then, and dlsync reports the handover itself, as it cannot see the host's access: %s",
             why);
    report_host(x, op, NULL, how);
}

/* 1 when the writes pending at x's import are complete as far as dlsync knows. */
static int host_done(const dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock)
{
    for (unsigned i = 0; i < x->nfront; i++)
        if ((x->host_pending & (1u << i)) && !host_after_writes(&x->front[i], x->host_tid, DLS_HB_NOW))
            return 0;
    return 1;
}

void dls_pol_check_host(void)
{
    for (dls_pol_x *x = dls_pol_x_first(); x && atomic_load_explicit(&dls_pol_g.nhost, memory_order_relaxed);
         x = dls_pol_x_next(x)) {
        if (!x->watch)
            continue;
        dls_pol_fault fault;
        if (dls_pol_pages_fault_of(x->watch, &fault))
            report_fault(x, &fault);
        if (host_done(x))
            unwatch(x);
    }
}

void dls_pol_check_host_of(dls_pol_x *x)
{
    if (x->watch)
        unwatch(x);
}
