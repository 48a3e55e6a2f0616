/* The reference's exchanges and pairs (oracle.h, "Notes" and "Pairs"): the program's notes say
 * which memory each exchange is and when its life begins and ends; the trace's accesses say which
 * operations touched that memory; the guaranteed pasts (oracle_past.c) say which pairs of them
 * are ordered. */
#include "oracle_internal.h"

#include <inttypes.h>
#include <stdio.h>

/* What op i does to [lo, hi): 0 (nothing), AC_READ, AC_MAY or AC_WRITE (the strongest). */
static unsigned dir_of(const o_model *m, size_t i, uint64_t lo, uint64_t hi)
{
    const o_op *op = &m->ops[i];
    unsigned d = 0;
    for (uint32_t k = 0; k < op->nacc; k++) {
        const o_access *a = &m->acc[op->acc + k];
        if (a->lo < hi && lo < a->hi)
            d |= a->mode;
    }
    return d & AC_WRITE ? AC_WRITE : d & AC_MAY ? AC_MAY : d;
}

static int may_write(unsigned dir)
{
    return (dir & (AC_WRITE | AC_MAY)) != 0;
}

/* An operation touching an exchange's memory. */
typedef struct {
    uint32_t op;
    unsigned dir;
} touch;

typedef struct {
    touch *v;
    size_t n, cap;
} touches;

static void add_touch(touches *l, uint32_t op, unsigned dir)
{
    l->v = oracle_grow(l->v, &l->cap, l->n, sizeof *l->v);
    l->v[l->n++] = (touch){op, dir};
}

static void add_pair(oracle *o, size_t x, oracle_side a, oracle_side b, oracle_kind kind, int guaranteed)
{
    o->pairs = oracle_grow(o->pairs, &o->cappairs, o->npairs, sizeof *o->pairs);
    o->pairs[o->npairs++] = (oracle_pair){.a = a, .b = b, .kind = kind, .guaranteed = guaranteed, .exchange = x};
    if (!guaranteed) {
        o->x[x].unguaranteed++;
        o->x[x].kinds |= 1u << kind;
    }
}

static oracle_side op_side(uint32_t i)
{
    return (oracle_side){.host = 0, .index = i};
}

static oracle_side host_side(size_t note)
{
    return (oracle_side){.host = 1, .index = note};
}

/* The latest accesses of `from` (in stamp order) that no later one of them has in its past;
 * only those that may write when `writes`. */
static void latest(const o_past *p, const touches *from, int writes, touches *out)
{
    for (size_t j = from->n; j-- > 0;) {
        const touch *t = &from->v[j];
        if (writes && !may_write(t->dir))
            continue;
        int dominated = 0;
        for (size_t k = 0; k < out->n && !dominated; k++)
            dominated = oracle_in_past(p, t->op, out->v[k].op);
        if (!dominated)
            add_touch(out, t->op, t->dir);
    }
}

/* The earliest accesses of `from` that have no other one of them in their past. */
static void earliest(const o_past *p, const touches *from, int writes, touches *out)
{
    for (size_t j = 0; j < from->n; j++) {
        const touch *t = &from->v[j];
        if (writes && !may_write(t->dir))
            continue;
        int dominated = 0;
        for (size_t k = 0; k < out->n && !dominated; k++)
            dominated = oracle_in_past(p, out->v[k].op, t->op);
        if (!dominated)
            add_touch(out, t->op, t->dir);
    }
}

/* Host accesses (note indices) of one exchange. */
typedef struct {
    size_t *v;
    size_t n, cap;
} notes;

/* The pairs of exchange x: its accesses in the three windows, and its host reads. */
static void pairs_of(oracle *o, size_t x, const touches *all, const notes *reads, uint64_t end)
{
    const o_model *m = &o->m;
    const o_past *p = &o->past;
    const oracle_exchange *e = &o->x[x];
    uint64_t rel = e->release_stamp ? e->release_stamp : ORACLE_NEVER;
    touches prior = {0}, uses = {0}, after = {0}, m_all = {0}, m_w = {0}, n_all = {0}, n_w = {0};
    for (size_t j = 0; j < all->n; j++) {
        uint64_t st = m->ops[all->v[j].op].at.stamp;
        touches *to = st < e->export_stamp ? &prior : st < rel && st < end ? &uses : st < end ? &after : NULL;
        if (to)
            add_touch(to, all->v[j].op, all->v[j].dir);
    }
    latest(p, &prior, 0, &m_all);
    latest(p, &prior, 1, &m_w);
    earliest(p, &after, 0, &n_all);
    earliest(p, &after, 1, &n_w);
    /* the producer's side before each use, and before the host's reads */
    for (size_t j = 0; j < uses.n; j++) {
        const touch *u = &uses.v[j];
        const touches *before = may_write(u->dir) ? &m_all : &m_w;
        oracle_kind k = u->dir == AC_WRITE ? ORACLE_WRITE_WRITE : ORACLE_WRITE_READ;
        for (size_t i = 0; i < before->n; i++)
            add_pair(o, x, op_side(before->v[i].op), op_side(u->op), k, oracle_in_past(p, before->v[i].op, u->op));
    }
    for (size_t h = 0; h < reads->n; h++)
        for (size_t i = 0; i < m_w.n; i++)
            add_pair(o, x, op_side(m_w.v[i].op), host_side(reads->v[h]), ORACLE_HOST_READ,
                     bits_has(p->hk_note[reads->v[h]], m_w.v[i].op));
    /* two uses on the two sides of a conflict */
    for (size_t j = 0; j < uses.n; j++)
        for (size_t i = 0; i < j; i++) {
            const touch *a = &uses.v[i], *b = &uses.v[j];
            if (!may_write(a->dir) && !may_write(b->dir))
                continue;
            oracle_kind k = b->dir == AC_WRITE   ? ORACLE_WRITE_AFTER_USE
                            : a->dir == AC_WRITE ? ORACLE_USE_AFTER_WRITE
                                                 : ORACLE_KERNEL_PAIR;
            add_pair(o, x, op_side(a->op), op_side(b->op), k, oracle_in_past(p, a->op, b->op));
        }
    /* the reuse after the release: after every use and host read, and after the producer's side */
    for (size_t j = 0; j < uses.n; j++) {
        const touch *u = &uses.v[j];
        const touches *next = may_write(u->dir) ? &n_all : &n_w;
        for (size_t i = 0; i < next->n; i++)
            add_pair(o, x, op_side(u->op), op_side(next->v[i].op), ORACLE_RELEASE_REUSE,
                     oracle_in_past(p, u->op, next->v[i].op));
    }
    for (size_t h = 0; h < reads->n; h++)
        for (size_t i = 0; i < n_w.n; i++)
            add_pair(o, x, host_side(reads->v[h]), op_side(n_w.v[i].op), ORACLE_RELEASE_REUSE,
                     oracle_before(&m->notes[reads->v[h]].at, &m->ops[n_w.v[i].op].at));
    for (size_t j = 0; j < n_all.n; j++) {
        const touch *n = &n_all.v[j];
        const touches *before = may_write(n->dir) ? &m_all : &m_w;
        oracle_kind k = n->dir == AC_WRITE ? ORACLE_WRITE_WRITE : ORACLE_WRITE_READ;
        for (size_t i = 0; i < before->n; i++)
            add_pair(o, x, op_side(before->v[i].op), op_side(n->op), k, oracle_in_past(p, before->v[i].op, n->op));
    }
    touches *lists[] = {&prior, &uses, &after, &m_all, &m_w, &n_all, &n_w};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        free(lists[i]->v);
}

/* The exchange labelled `label`, or -1. */
static long find(const oracle *o, const char *label)
{
    for (size_t i = o->nx; i-- > 0;)
        if (strcmp(o->x[i].label, label) == 0)
            return (long)i;
    return -1;
}

/* Reads the export notes: the exchanges, in export order. */
static int read_exports(oracle *o, char *err, size_t n)
{
    const o_model *m = &o->m;
    for (size_t k = 0; k < m->nnotes; k++) {
        const o_note *note = &m->notes[k];
        char label[64];
        unsigned long long addr, len;
        if (strncmp(note->text, "export ", 7) != 0)
            continue;
        if (sscanf(note->text, "export %63s %llx %llu", label, &addr, &len) != 3) {
            snprintf(err, n, "note at stamp %" PRIu64 ": \"%s\" is not export <x> <addr> <len>", note->at.stamp,
                     note->text);
            return -1;
        }
        if (find(o, label) >= 0) {
            snprintf(err, n, "note at stamp %" PRIu64 ": exchange %s exported twice", note->at.stamp, label);
            return -1;
        }
        o->x = oracle_grow(o->x, &o->capx, o->nx, sizeof *o->x);
        oracle_exchange *e = &o->x[o->nx++];
        memset(e, 0, sizeof *e);
        e->label = strdup(label);
        e->addr = addr;
        e->len = len;
        e->export_stamp = note->at.stamp;
        e->tid = (int)m->threads[note->at.thread].tid;
    }
    return 0;
}

/* Reads the other notes: releases and host reads (reads[x]), and checks fill and use labels
 * against the thread's latest operation that touched memory. */
static int read_notes(oracle *o, notes *reads, char *err, size_t n)
{
    const o_model *m = &o->m;
    uint32_t *last = malloc((m->nthreads + 1) * sizeof *last); /* per thread: latest op with accesses */
    if (!last)
        exit(2);
    memset(last, 0xff, (m->nthreads + 1) * sizeof *last);
    int rc = 0;
    for (size_t i = 0; i < m->nevs && rc == 0; i++) {
        const o_ev *ev = &m->evs[i];
        if (ev->type == EV_OP && m->ops[ev->index].nacc)
            last[m->ops[ev->index].at.thread] = ev->index;
        if (ev->type != EV_NOTE)
            continue;
        const o_note *note = &m->notes[ev->index];
        char cmd[16], label[64];
        if (sscanf(note->text, "%15s %63s", cmd, label) != 2)
            continue;
        int is_release = strcmp(cmd, "release") == 0, is_read = strcmp(cmd, "hostread") == 0;
        if (!is_release && !is_read && strcmp(cmd, "fill") != 0 && strcmp(cmd, "use") != 0)
            continue;
        long x = find(o, label);
        if (x < 0) {
            snprintf(err, n, "note at stamp %" PRIu64 ": %s of unknown exchange %s", note->at.stamp, cmd, label);
            rc = -1;
        } else if (is_release) {
            o->x[x].release_stamp = note->at.stamp;
        } else if (is_read) {
            notes *r = &reads[x];
            r->v = oracle_grow(r->v, &r->cap, r->n, sizeof *r->v);
            r->v[r->n++] = ev->index;
        } else {
            uint32_t op = last[note->at.thread];
            if (op == ORACLE_NONE || !dir_of(m, op, o->x[x].addr, o->x[x].addr + o->x[x].len)) {
                snprintf(err, n,
                         "note at stamp %" PRIu64 ": %s %s, but the thread's latest operation touching memory "
                         "does not touch it",
                         note->at.stamp, cmd, label);
                rc = -1;
            }
        }
    }
    free(last);
    return rc;
}

int oracle_pairs_compute(oracle *o, char *err, size_t n)
{
    const o_model *m = &o->m;
    if (read_exports(o, err, n))
        return -1;
    notes *reads = calloc(o->nx + 1, sizeof *reads);
    if (!reads)
        exit(2);
    if (read_notes(o, reads, err, n)) {
        for (size_t x = 0; x < o->nx; x++)
            free(reads[x].v);
        free(reads);
        return -1;
    }
    /* the operations touching each exchange's memory, shared by exchanges of the same memory */
    touches *cache = calloc(o->nx + 1, sizeof *cache);
    size_t *of = calloc(o->nx + 1, sizeof *of); /* exchange -> the exchange whose list it shares */
    if (!cache || !of)
        exit(2);
    for (size_t x = 0; x < o->nx; x++) {
        const oracle_exchange *e = &o->x[x];
        of[x] = x;
        for (size_t y = 0; y < x; y++)
            if (o->x[y].addr == e->addr && o->x[y].len == e->len) {
                of[x] = of[y];
                break;
            }
        if (of[x] != x)
            continue;
        for (size_t i = 0; i < m->nops; i++) {
            unsigned d = dir_of(m, i, e->addr, e->addr + e->len);
            if (d)
                add_touch(&cache[x], (uint32_t)i, d);
        }
    }
    for (size_t x = 0; x < o->nx; x++) {
        oracle_exchange *e = &o->x[x];
        /* the reuse ends at the next export of memory overlapping this one */
        uint64_t from = e->release_stamp ? e->release_stamp : e->export_stamp, end = ORACLE_NEVER;
        for (size_t y = 0; y < o->nx; y++) {
            const oracle_exchange *f = &o->x[y];
            if (y != x && f->export_stamp > from && f->export_stamp < end && f->addr < e->addr + e->len &&
                e->addr < f->addr + f->len)
                end = f->export_stamp;
        }
        e->first_pair = o->npairs;
        pairs_of(o, x, &cache[of[x]], &reads[x], end);
        e->npairs = o->npairs - e->first_pair;
    }
    for (size_t x = 0; x < o->nx; x++) {
        free(cache[x].v);
        free(reads[x].v);
    }
    free(cache);
    free(of);
    free(reads);
    return 0;
}
