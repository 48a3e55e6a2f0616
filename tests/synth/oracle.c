/* The reference's interface (oracle.h): reading a trace, its questions and its descriptions. */
#include "oracle_internal.h"

#include <inttypes.h>
#include <stdio.h>

const char *oracle_kind_name(oracle_kind k)
{
    static const char *const names[ORACLE_KINDS] = {"write-read",      "write-write",     "host-read",  "release-reuse",
                                                    "write-after-use", "use-after-write", "kernel-pair"};
    return k < ORACLE_KINDS ? names[k] : "?";
}

oracle *oracle_parse(const char *text, oracle_order order, char *err, size_t n)
{
    oracle *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    o->m.body_order = order == ORACLE_BODY_ORDER;
    if (oracle_model_parse(&o->m, text, err, n) || oracle_past_compute(&o->m, &o->past, 0, err, n) ||
        oracle_pairs_compute(o, err, n)) {
        oracle_free(o);
        return NULL;
    }
    for (size_t j = 0; j < o->npairs; j++)
        if (!o->pairs[j].guaranteed) { /* for oracle_pair_window */
            if (oracle_past_compute(&o->m, &o->lenient, 1, err, n)) {
                oracle_free(o);
                return NULL;
            }
            break;
        }
    return o;
}

oracle *oracle_read(const char *path, oracle_order order, char *err, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, n, "cannot open %s", path);
        return NULL;
    }
    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    for (size_t k; text && (k = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += k;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(text, cap * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!text) {
        snprintf(err, n, "out of memory reading %s", path);
        return NULL;
    }
    text[len] = '\0';
    oracle *o = oracle_parse(text, order, err, n);
    free(text);
    return o;
}

void oracle_free(oracle *o)
{
    if (!o)
        return;
    oracle_past_free(&o->m, &o->past);
    oracle_past_free(&o->m, &o->lenient);
    for (size_t x = 0; x < o->nx; x++)
        free((char *)o->x[x].label);
    free(o->x);
    free(o->pairs);
    oracle_model_free(&o->m);
    free(o);
}

static int op_index(const oracle *o, uint64_t id, uint32_t *i)
{
    return oracle_map_get(&o->m.op_ids, id, i);
}

int oracle_guaranteed(const oracle *o, uint64_t before, uint64_t after)
{
    uint32_t a, b;
    if (!op_index(o, before, &a) || !op_index(o, after, &b))
        return -1;
    return oracle_in_past(&o->past, a, b);
}

int oracle_host_knows(const oracle *o, uint64_t op, uint64_t note_stamp)
{
    uint32_t a;
    if (!op_index(o, op, &a))
        return -1;
    for (size_t k = 0; k < o->m.nnotes; k++)
        if (o->m.notes[k].at.stamp == note_stamp)
            return bits_has(o->past.hk_note[k], a);
    return -1;
}

int oracle_pair_after_import(const oracle *o, const oracle_pair *p)
{
    const uint64_t *as_of_import = p->b.host ? o->past.hk_import[p->b.index] : NULL;
    return p->kind == ORACLE_HOST_READ && p->guaranteed && as_of_import && !bits_has(as_of_import, p->a.index);
}

const oracle_exchange *oracle_exchanges(const oracle *o, size_t *n)
{
    *n = o->nx;
    return o->x;
}

const oracle_pair *oracle_pairs(const oracle *o, size_t *n)
{
    *n = o->npairs;
    return o->pairs;
}

static const char *stream_kind_name(const o_stream *s)
{
    if (s->kind == SK_LEGACY)
        return "legacy";
    if (s->kind == SK_PTDS)
        return "per-thread";
    return s->blocking ? "blocking" : "non-blocking";
}

void oracle_describe(const oracle *o, oracle_side s, char *buf, size_t n)
{
    const o_model *m = &o->m;
    if (s.host) {
        const o_note *note = &m->notes[s.index];
        snprintf(buf, n, "host read by thread %" PRIu64 " at stamp %" PRIu64, m->threads[note->at.thread].tid,
                 note->at.stamp);
        return;
    }
    static const char *const kinds[] = {"kernel", "copy", "set", "hostfn", "record", "wait", "mark", "op"};
    const o_op *op = &m->ops[s.index];
    const o_stream *st = &m->streams[op->stream];
    snprintf(buf, n,
             "op %" PRIu64 " (%s by %s, stream %" PRIu64 " %s of device %d, seq %" PRIu64 ", thread %" PRIu64
             ", stamp %" PRIu64 ")",
             op->id, kinds[op->kind], op->name, st->id, stream_kind_name(st), st->dev, op->seq,
             m->threads[op->at.thread].tid, op->at.stamp);
}

/* The op at position seq of stream s, or ORACLE_NONE. */
static uint32_t at_seq(const o_model *m, uint32_t s, uint64_t seq)
{
    const o_stream *st = &m->streams[s];
    size_t lo = 0, hi = st->nbyseq;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->ops[st->byseq[mid]].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->nbyseq && m->ops[st->byseq[lo]].seq == seq ? st->byseq[lo] : ORACLE_NONE;
}

int oracle_pair_actual(const oracle *o, const oracle_pair *p, uint64_t *legacy_op)
{
    const o_model *m = &o->m;
    if (p->a.host || p->b.host)
        return -1;
    /* walk back from b along stream order and P lines to a */
    uint32_t a = (uint32_t)p->a.index;
    uint8_t *seen = calloc(m->nops + 1, 1);
    uint32_t *stack = malloc((m->nops + 1) * sizeof *stack), *next = malloc((m->nops + 1) * sizeof *next);
    if (!seen || !stack || !next)
        exit(2);
    size_t top = 0;
    int found = 0;
    stack[top++] = (uint32_t)p->b.index;
    next[a] = ORACLE_NONE;
    while (top && !found) {
        uint32_t i = stack[--top];
        const o_op *op = &m->ops[i];
        uint32_t prev = op->seq > 1 ? at_seq(m, op->stream, op->seq - 1) : ORACLE_NONE;
        uint32_t preds[1 + 64];
        size_t np = 0;
        if (prev != ORACLE_NONE)
            preds[np++] = prev;
        for (uint32_t d = 0; d < op->ndep && np < sizeof preds / sizeof *preds; d++) {
            uint32_t q = at_seq(m, m->deps[op->dep + d].stream, m->deps[op->dep + d].seq);
            if (q != ORACLE_NONE)
                preds[np++] = q;
        }
        for (size_t k = 0; k < np && !found; k++) {
            if (preds[k] == a) {
                found = 1;
                next[a] = i;
            }
            if (preds[k] > a && !seen[preds[k]]) {
                seen[preds[k]] = 1;
                next[preds[k]] = i; /* the path back to b */
                stack[top++] = preds[k];
            }
        }
    }
    uint32_t legacy = ORACLE_NONE; /* an op of the legacy stream on the path, other than the sides */
    for (uint32_t i = found ? next[a] : ORACLE_NONE; i != ORACLE_NONE && i != (uint32_t)p->b.index; i = next[i])
        if (m->streams[m->ops[i].stream].kind == SK_LEGACY && legacy == ORACLE_NONE)
            legacy = i;
    free(seen);
    free(stack);
    free(next);
    if (legacy != ORACLE_NONE && legacy_op)
        *legacy_op = m->ops[legacy].id;
    return !found ? 0 : legacy != ORACLE_NONE ? 2 : 1;
}

void oracle_describe_actual(const oracle *o, const oracle_pair *p, char *buf, size_t n)
{
    uint64_t legacy = 0;
    int r = oracle_pair_actual(o, p, &legacy);
    if (r < 0)
        snprintf(buf, n, "a host side: this run's order not shown");
    else if (r == 0)
        snprintf(buf, n, "not ordered in this run (as far as P lines show)");
    else if (r == 2)
        snprintf(buf, n, "ordered in this run through legacy-stream op %" PRIu64, legacy);
    else
        snprintf(buf, n, "ordered in this run");
}

int oracle_pair_window(const oracle *o, const oracle_pair *p)
{
    if (p->guaranteed || p->a.host || !o->lenient.gp)
        return 0;
    if (p->b.host)
        return 0; /* a host read's knowledge is the same either way */
    return oracle_in_past(&o->lenient, p->a.index, p->b.index);
}

oracle_stats oracle_get_stats(const oracle *o)
{
    return (oracle_stats){.ops = o->m.nops, .calls = o->m.ncalls, .lines = o->m.nlines, .passes = o->past.passes};
}
