/* The reference's reader: a cudasim trace (tests/cudasim/trace.h, v1) into the model of
 * oracle_internal.h: threads with their call begins and returns, streams with their per-thread
 * lanes, operations with their accesses and points, events with their records, host waits,
 * notes, and the sweep's order of lines. Unknown tags are skipped (a later trace may add some). */
#include "oracle_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void *oracle_grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    size_t c = *cap ? *cap * 2 : 16;
    while (c <= n)
        c *= 2;
    void *q = realloc(p, c * size);
    if (!q) {
        fprintf(stderr, "oracle: out of memory\n");
        exit(2);
    }
    *cap = c;
    return q;
}

#define GROW(arr, n, cap) ((arr) = oracle_grow((arr), &(cap), (n), sizeof *(arr)))

/* ---- the id map ---- */

static size_t slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

int oracle_map_get(const o_map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return 0;
    for (size_t i = slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] == ORACLE_NONE)
            return 0;
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return 1;
        }
    }
}

void oracle_map_put(o_map *m, uint64_t key, uint32_t val)
{
    if (2 * (m->n + 1) > m->cap) {
        o_map bigger = {.cap = m->cap ? 2 * m->cap : 64};
        bigger.keys = malloc(bigger.cap * sizeof *bigger.keys);
        bigger.vals = malloc(bigger.cap * sizeof *bigger.vals);
        if (!bigger.keys || !bigger.vals) {
            fprintf(stderr, "oracle: out of memory\n");
            exit(2);
        }
        memset(bigger.vals, 0xff, bigger.cap * sizeof *bigger.vals);
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i] != ORACLE_NONE)
                oracle_map_put(&bigger, m->keys[i], m->vals[i]);
        oracle_map_free(m);
        *m = bigger;
    }
    size_t i = slot(key, m->cap);
    while (m->vals[i] != ORACLE_NONE && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->vals[i] == ORACLE_NONE)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
}

void oracle_map_free(o_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- reading ---- */

typedef struct {
    o_model *m;
    size_t line;
    char *err;
    size_t nerr;
} reader;

__attribute__((format(printf, 2, 3))) static int bad(reader *r, const char *fmt, ...)
{
    int k = snprintf(r->err, r->nerr, "trace line %zu: ", r->line);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < r->nerr)
        vsnprintf(r->err + k, r->nerr - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t thread_of_tid(o_model *m, uint64_t tid)
{
    uint32_t t;
    if (oracle_map_get(&m->thread_ids, tid, &t))
        return t;
    GROW(m->threads, m->nthreads, m->capthreads);
    t = (uint32_t)m->nthreads++;
    memset(&m->threads[t], 0, sizeof m->threads[t]);
    m->threads[t].tid = tid;
    oracle_map_put(&m->thread_ids, tid, t);
    return t;
}

/* The thread of call `call` (0, or a call never begun: a thread of its own, "outside calls"). */
static uint32_t thread_of_call(o_model *m, uint64_t call)
{
    uint32_t t;
    if (call && oracle_map_get(&m->call_threads, call, &t))
        return t;
    return thread_of_tid(m, UINT64_MAX);
}

static uint32_t ctx_of(o_model *m, uint64_t uid)
{
    uint32_t c;
    if (oracle_map_get(&m->ctx_ids, uid, &c))
        return c;
    GROW(m->ctxs, m->nctxs, m->capctxs);
    c = (uint32_t)m->nctxs++;
    memset(&m->ctxs[c], 0, sizeof m->ctxs[c]);
    m->ctxs[c].uid = uid;
    m->ctxs[c].legacy = ORACLE_NONE;
    oracle_map_put(&m->ctx_ids, uid, c);
    return c;
}

/* Stream `id`, made when unknown (a stream without an S line: non-blocking, a context of its own). */
static uint32_t stream_of(o_model *m, uint64_t id)
{
    uint32_t s;
    if (oracle_map_get(&m->stream_ids, id, &s))
        return s;
    GROW(m->streams, m->nstreams, m->capstreams);
    s = (uint32_t)m->nstreams++;
    memset(&m->streams[s], 0, sizeof m->streams[s]);
    m->streams[s].id = id;
    m->streams[s].kind = SK_USER;
    m->streams[s].ctx = ctx_of(m, UINT64_MAX - id);
    oracle_map_put(&m->stream_ids, id, s);
    return s;
}

static uint32_t event_of(o_model *m, uint64_t id)
{
    uint32_t e;
    if (oracle_map_get(&m->event_ids, id, &e))
        return e;
    GROW(m->events, m->nevents, m->capevents);
    e = (uint32_t)m->nevents++;
    memset(&m->events[e], 0, sizeof m->events[e]);
    m->events[e].id = id;
    oracle_map_put(&m->event_ids, id, e);
    return e;
}

enum { PEND_OP, PEND_WAIT, PEND_NOTE, PEND_DESTROY };

/* A pending point: its kind (2 bits), the thread's open calls at it (6 bits) and its index. */
#define PEND_DEPTH_SHIFT 56
#define PEND_INDEX_MASK ((UINT64_C(1) << PEND_DEPTH_SHIFT) - 1)

/* A point of thread t at stamp st; its nextr comes when the innermost call open at it returns
 * (a call a hook made and that returns meanwhile does not return the program's call). */
static o_point point(o_model *m, uint32_t t, uint64_t st, int pend_kind, size_t index)
{
    o_thread *th = &m->threads[t];
    uint64_t depth = th->depth < 63 ? (uint64_t)th->depth : 63;
    GROW(th->pending, th->npending, th->cappending);
    th->pending[th->npending++] = (uint64_t)pend_kind << 62 | depth << PEND_DEPTH_SHIFT | index;
    return (o_point){.thread = t, .stamp = st, .lastc = th->lastc, .nextr = ORACLE_NEVER, .depth = (int)depth};
}

/* The thread's next line at stamp st: the return of its call at depth `depth` (1: outermost)
 * publishes the points made inside that call, and the notes; a call begin or a note (depth 0)
 * only the thread's notes (a host access is over when the thread goes on). */
static void publish(o_model *m, o_thread *th, uint64_t st, int depth)
{
    size_t kept = 0;
    for (size_t k = 0; k < th->npending; k++) {
        uint64_t v = th->pending[k];
        size_t i = (size_t)(v & PEND_INDEX_MASK);
        unsigned kind = (unsigned)(v >> 62);
        int at = (int)((v >> PEND_DEPTH_SHIFT) & 63);
        if (kind != PEND_NOTE && (depth == 0 || at < depth)) {
            th->pending[kept++] = v;
            continue;
        }
        o_point *pt = kind == PEND_OP     ? &m->ops[i].at
                      : kind == PEND_WAIT ? &m->waits[i].at
                      : kind == PEND_NOTE ? &m->notes[i].at
                                          : &m->streams[i].destroy;
        pt->nextr = st;
    }
    th->npending = kept;
}

static void add_ev(o_model *m, ev_type type, size_t index)
{
    GROW(m->evs, m->nevs, m->capevs);
    m->evs[m->nevs++] = (o_ev){.type = type, .index = (uint32_t)index};
}

/* The return of thread t's call at depth `depth`. */
static void add_return(o_model *m, uint32_t t, int depth)
{
    add_ev(m, EV_RETURN, t);
    m->evs[m->nevs - 1].depth = depth;
}

/* 1 when call `call`, thread th's innermost open one, waits for its whole context: the
 * simulator's context synchronize, the implicit waits of a free, a primary context's reset, and
 * a kernel's first (lazy) load. */
static int context_wait(const o_thread *th, uint64_t call)
{
    static const char *const names[] = {"cuCtxSynchronize",
                                        "cuMemFree",
                                        "cuMemFree_v2",
                                        "cuMemFreeHost",
                                        "cuDevicePrimaryCtxReset",
                                        "cuDevicePrimaryCtxReset_v2",
                                        "cuLaunchKernel",
                                        "cuLaunchKernelEx",
                                        "cuLaunchKernel_ptsz",
                                        "cuLaunchKernelEx_ptsz"};
    if (th->depth < 1 || th->depth > 16 || th->open[th->depth - 1].call != call)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(th->open[th->depth - 1].name, names[i]) == 0)
            return 1;
    return 0;
}

static int read_u64(const char **p, uint64_t *v)
{
    char *end;
    while (**p == ' ')
        (*p)++;
    if (**p < '0' || **p > '9')
        return -1;
    *v = strtoull(*p, &end, 0);
    *p = end;
    return 0;
}

/* The next space-separated word of *p into w (n bytes). */
static int read_word(const char **p, char *w, size_t n)
{
    while (**p == ' ')
        (*p)++;
    size_t k = 0;
    while (**p && **p != ' ' && **p != '\n') {
        if (k + 1 < n)
            w[k++] = **p;
        (*p)++;
    }
    w[k] = '\0';
    return k ? 0 : -1;
}

static op_kind op_kind_of(const char *w)
{
    static const char *const names[] = {"kernel", "copy", "set", "hostfn", "record", "wait", "mark"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(w, names[i]) == 0)
            return (op_kind)i;
    return OK_OTHER;
}

static int parse_op(reader *r, uint64_t st, const char *p)
{
    o_model *m = r->m;
    uint64_t id, call, sid, seq;
    char kind[32];
    if (read_u64(&p, &id) || read_u64(&p, &call) || read_u64(&p, &sid) || read_u64(&p, &seq) ||
        read_word(&p, kind, sizeof kind))
        return bad(r, "malformed O line");
    GROW(m->ops, m->nops, m->capops);
    size_t i = m->nops++;
    o_op *op = &m->ops[i];
    memset(op, 0, sizeof *op);
    op->id = id;
    op->call = call;
    op->stream = stream_of(m, sid);
    op->seq = seq;
    op->kind = op_kind_of(kind);
    op->record_of = op->wait_for = ORACLE_NONE;
    op->acc = (uint32_t)m->nacc;
    char w[96];
    while (read_word(&p, w, sizeof w) == 0) {
        char mode;
        unsigned long long lo, len;
        if (sscanf(w, "%c:%llx:%llu", &mode, &lo, &len) != 3 || (mode != 'r' && mode != 'w' && mode != 'm'))
            return bad(r, "malformed access %s", w);
        GROW(m->acc, m->nacc, m->capacc);
        m->acc[m->nacc++] = (o_access){lo, lo + len, mode == 'r' ? AC_READ : mode == 'w' ? AC_WRITE : AC_MAY};
        op->nacc++;
    }
    uint32_t t = thread_of_call(m, call);
    op->at = point(m, t, st, PEND_OP, i);
    oracle_map_put(&m->op_ids, id, (uint32_t)i);
    o_stream *s = &m->streams[op->stream];
    size_t l = 0;
    while (l < s->nlanes && s->lanes[l].thread != t)
        l++;
    if (l == s->nlanes) {
        GROW(s->lanes, s->nlanes, s->cap);
        s->lanes[s->nlanes++] = (o_lane){.thread = t};
    }
    o_lane *lane = &s->lanes[l];
    GROW(lane->ops, lane->n, lane->cap);
    lane->ops[lane->n++] = (uint32_t)i;
    GROW(s->byseq, s->nbyseq, s->capseq);
    s->byseq[s->nbyseq++] = (uint32_t)i;
    const o_thread *th = &m->threads[t];
    snprintf(op->name, sizeof op->name, "?");
    for (int k = th->depth < 16 ? th->depth : 16; k-- > 0;)
        if (th->open[k].call == call) {
            memcpy(op->name, th->open[k].name, sizeof op->name);
            break;
        }
    add_ev(m, EV_OP, i);
    return 0;
}

static int parse_line(reader *r, const char *p)
{
    o_model *m = r->m;
    uint64_t st;
    char tag[8];
    if (read_u64(&p, &st) || read_word(&p, tag, sizeof tag))
        return bad(r, "no stamp and tag");
    if (strcmp(tag, "C") == 0) {
        uint64_t call, tid;
        char name[128];
        if (read_u64(&p, &call) || read_u64(&p, &tid) || read_word(&p, name, sizeof name))
            return bad(r, "malformed C line");
        uint32_t t = thread_of_tid(m, tid);
        oracle_map_put(&m->call_threads, call, t);
        o_thread *th = &m->threads[t];
        publish(m, th, st, 0);
        if (!m->body_order) {
            th->lastc = st;
            add_ev(m, EV_CALL, t);
        }
        if (th->depth < 16) {
            th->open[th->depth].call = call;
            th->open[th->depth].begin = m->body_order ? 0 : st;
            snprintf(th->open[th->depth].name, sizeof th->open[0].name, "%.39s", name);
        }
        th->depth++;
        m->ncalls++;
        return 0;
    }
    if (strcmp(tag, "B") == 0 || strcmp(tag, "D") == 0) {
        uint64_t call;
        if (read_u64(&p, &call))
            return bad(r, "malformed %s line", tag);
        m->nbodies++;
        if (!m->body_order)
            return 0;
        uint32_t t = thread_of_call(m, call);
        o_thread *th = &m->threads[t];
        if (tag[0] == 'B') {
            th->lastc = st;
            if (th->depth > 0 && th->depth <= 16 && th->open[th->depth - 1].call == call)
                th->open[th->depth - 1].begin = st;
            add_ev(m, EV_CALL, t);
        } else {
            publish(m, th, st, th->depth);
            add_return(m, t, th->depth);
            if (th->depth > 1 && th->depth <= 16 && th->open[th->depth - 2].begin)
                th->lastc = th->open[th->depth - 2].begin; /* the enclosing call's body goes on */
        }
        return 0;
    }
    if (strcmp(tag, "R") == 0) {
        uint64_t call;
        if (read_u64(&p, &call))
            return bad(r, "malformed R line");
        uint32_t t = thread_of_call(m, call);
        o_thread *th = &m->threads[t];
        if (th->depth > 0)
            th->depth--;
        if (!m->body_order) {
            publish(m, th, st, th->depth + 1);
            add_return(m, t, th->depth + 1);
            if (th->depth > 0 && th->depth <= 16)
                th->lastc = th->open[th->depth - 1].begin; /* the enclosing call goes on */
        }
        return 0;
    }
    if (strcmp(tag, "S") == 0) {
        uint64_t id, ctx, dev, blocking;
        char kind[16];
        if (read_u64(&p, &id) || read_u64(&p, &ctx) || read_u64(&p, &dev) || read_word(&p, kind, sizeof kind) ||
            read_u64(&p, &blocking))
            return bad(r, "malformed S line");
        uint32_t s = stream_of(m, id);
        o_stream *so = &m->streams[s];
        so->ctx = ctx_of(m, ctx);
        so->dev = (int)dev;
        so->kind = strcmp(kind, "legacy") == 0 ? SK_LEGACY : strcmp(kind, "ptds") == 0 ? SK_PTDS : SK_USER;
        so->blocking = blocking != 0;
        o_ctx *c = &m->ctxs[so->ctx];
        if (so->kind == SK_LEGACY)
            c->legacy = s;
        GROW(c->streams, c->nstreams, c->cap);
        c->streams[c->nstreams++] = s;
        return 0;
    }
    if (strcmp(tag, "O") == 0)
        return parse_op(r, st, p);
    if (strcmp(tag, "E") == 0 || strcmp(tag, "W") == 0) {
        uint64_t opid, ev;
        uint32_t i;
        if (read_u64(&p, &opid) || read_u64(&p, &ev) || !oracle_map_get(&m->op_ids, opid, &i))
            return bad(r, "malformed %s line", tag);
        uint32_t e = event_of(m, ev);
        if (tag[0] == 'E') {
            m->ops[i].record_of = e;
            o_event *eo = &m->events[e];
            GROW(eo->records, eo->n, eo->cap);
            eo->records[eo->n++] = i;
        } else {
            m->ops[i].wait_for = e;
        }
        return 0;
    }
    if (strcmp(tag, "P") == 0) {
        uint64_t opid, sid, seq;
        uint32_t i;
        if (read_u64(&p, &opid) || read_u64(&p, &sid) || read_u64(&p, &seq) || !oracle_map_get(&m->op_ids, opid, &i))
            return bad(r, "malformed P line");
        o_op *op = &m->ops[i];
        if (!op->ndep)
            op->dep = (uint32_t)m->ndeps;
        if (op->dep + op->ndep != m->ndeps)
            return bad(r, "P line apart from its operation's");
        GROW(m->deps, m->ndeps, m->capdeps);
        m->deps[m->ndeps].stream = stream_of(m, sid);
        m->deps[m->ndeps++].seq = seq;
        op->ndep++;
        return 0;
    }
    if (strcmp(tag, "H") == 0 || strcmp(tag, "HE") == 0) {
        uint64_t call, a, seq = 0;
        if (read_u64(&p, &call) || read_u64(&p, &a) || (tag[1] != 'E' && read_u64(&p, &seq)))
            return bad(r, "malformed %s line", tag);
        uint32_t t = thread_of_call(m, call), s = tag[1] == 'E' ? ORACLE_NONE : stream_of(m, a), ctx = ORACLE_NONE;
        o_thread *th = &m->threads[t];
        if (s != ORACLE_NONE && context_wait(th, call)) {
            ctx = m->streams[s].ctx;
            if (th->ctx_call == call && th->ctx_of_call == ctx)
                return 0; /* this context's wait is noted already */
            th->ctx_call = call;
            th->ctx_of_call = ctx;
        }
        GROW(m->waits, m->nwaits, m->capwaits);
        size_t i = m->nwaits++;
        o_hostwait *w = &m->waits[i];
        w->stream = ctx == ORACLE_NONE ? s : ORACLE_NONE;
        w->event = tag[1] == 'E' ? event_of(m, a) : ORACLE_NONE;
        w->ctx = ctx;
        w->seq = seq;
        w->at = point(m, t, st, PEND_WAIT, i);
        add_ev(m, EV_HOSTWAIT, i);
        return 0;
    }
    if (strcmp(tag, "N") == 0) {
        uint64_t call, tid;
        if (read_u64(&p, &call) || read_u64(&p, &tid))
            return bad(r, "malformed N line");
        while (*p == ' ')
            p++;
        GROW(m->notes, m->nnotes, m->capnotes);
        size_t i = m->nnotes++;
        o_note *n = &m->notes[i];
        n->text = strndup(p, strcspn(p, "\n"));
        n->import = strncmp(n->text, "import ", 7) == 0;
        n->hostread = strncmp(n->text, "hostread ", 9) == 0;
        uint32_t t = thread_of_tid(m, tid);
        publish(m, &m->threads[t], st, 0);
        n->at = point(m, t, st, PEND_NOTE, i);
        n->at.lastc = st; /* the note is the program's own point: anything returned before it */
        add_ev(m, EV_NOTE, i);
        return 0;
    }
    if (strcmp(tag, "X") == 0) {
        uint64_t id, call;
        if (read_u64(&p, &id) || read_u64(&p, &call))
            return bad(r, "malformed X line");
        uint32_t s = stream_of(m, id);
        if (call) /* call 0: a per-thread stream of an exiting thread, ordered by nothing seen */
            m->streams[s].destroy = point(m, thread_of_call(m, call), st, PEND_DESTROY, s);
        m->streams[s].destroyed = call != 0;
        return 0;
    }
    return 0; /* M, F, G and tags a later trace adds */
}

/* Fills each event's prefix maxima of its records' nextr and suffix minima of their lastc. */
static void index_events(o_model *m)
{
    for (size_t e = 0; e < m->nevents; e++) {
        o_event *ev = &m->events[e];
        ev->max_nextr = malloc((ev->n + 1) * sizeof *ev->max_nextr);
        ev->min_lastc = malloc((ev->n + 1) * sizeof *ev->min_lastc);
        if (!ev->max_nextr || !ev->min_lastc) {
            fprintf(stderr, "oracle: out of memory\n");
            exit(2);
        }
        uint64_t mx = 0, mn = ORACLE_NEVER;
        for (size_t i = 0; i < ev->n; i++) {
            uint64_t v = m->ops[ev->records[i]].at.nextr;
            mx = v > mx ? v : mx;
            ev->max_nextr[i] = mx;
        }
        for (size_t i = ev->n; i-- > 0;) {
            uint64_t v = m->ops[ev->records[i]].at.lastc;
            mn = v < mn ? v : mn;
            ev->min_lastc[i] = mn;
        }
    }
}

int oracle_model_parse(o_model *m, const char *text, char *err, size_t n)
{
    reader r = {.m = m, .err = err, .nerr = n};
    int rc = 0;
    for (const char *p = text; *p && rc == 0;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        r.line++;
        if (len) {
            char buf[4096];
            const char *line = p;
            if (len < sizeof buf) { /* a copy ends the line (the readers stop at the NUL) */
                memcpy(buf, p, len);
                buf[len] = '\0';
                line = buf;
            }
            rc = parse_line(&r, line);
        }
        p += len + (eol != NULL);
    }
    m->nlines = r.line;
    if (rc == 0 && m->body_order && m->ncalls && !m->nbodies) {
        snprintf(err, n, "body order asked of a trace without B and D lines");
        rc = -1;
    }
    if (rc == 0)
        index_events(m);
    return rc;
}

void oracle_model_free(o_model *m)
{
    for (size_t i = 0; i < m->nstreams; i++) {
        for (size_t l = 0; l < m->streams[i].nlanes; l++)
            free(m->streams[i].lanes[l].ops);
        free(m->streams[i].lanes);
        free(m->streams[i].byseq);
    }
    for (size_t i = 0; i < m->nevents; i++) {
        free(m->events[i].records);
        free(m->events[i].max_nextr);
        free(m->events[i].min_lastc);
    }
    for (size_t i = 0; i < m->nthreads; i++)
        free(m->threads[i].pending);
    for (size_t i = 0; i < m->nctxs; i++)
        free(m->ctxs[i].streams);
    for (size_t i = 0; i < m->nnotes; i++)
        free(m->notes[i].text);
    free(m->ops);
    free(m->acc);
    free(m->deps);
    free(m->streams);
    free(m->ctxs);
    free(m->events);
    free(m->waits);
    free(m->notes);
    free(m->threads);
    free(m->evs);
    o_map *maps[] = {&m->op_ids, &m->stream_ids, &m->event_ids, &m->ctx_ids, &m->thread_ids, &m->call_threads};
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++)
        oracle_map_free(maps[i]);
    memset(m, 0, sizeof *m);
}
