/* Race report formatting and deduplication (see race.h). */
#include "race.h"

#include "../common/ownfd.h"
#include "log.h"
#include "summary.h"
#include "suppress_file.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TABLE 256
#define FRAMES 12

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t key;
    unsigned count;
    dls_race_kind kind;
    uint64_t xid;
    int suppressed; /* a suppression rule matched its first report */
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

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...)
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

/* Symbolized frames of one side, collected for both the text and the JSON array. */
typedef struct {
    char f[FRAMES][160];
    int n;
} frames;

static void keep_frame(const char *frame, void *user)
{
    frames *fr = user;
    if (fr->n < FRAMES)
        snprintf(fr->f[fr->n++], sizeof fr->f[0], "%s", frame);
}

static void side_stack(const dls_race_side *side, frames *out)
{
    out->n = 0;
    dls_stack here;
    const dls_stack *s = side->stack;
    if (!s) {
        dls_stack_capture(&here);
        s = &here;
    }
    dls_stack_symbolize(s, FRAMES, keep_frame, out);
}

/* `"key": {"op": ..., "stream": ..., "stack": [...]}` of one side. */
static void side_json(dls_json *j, const char *key, const dls_race_side *side, const frames *fr)
{
    dls_json_object(j, key);
    dls_json_str(j, "op", side->op);
    if (side->stream.host) {
        dls_json_raw(j, "stream", "null");
    } else {
        dls_json_object(j, "stream");
        dls_json_u64(j, "id", side->stream.id);
        dls_json_hex(j, "handle", side->stream.handle);
        dls_json_str(j, "kind", side->stream.kind);
        dls_json_i64(j, "device", side->stream.device);
        dls_json_close(j, '}');
    }
    dls_json_array(j, "stack");
    for (int i = 0; i < fr->n; i++)
        dls_json_str(j, NULL, fr->f[i]);
    dls_json_close(j, ']');
    dls_json_close(j, '}');
}

static void write_log(const dls_race *r, uint64_t key, const frames *pf, const frames *cf, const char *fix_id,
                      const char *fix_text, const dls_suppress_rule *rule)
{
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "race");
    dls_json_u64(&j, "xid", r->xid);
    char k[17];
    *dls_json_xtoa(key, 16, k) = '\0';
    dls_json_str(&j, "key", k);
    dls_json_u64(&j, "count", 1);
    dls_json_str(&j, "kind", dls_race_kind_name(r->kind));
    dls_json_object(&j, "tensor");
    dls_json_object(&j, "device");
    dls_json_str(&j, "type", r->device);
    dls_json_i64(&j, "id", r->device_id);
    dls_json_close(&j, '}');
    dls_json_str(&j, "dtype", r->dtype);
    dls_json_i64s(&j, "shape", r->shape, (size_t)r->ndim);
    dls_json_hex(&j, "data", r->data);
    dls_json_object(&j, "extent");
    dls_json_i64(&j, "lo", (int64_t)(r->lo - r->data));
    dls_json_i64(&j, "hi", (int64_t)(r->hi - r->data));
    dls_json_close(&j, '}');
    dls_json_close(&j, '}');
    dls_json_str(&j, "framework", r->framework);
    dls_json_str(&j, "symbol", r->symbol);
    side_json(&j, "producer", &r->producer, pf);
    side_json(&j, "consumer", &r->consumer, cf);
    dls_json_str(&j, "why", r->why);
    dls_json_object(&j, "fix");
    dls_json_str(&j, "id", fix_id);
    dls_json_str(&j, "text", fix_text);
    dls_json_close(&j, '}');
    if (rule) {
        dls_json_object(&j, "suppressed");
        dls_json_str(&j, "rule", rule->text);
        dls_json_str(&j, "file", dls_suppress_path());
        dls_json_u64(&j, "line", rule->line);
        dls_json_close(&j, '}');
    }
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

static void write_text(const dls_race *r, const frames *pf, const frames *cf, const char *fix_text)
{
    text t = {.len = 0};
    put(&t, "dlsync: race (%s) on exchange %llu: %s[", dls_race_kind_name(r->kind), (unsigned long long)r->xid,
        r->dtype);
    for (int i = 0; i < r->ndim; i++)
        put(&t, "%s%lld", i ? ", " : "", (long long)r->shape[i]);
    put(&t, "] on %s:%d, bytes [0x%jx, 0x%jx)\n", r->device, r->device_id, (uintmax_t)r->lo, (uintmax_t)r->hi);
    put(&t, "  producer: %s %s, last write by %s on ", r->framework ? r->framework : "?", r->symbol ? r->symbol : "?",
        r->producer.op ? r->producer.op : "an unknown operation");
    int devices = dls_race_across_devices(r);
    stream_text(&t, &r->producer.stream, devices);
    put(&t, "\n");
    for (int i = 0; i < pf->n; i++)
        put(&t, "    at %s\n", pf->f[i]);
    put(&t, "  consumer: %s on ", r->consumer.op ? r->consumer.op : "an unknown operation");
    stream_text(&t, &r->consumer.stream, devices);
    put(&t, "\n");
    for (int i = 0; i < cf->n; i++)
        put(&t, "    at %s\n", cf->f[i]);
    put(&t, "  why: %s\n", r->why);
    put(&t, "  fix: %s\n", fix_text);
    dls_ownfd_stderr(t.buf, t.len);
}

int dls_race_across_devices(const dls_race *r)
{
    return !r->producer.stream.host && !r->consumer.stream.host &&
           r->producer.stream.device != r->consumer.stream.device;
}

unsigned dls_race_report(const dls_race *r)
{
    uint64_t key = dls_race_key(r);
    unsigned count = 0;
    size_t slot = TABLE;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n; i++)
        if (g_seen[i].key == key) {
            count = ++g_seen[i].count;
            break;
        }
    if (!count && g_n < TABLE) {
        slot = g_n++;
        g_seen[slot].key = key;
        g_seen[slot].count = count = 1;
        g_seen[slot].kind = r->kind;
        g_seen[slot].xid = r->xid;
        g_seen[slot].suppressed = 0;
    }
    pthread_mutex_unlock(&g_lock);
    if (count > 1)
        return count;
    frames pf, cf;
    side_stack(&r->producer, &pf);
    side_stack(&r->consumer, &cf);
    char fix[768];
    const char *fix_id = dls_advice(r, fix, sizeof fix);
    const dls_suppress_rule *rule = suppression(r, &pf, &cf);
    if (rule && slot < TABLE) {
        pthread_mutex_lock(&g_lock);
        g_seen[slot].suppressed = 1;
        pthread_mutex_unlock(&g_lock);
    }
    if (!rule)
        write_text(r, &pf, &cf, fix);
    write_log(r, key, &pf, &cf, fix_id, fix, rule);
    dls_summary_add(rule ? DLS_COUNT_SUPPRESSED : DLS_COUNT_RACES, 1);
    return count;
}

size_t dls_race_distinct(void)
{
    pthread_mutex_lock(&g_lock);
    size_t n = g_n;
    pthread_mutex_unlock(&g_lock);
    return n;
}

void dls_race_reset_for_tests(void)
{
    pthread_mutex_lock(&g_lock);
    g_n = 0;
    pthread_mutex_unlock(&g_lock);
}

void dls_race_emit_repeats(void)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n; i++) {
        if (g_seen[i].count < 2 || g_seen[i].suppressed)
            continue;
        char line[160];
        int k = snprintf(line, sizeof line, "dlsync: race %016llx (%s, exchange %llu) seen %u times\n",
                         (unsigned long long)g_seen[i].key, dls_race_kind_name(g_seen[i].kind),
                         (unsigned long long)g_seen[i].xid, g_seen[i].count);
        dls_ownfd_stderr(line, (size_t)k);
    }
    pthread_mutex_unlock(&g_lock);
}
