/* The tester's verdict on one run (judge.h): dlsync's log read as far as the verdict needs it,
 * then held against the reference's pairs. */
#include "judge.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const judge_dlsync_kind[JUDGE_DLSYNC_KINDS] = {
    "write-read",      "read-write",        "write-write", "host-read",       "release-reuse",     "write-after-use",
    "use-after-write", "use-after-release", "kernel-pair", "free-during-use", "(unknown exchange)"};

/* The index of dlsync kind `name` in judge_dlsync_kind (the last for an unknown one). */
static int dlsync_kind(const char *name)
{
    int k = 0;
    while (k < JUDGE_DLSYNC_KINDS - 1 && strcmp(judge_dlsync_kind[k], name) != 0)
        k++;
    return k;
}

void judge_printf(judge_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if (t->len + (size_t)k + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->len + (size_t)k + 1)
            cap *= 2;
        char *p = realloc(t->text, cap);
        if (!p)
            return;
        t->text = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->text + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)k;
}

/* ---- the log ---- */

typedef struct {
    uint64_t xid, data;
} log_export;

typedef struct {
    uint64_t xid;
    char kind[24];
    int handover; /* a host-read of the handover itself: dlsync could not watch the host's access */
} log_race;

typedef struct {
    log_export *exports;
    size_t nexports, capexports;
    log_race *races;
    size_t nraces, capraces;
    uint64_t *injects; /* xid of each inject record */
    size_t ninjects, capinjects;
    size_t host_injects; /* inject records whose reason is host-visible memory */
} log_view;

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    *cap = *cap ? 2 * *cap : 64;
    p = realloc(p, *cap * size);
    if (!p) {
        fprintf(stderr, "judge: out of memory\n");
        exit(2);
    }
    return p;
}

/* The number after "key": in line [p, end), or 0 (hex for a quoted "0x..."). */
static uint64_t field_u64(const char *p, const char *end, const char *key)
{
    size_t k = strlen(key);
    for (const char *q = p; q + k < end; q++)
        if (memcmp(q, key, k) == 0) {
            q += k;
            if (*q == '"')
                q++;
            return strtoull(q, NULL, 0);
        }
    return 0;
}

/* The string after "key":" in line [p, end) into out (n bytes), or "". */
static void field_str(const char *p, const char *end, const char *key, char *out, size_t n)
{
    size_t k = strlen(key);
    out[0] = '\0';
    for (const char *q = p; q + k < end; q++)
        if (memcmp(q, key, k) == 0) {
            q += k;
            size_t len = strcspn(q, "\"");
            snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), q);
            return;
        }
}

static void read_log(const char *text, log_view *v)
{
    for (const char *p = text; p && *p;) {
        const char *end = strchr(p, '\n');
        end = end ? end : p + strlen(p);
        char ev[24];
        field_str(p, end, "{\"ev\":\"", ev, sizeof ev);
        if (strcmp(ev, "export") == 0) {
            v->exports = grow(v->exports, &v->capexports, v->nexports, sizeof *v->exports);
            v->exports[v->nexports++] = (log_export){field_u64(p, end, "\"xid\":"), field_u64(p, end, "\"data\":")};
        } else if (strcmp(ev, "race") == 0 || strcmp(ev, "race_again") == 0) {
            v->races = grow(v->races, &v->capraces, v->nraces, sizeof *v->races);
            log_race *r = &v->races[v->nraces++];
            r->xid = field_u64(p, end, "\"xid\":");
            field_str(p, end, "\"kind\":\"", r->kind, sizeof r->kind); /* the race's: the first kind */
            char op[32];
            field_str(p, end, "\"consumer\":{\"op\":\"", op, sizeof op);
            r->handover = strncmp(op, "host access after", 17) == 0;
        } else if (strcmp(ev, "inject") == 0) {
            v->injects = grow(v->injects, &v->capinjects, v->ninjects, sizeof *v->injects);
            v->injects[v->ninjects++] = field_u64(p, end, "\"xid\":");
            char reason[96];
            field_str(p, end, "\"reason\":\"", reason, sizeof reason);
            v->host_injects += strstr(reason, "host-visible") != NULL;
        }
        p = *end ? end + 1 : NULL;
    }
}

static void free_log(log_view *v)
{
    free(v->exports);
    free(v->races);
    free(v->injects);
}

/* The trace exchange (index) of each log export (index), matched by data address in export
 * order; SIZE_MAX where there is none. Returns the number unmatched on either side. */
static size_t match(const oracle_exchange *x, size_t nx, const log_view *v, size_t *of)
{
    size_t unmatched = 0;
    char *used = calloc(nx + 1, 1);
    if (!used)
        exit(2);
    for (size_t i = 0; i < v->nexports; i++) {
        of[i] = SIZE_MAX;
        for (size_t j = 0; j < nx; j++)
            if (!used[j] && x[j].addr == v->exports[i].data) {
                used[j] = 1;
                of[i] = j;
                break;
            }
        unmatched += of[i] == SIZE_MAX;
    }
    for (size_t j = 0; j < nx; j++)
        unmatched += !used[j];
    free(used);
    return unmatched;
}

/* ---- the verdict ---- */

static const char *mode_name(judge_mode m)
{
    return m == JUDGE_PLAIN ? "plain" : m == JUDGE_CHECK ? "check" : "fix";
}

typedef struct {
    const oracle *o, *bodies; /* bodies: body order's view of the same trace, or NULL */
    judge_text *out;
    int failures, limit, strict_check;
    judge_totals *tot;
} verdict;

__attribute__((format(printf, 2, 3))) static void fail(verdict *v, const char *fmt, ...)
{
    v->failures++;
    v->tot->failures++;
    if (v->failures > v->limit)
        return;
    va_list ap;
    va_start(ap, fmt);
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    judge_printf(v->out, "  %s\n", buf);
}

/* Describes pair p (both sides, its kind, this run's actual order) into buf. */
static const char *pair_text(const oracle *o, const oracle_pair *p, char *buf, size_t n)
{
    char a[256], b[256], actual[96];
    oracle_describe(o, p->a, a, sizeof a);
    oracle_describe(o, p->b, b, sizeof b);
    oracle_describe_actual(o, p, actual, sizeof actual);
    snprintf(buf, n, "%s pair %s before %s (%s%s)", oracle_kind_name(p->kind), a, b, actual,
             oracle_pair_window(o, p) ? "; a host wait that ended during the later call would order it" : "");
    return buf;
}

/* 1 when every unguaranteed pair of exchange x of kind k (any kind: -1) is a window. */
static int all_windows(const oracle *o, const oracle_exchange *x, int k)
{
    size_t np;
    const oracle_pair *p = oracle_pairs(o, &np);
    for (size_t j = x->first_pair; j < x->first_pair + x->npairs; j++)
        if (!p[j].guaranteed && (k < 0 || (int)p[j].kind == k) && !oracle_pair_window(o, &p[j]))
            return 0;
    return 1;
}

/* 1 when a host read of exchange x is guaranteed only by other threads' host waits after the
 * import (oracle_pair_after_import). */
static int host_read_after_import(const oracle *o, const oracle_exchange *x)
{
    size_t np;
    const oracle_pair *p = oracle_pairs(o, &np);
    for (size_t j = x->first_pair; j < x->first_pair + x->npairs; j++)
        if (oracle_pair_after_import(o, &p[j]))
            return 1;
    return 0;
}

/* The first unguaranteed pair of exchange x of kind k, or NULL. */
static const oracle_pair *first_bad(const oracle *o, const oracle_exchange *x, int k)
{
    size_t np;
    const oracle_pair *p = oracle_pairs(o, &np);
    for (size_t j = x->first_pair; j < x->first_pair + x->npairs; j++)
        if (!p[j].guaranteed && (k < 0 || (int)p[j].kind == k))
            return &p[j];
    return NULL;
}

/* 1 when body order finds a pair of kind k of exchange i unguaranteed too, or there is no body
 * order (bodies NULL): a miss check's callbacks could have seen. */
static int seen_unguaranteed(const oracle *bodies, size_t i, int k)
{
    size_t n;
    if (!bodies)
        return 1;
    const oracle_exchange *x = oracle_exchanges(bodies, &n);
    return i < n && (x[i].kinds & (1u << k));
}

/* Whether a disagreement of check's with the reference fails the run (judge_program.strict_check);
 * seen: a false positive, or a miss its callbacks could have seen. */
static int check_fails(const verdict *v, int seen)
{
    return v->strict_check >= 2 || (v->strict_check == 1 && seen);
}

static void judge_check(verdict *v, const oracle_exchange *x, size_t nx, const char *log)
{
    log_view lv = {0};
    read_log(log, &lv);
    size_t *of = calloc(lv.nexports + 1, sizeof *of);
    if (!of)
        exit(2);
    if (match(x, nx, &lv, of))
        fail(v,
             "check: the log's %zu exports and the trace's %zu do not match one to one (by data address, in "
             "order)",
             lv.nexports, nx);
    char text[1024];
    for (size_t i = 0; i < lv.nexports; i++) {
        if (of[i] == SIZE_MAX)
            continue;
        const oracle_exchange *e = &x[of[i]];
        unsigned reported = 0; /* kinds dlsync reported for it (bit k: the reference's kind k) */
        unsigned recorded = 0; /* kinds of its race records (bit ORACLE_KINDS: one the reference lacks) */
        int other = 0, any = 0, handover = 0;
        for (size_t r = 0; r < lv.nraces; r++) {
            if (lv.races[r].xid != lv.exports[i].xid)
                continue;
            any = 1;
            handover |= lv.races[r].handover;
            int k = 0;
            while (k < ORACLE_KINDS && strcmp(oracle_kind_name((oracle_kind)k), lv.races[r].kind) != 0)
                k++;
            recorded |= 1u << k;
            if (k < ORACLE_KINDS && (e->kinds & (1u << k)))
                reported |= 1u << k;
            else if (e->unguaranteed && !other) {
                other = 1;
                v->tot->check_other_kind++;
            }
        }
        v->tot->check_exchanges++;
        v->tot->check_racy_exchanges += e->unguaranteed > 0;
        if (any && !e->unguaranteed) {
            v->tot->check_fp++;
            const char *kind = "?";
            for (size_t r = 0; r < lv.nraces; r++)
                if (lv.races[r].xid == lv.exports[i].xid) {
                    kind = lv.races[r].kind;
                    break;
                }
            v->tot->check_fp_kind[dlsync_kind(kind)]++;
            int blind = recorded == 1u << ORACLE_HOST_READ && handover && host_read_after_import(v->o, e);
            int pages = recorded == 1u << ORACLE_HOST_READ && !handover;
            v->tot->check_fp_import += blind;
            v->tot->check_fp_pages += pages;
            if (check_fails(v, !blind && !pages))
                fail(v,
                     "check: false positive: exchange %s (xid %" PRIu64 ", data 0x%" PRIx64 ", exported by thread %d) "
                     "has a %s race record, but the reference guarantees all its %zu pairs%s",
                     e->label, lv.exports[i].xid, e->addr, e->tid, kind, e->npairs,
                     blind   ? " (a host read that only another thread's host wait after the import orders)"
                     : pages ? " (a host access caught on its protected pages)"
                             : "");
        }
        for (int k = 0; k < ORACLE_KINDS; k++)
            if ((e->kinds & (1u << k)) && !(reported & (1u << k))) {
                v->tot->check_fn++;
                v->tot->check_fn_exchange += !any;
                v->tot->check_fn_window += all_windows(v->o, e, k);
                int seen = seen_unguaranteed(v->bodies, of[i], k), host = k == ORACLE_HOST_READ;
                v->tot->check_fn_seen += seen;
                v->tot->check_fn_host += host;
                if (check_fails(v, seen && !host))
                    fail(v,
                         "check: false negative: exchange %s (xid %" PRIu64
                         ") has no %s race record%s; the reference%s: %s",
                         e->label, lv.exports[i].xid, oracle_kind_name((oracle_kind)k), any ? "" : " (none at all)",
                         seen && v->bodies ? ", in body order too" : "",
                         pair_text(v->o, first_bad(v->o, e, k), text, sizeof text));
            }
    }
    for (size_t r = 0; r < lv.nraces; r++) { /* races of an exchange no export record names */
        int known = 0;
        for (size_t i = 0; i < lv.nexports && !known; i++)
            known = of[i] != SIZE_MAX && lv.exports[i].xid == lv.races[r].xid;
        if (!known) {
            v->tot->check_fp++;
            v->tot->check_fp_kind[JUDGE_DLSYNC_KINDS - 1]++;
            if (check_fails(v, 1))
                fail(v, "check: false positive: a %s race record of xid %" PRIu64 ", which no noted export has",
                     lv.races[r].kind, lv.races[r].xid);
        }
    }
    free(of);
    free_log(&lv);
}

/* A synced program's fix run: every wait injected is needless; those not for host-visible memory
 * fail the run (judge_program.strict_waits). */
static void judge_synced_waits(verdict *v, const log_view *lv, size_t nx, int strict)
{
    v->tot->fix_synced_exchanges += (long)nx;
    v->tot->fix_synced_injected += (long)lv->ninjects;
    v->tot->fix_synced_host += (long)lv->host_injects;
    size_t needless = lv->ninjects - lv->host_injects;
    if (strict && needless)
        fail(v,
             "fix: %zu waits injected in the synced program's %zu exchanges (and %zu for host-visible memory), "
             "though the program orders every hazard itself",
             needless, nx, lv->host_injects);
}

static void judge_fix(verdict *v, const oracle_exchange *x, size_t nx, const char *log, int synced, int strict_waits)
{
    log_view lv = {0};
    read_log(log, &lv);
    v->tot->fix_injected += (long)lv.ninjects;
    v->tot->fix_exchanges += (long)nx;
    if (synced)
        judge_synced_waits(v, &lv, nx, strict_waits);
    free_log(&lv);
    char text[1024];
    for (size_t i = 0; i < nx; i++) {
        v->tot->fix_pairs += (long)x[i].npairs;
        v->tot->fix_unguaranteed += x[i].unguaranteed;
        size_t np;
        const oracle_pair *p = oracle_pairs(v->o, &np);
        for (size_t j = x[i].first_pair; j < x[i].first_pair + x[i].npairs; j++) {
            if (p[j].guaranteed)
                continue;
            int window = oracle_pair_window(v->o, &p[j]);
            v->tot->fix_window += window;
            v->tot->fix_legacy += !window && oracle_pair_actual(v->o, &p[j], NULL) == 2;
        }
        if (x[i].unguaranteed)
            fail(v, "fix: exchange %s: %u of its %zu pairs not guaranteed, e.g. %s", x[i].label, x[i].unguaranteed,
                 x[i].npairs, pair_text(v->o, first_bad(v->o, &x[i], -1), text, sizeof text));
    }
}

int judge_run(const oracle *o, const char *log, judge_mode mode, const judge_program *prog, judge_totals *tot,
              judge_text *out, int limit)
{
    int synced = prog->synced, wrong_reads = prog->wrong_reads;
    verdict v = {
        .o = o, .bodies = prog->bodies, .strict_check = prog->strict_check, .out = out, .limit = limit, .tot = tot};
    size_t nx, np, bad = 0;
    const oracle_exchange *x = oracle_exchanges(o, &nx);
    const oracle_pair *p = oracle_pairs(o, &np);
    for (size_t j = 0; j < np; j++)
        bad += !p[j].guaranteed;
    tot->runs++;
    tot->pairs += (long)np;
    char text[1024];
    if (!nx)
        fail(&v, "the trace notes no exchange");
    if (mode == JUDGE_PLAIN) {
        tot->unguaranteed += (long)bad;
        if (synced && bad) {
            for (size_t i = 0; i < nx; i++)
                if (x[i].unguaranteed) {
                    fail(&v, "plain: the synced program leaves exchange %s unordered (the generator is wrong): %s",
                         x[i].label, pair_text(o, first_bad(o, &x[i], -1), text, sizeof text));
                    break;
                }
        }
        if (!synced && !bad)
            fail(&v, "plain: the racy program has no unguaranteed pair (the generator is wrong)");
    } else {
        if (mode == JUDGE_CHECK)
            judge_check(&v, x, nx, log ? log : "");
        else
            judge_fix(&v, x, nx, log ? log : "", synced, prog->strict_waits);
    }
    if (wrong_reads && (synced || mode == JUDGE_FIX || !bad)) {
        tot->wrong_reads += wrong_reads;
        fail(&v, "%d reads saw a wrong value%s", wrong_reads,
             bad ? ""
                 : " though the reference guarantees every pair of the run (the reference or the simulator is "
                   "wrong)");
    }
    if (prog->lost_deleters) {
        tot->lost_deleters += prog->lost_deleters;
        fail(&v, "%d deleter calls did not reach the producer", prog->lost_deleters);
    }
    int doubles = 0;
    for (const char *p = log; p && (p = strstr(p, "{\"ev\":\"double_release\"")) != NULL; p++)
        doubles++;
    if (doubles) {
        tot->double_releases += doubles;
        fail(&v, "%s: %d double_release records, but the program releases each tensor once", mode_name(mode), doubles);
    }
    return v.failures;
}
