/* Race report formatting and deduplication (see race.h). */
#include "race.h"

#include "../common/mutex.h"
#include "../common/compiler.h"
#include "../common/config.h"
#include "../common/ownfd.h"
#include "log.h"
#include "objinfo.h"
#include "race_wait.h"
#include "summary.h"
#include "suppress_file.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>

#define TABLE 256
#define FRAMES 20
#define FRAME_TEXT 320
#define FRAMES_TEXT (FRAMES * FRAME_TEXT + 1) /* FRAMES of them, one per line */
#define PYFRAMES 12

static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t key;
    unsigned count;
    dls_race_kind kind;
    uint64_t xid;      /* the exchange of its first report */
    uint64_t last_xid; /* the exchange of its latest occurrence */
    int suppressed;    /* a suppression rule matched its first report */
} g_seen[TABLE];
static size_t g_n;

#define DLS_RACE_NAME_(id, name) name,
static const char *const g_kind[] = {DLS_RACE_KINDS(DLS_RACE_NAME_)};
#undef DLS_RACE_NAME_

const char *dls_race_kind_name(dls_race_kind k)
{
    return (unsigned)k < sizeof g_kind / sizeof *g_kind ? g_kind[k] : "unknown";
}

static uint64_t mix(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

uint64_t dls_race_key(const dls_race *r)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(h, dls_race_kind_name(r->kind));
    h = mix(h, r->framework);
    h = mix(h, r->symbol);
    h = mix(h, r->producer.op);
    h = mix(h, r->producer.stream.host ? "host" : r->producer.stream.kind);
    h = mix(h, r->consumer.op);
    h = mix(h, r->consumer.stream.host ? "host" : r->consumer.stream.kind);
    h = (h ^ r->consumer.stream.id) * 0x100000001b3ull;
    return h;
}

/* A growing text buffer on the caller's stack. */
typedef struct {
    char buf[8192];
    size_t len;
} text;

DLS_PRINTF(2, 3) static void put(text *t, const char *fmt, ...)
{
    if (t->len >= sizeof t->buf - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->len += (size_t)k < sizeof t->buf - t->len ? (size_t)k : sizeof t->buf - t->len - 1;
}

/* A stream for the text; `device`: name its device too (the two sides are on different ones). */
static void stream_text(text *t, const dls_race_stream *s, int device)
{
    if (s->host)
        put(t, "the host");
    else
        put(t, "stream %llu (%s, 0x%jx)", (unsigned long long)s->id, s->kind, (uintmax_t)s->handle);
    if (device && !s->host)
        put(t, " of device %d", s->device);
}

/* Symbolized frames of one side, collected for both the text and the JSON arrays; the first
 * `native` of them are native frames, with where each lies (for the log's `native`). */
typedef struct {
    char f[FRAMES][FRAME_TEXT];
    int n;
    int native;
    struct {
        char object[256];
        char build_id[DLS_BUILD_ID_HEX];
        uintptr_t offset;
    } at[FRAMES];
    dls_pyframe py[PYFRAMES];
    int npy;
} frames;

static void keep_frame(const char *frame, const dls_stack_where *where, void *user)
{
    frames *fr = user;
    if (fr->n >= FRAMES)
        return;
    if (where && fr->native == fr->n) {
        snprintf(fr->at[fr->n].object, sizeof fr->at[0].object, "%s", where->object ? where->object : "");
        snprintf(fr->at[fr->n].build_id, sizeof fr->at[0].build_id, "%s", where->build_id ? where->build_id : "");
        fr->at[fr->n].offset = where->offset;
        fr->native++;
    }
    snprintf(fr->f[fr->n++], sizeof fr->f[0], "%s", frame);
}

static void side_stack(const dls_stack *s, frames *out)
{
    out->n = 0;
    out->native = 0;
    dls_stack_symbolize(s, FRAMES, keep_frame, out);
    out->npy = dls_stack_python(s, out->py, PYFRAMES);
}

/* `"key": {"op": ..., "stream": ..., "stack": [...], "native": [...]}` of one side. */
static void side_json(dls_rec *j, const char *key, const dls_race_side *side, const frames *fr)
{
    dls_rec_object(j, key);
    dls_rec_str(j, "op", side->op);
    if (side->stream.host) {
        dls_rec_raw(j, "stream", "null");
    } else {
        dls_rec_object(j, "stream");
        dls_rec_u64(j, "id", side->stream.id);
        dls_rec_hex(j, "handle", side->stream.handle);
        dls_rec_str(j, "kind", side->stream.kind);
        dls_rec_i64(j, "device", side->stream.device);
        dls_rec_close(j, '}');
    }
    dls_rec_array(j, "stack");
    for (int i = 0; i < fr->n; i++)
        dls_rec_str(j, NULL, fr->f[i]);
    dls_rec_close(j, ']');
    dls_rec_array(j, "native");
    for (int i = 0; i < fr->native; i++) {
        dls_rec_object(j, NULL);
        dls_rec_str(j, "object", fr->at[i].object[0] ? fr->at[i].object : NULL);
        dls_rec_hex(j, "offset", fr->at[i].offset);
        dls_rec_str(j, "build_id", fr->at[i].build_id[0] ? fr->at[i].build_id : NULL);
        dls_rec_close(j, '}');
    }
    dls_rec_close(j, ']');
    if (fr->npy) {
        dls_rec_array(j, "python");
        for (int i = 0; i < fr->npy; i++) {
            dls_rec_object(j, NULL);
            dls_rec_str(j, "function", fr->py[i].function);
            dls_rec_str(j, "file", fr->py[i].file);
            dls_rec_i64(j, "line", fr->py[i].line);
            dls_rec_close(j, '}');
        }
        dls_rec_close(j, ']');
    }
    dls_rec_close(j, '}');
}

static void write_log(const dls_race *r, uint64_t key, const frames *pf, const frames *cf, const char *fix_id,
                      const char *fix_text, const dls_suppress_rule *rule)
{
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "race");
    dls_rec_u64(&j, "xid", r->xid);
    char k[17];
    *dls_rec_xtoa(key, 16, k) = '\0';
    dls_rec_str(&j, "key", k);
    dls_rec_u64(&j, "count", 1);
    dls_rec_str(&j, "kind", dls_race_kind_name(r->kind));
    dls_rec_object(&j, "tensor");
    dls_rec_object(&j, "device");
    dls_rec_str(&j, "type", r->device);
    dls_rec_i64(&j, "id", r->device_id);
    dls_rec_close(&j, '}');
    dls_rec_str(&j, "dtype", r->dtype);
    dls_rec_i64s(&j, "shape", r->shape, (size_t)r->ndim);
    dls_rec_hex(&j, "data", r->data);
    dls_rec_object(&j, "extent");
    dls_rec_i64(&j, "lo", (int64_t)(r->lo - r->data));
    dls_rec_i64(&j, "hi", (int64_t)(r->hi - r->data));
    dls_rec_close(&j, '}');
    dls_rec_close(&j, '}');
    dls_rec_str(&j, "framework", r->framework);
    dls_rec_str(&j, "symbol", r->symbol);
    side_json(&j, "producer", &r->producer, pf);
    side_json(&j, "consumer", &r->consumer, cf);
    dls_rec_str(&j, "why", r->why);
    dls_rec_object(&j, "fix");
    dls_rec_str(&j, "id", fix_id);
    dls_rec_str(&j, "text", fix_text);
    dls_rec_close(&j, '}');
    if (rule) {
        dls_rec_object(&j, "suppressed");
        dls_rec_str(&j, "rule", rule->text);
        dls_rec_str(&j, "file", dls_suppress_path());
        dls_rec_u64(&j, "line", rule->line);
        dls_rec_close(&j, '}');
    }
    dls_log_write(&j);
}

/* The log's short record of a hazard already reported, seen again in another exchange. */
static void write_again(const dls_race *r, uint64_t key)
{
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "race_again");
    dls_rec_u64(&j, "xid", r->xid);
    char k[17];
    *dls_rec_xtoa(key, 16, k) = '\0';
    dls_rec_str(&j, "key", k);
    dls_rec_str(&j, "kind", dls_race_kind_name(r->kind));
    dls_log_write(&j);
}

/* The suppression rule matching r's texts as the report prints them, or NULL. */
static const dls_suppress_rule *suppression(const dls_race *r, const frames *pf, const frames *cf)
{
    const char *texts[2 * FRAMES + 4];
    size_t n = 0;
    texts[n++] = r->framework;
    texts[n++] = r->symbol;
    texts[n++] = r->producer.op;
    texts[n++] = r->consumer.op;
    for (int i = 0; i < pf->n; i++)
        texts[n++] = pf->f[i];
    for (int i = 0; i < cf->n; i++)
        texts[n++] = cf->f[i];
    return dls_suppress_lookup((int)r->kind, texts, n);
}

/* Marks the hazard `key` suppressed: its repeats are not printed at exit. */
static void mark_suppressed(uint64_t key)
{
    dls_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n; i++)
        if (g_seen[i].key == key)
            g_seen[i].suppressed = 1;
    dls_mutex_unlock(&g_lock);
}

static void format_text(text *t, const dls_race *r, const frames *pf, const frames *cf, const char *fix_text)
{
    put(t, "dlsync: race (%s) on exchange %llu: %s[", dls_race_kind_name(r->kind), (unsigned long long)r->xid,
        r->dtype);
    for (int i = 0; i < r->ndim; i++)
        put(t, "%s%lld", i ? ", " : "", (long long)r->shape[i]);
    put(t, "] on %s:%d, bytes [0x%jx, 0x%jx)\n", r->device, r->device_id, (uintmax_t)r->lo, (uintmax_t)r->hi);
    int later = r->kind >= DLS_RACE_WRITE_AFTER_USE; /* two-way kinds: the producer side came after the use */
    put(t, "  producer: %s %s, %s %s on ", r->framework ? r->framework : "?", r->symbol ? r->symbol : "?",
        later ? "then" : "last write by", r->producer.op ? r->producer.op : "an unknown operation");
    int devices = dls_race_across_devices(r);
    stream_text(t, &r->producer.stream, devices);
    put(t, "\n");
    for (int i = 0; i < pf->n; i++)
        put(t, "    at %s\n", pf->f[i]);
    put(t, "  consumer: %s on ", r->consumer.op ? r->consumer.op : "an unknown operation");
    stream_text(t, &r->consumer.stream, devices);
    put(t, "\n");
    for (int i = 0; i < cf->n; i++)
        put(t, "    at %s\n", cf->f[i]);
    put(t, "  why: %s\n", r->why);
    put(t, "  fix: %s\n", fix_text);
}

/* The frames of fr, one per line, in out (FRAMES_TEXT bytes). */
static const char *frames_text(const frames *fr, char *out)
{
    char *at = out;
    *at = '\0';
    for (int i = 0; i < fr->n; i++)
        at += sprintf(at, "%s\n", fr->f[i]);
    return out;
}

/* Keeps what the query API gives of the report r (race_entries.h); `stacks` holds the two sides'
 * frames as text. */
static void keep_entry(const dls_race *r, uint64_t key, const frames *pf, const frames *cf, const char *fix,
                       const text *t, char (*stacks)[FRAMES_TEXT])
{
    dls_race_entry e = {
        .key = key,
        .xid = r->xid,
        .kind = dls_race_kind_name(r->kind),
        .framework = r->framework,
        .symbol = r->symbol,
        .producer_op = r->producer.op,
        .consumer_op = r->consumer.op,
        .fix = fix,
        .producer_stack = frames_text(pf, stacks[0]),
        .consumer_stack = frames_text(cf, stacks[1]),
        .text = t->buf,
    };
    dls_race_entry_keep(&e);
}

int dls_race_entry_get(size_t i, dls_race_entry *out, unsigned *count)
{
    if (dls_race_entry_at(i, out) != 0)
        return -1;
    *count = 1;
    dls_mutex_lock(&g_lock);
    for (size_t k = 0; k < g_n; k++)
        if (g_seen[k].key == out->key)
            *count = g_seen[k].count;
    dls_mutex_unlock(&g_lock);
    return 0;
}

/* Writes the report r with key `key`: stderr, the log, the query API's entry, the summary; a
 * report a suppression rule matches only as its `race` record, counted as suppressed. No dlsync
 * lock is held. */
static void write_report(const dls_race *r, uint64_t key, const dls_stack *ps, const dls_stack *cs)
{
    struct {
        frames pf, cf;
        text t;
        char fix[768];
        char stacks[2][FRAMES_TEXT];
    } *m = malloc(sizeof *m); /* too large for the stack of every thread that may report */
    if (!m) {
        dls_summary_add(DLS_COUNT_RACES, 1);
        return;
    }
    side_stack(ps, &m->pf);
    side_stack(cs, &m->cf);
    const char *fix_id = dls_advice(r, m->fix, sizeof m->fix);
    const dls_suppress_rule *rule = suppression(r, &m->pf, &m->cf);
    dls_summary_add(rule ? DLS_COUNT_SUPPRESSED : DLS_COUNT_RACES, 1);
    if (rule)
        mark_suppressed(key);
    m->t.len = 0;
    if (!rule) {
        format_text(&m->t, r, &m->pf, &m->cf, m->fix);
        dls_ownfd_stderr(m->t.buf, m->t.len);
    }
    write_log(r, key, &m->pf, &m->cf, fix_id, m->fix, rule);
    if (!rule)
        keep_entry(r, key, &m->pf, &m->cf, m->fix, &m->t, m->stacks);
    free(m);
}

/* Writes the reports waiting for their consumer's Python frames (race_wait.h): those of the
 * calling thread whose frames came (`all` 0: the thread took the GIL back), or every one, with
 * the frames known by then (`all` 1: at exit). No dlsync lock may be held. */
static void write_waiting(int all)
{
    dls_race_waiting w;
    while (dls_race_wait_take(all, &w))
        write_report(&w.r, w.key, &w.pstack, &w.cstack);
}

static void frames_arrived(void)
{
    write_waiting(0);
}

unsigned dls_race_report(const dls_race *r)
{
    uint64_t key = dls_race_key(r);
    unsigned count = 0;
    int again = 0; /* a repeat in an exchange the hazard was not last seen in */
    dls_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n; i++)
        if (g_seen[i].key == key) {
            count = ++g_seen[i].count;
            again = g_seen[i].last_xid != r->xid && !g_seen[i].suppressed;
            g_seen[i].last_xid = r->xid;
            break;
        }
    if (!count && g_n < TABLE) {
        g_seen[g_n].suppressed = 0;
        g_seen[g_n].key = key;
        g_seen[g_n].count = count = 1;
        g_seen[g_n].kind = r->kind;
        g_seen[g_n].xid = g_seen[g_n].last_xid = r->xid;
        g_n++;
    }
    dls_mutex_unlock(&g_lock);
    if (again)
        write_again(r, key);
    if (count > 1)
        return count;
    if (r->kind == DLS_RACE_KERNEL_PAIR && !dls_config_get()->kernel_pairs) { /* benign in the common case */
        dls_summary_add(DLS_COUNT_KERNEL_PAIRS, 1);
        mark_suppressed(key);
        return count;
    }
    dls_stack here_p, here_c;
    const dls_stack *ps = r->producer.stack, *cs = r->consumer.stack;
    if (!ps) {
        dls_stack_capture(&here_p);
        ps = &here_p;
    }
    if (!cs) {
        dls_stack_capture(&here_c);
        cs = &here_c;
    }
    if (cs->py && dls_pyframes_pending_here(cs->py)) {
        dls_pyframes_on_arrival(frames_arrived);
        if (dls_race_wait(r, key, ps, cs))
            return count;
    }
    write_report(r, key, ps, cs);
    return count;
}

size_t dls_race_distinct(void)
{
    dls_mutex_lock(&g_lock);
    size_t n = g_n;
    dls_mutex_unlock(&g_lock);
    return n;
}

void dls_race_reset_for_tests(void)
{
    dls_mutex_lock(&g_lock);
    g_n = 0;
    dls_mutex_unlock(&g_lock);
}

void dls_race_emit_repeats(void)
{
    write_waiting(1);
    dls_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n; i++) {
        if (g_seen[i].count < 2 || g_seen[i].suppressed)
            continue;
        char line[160];
        int k = snprintf(line, sizeof line, "dlsync: race %016llx (%s, exchange %llu) seen %u times\n",
                         (unsigned long long)g_seen[i].key, dls_race_kind_name(g_seen[i].kind),
                         (unsigned long long)g_seen[i].xid, g_seen[i].count);
        dls_ownfd_stderr(line, (size_t)k);
    }
    dls_mutex_unlock(&g_lock);
}
