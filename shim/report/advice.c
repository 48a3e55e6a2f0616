/* Fix lines of race reports (see advice.h). */
#include "advice.h"

#include "race_types.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *fix, *text;
} row;

static const row g_path[DLS_XPATH_N_] = {
#define DLS_ADVICE_PATH(id, fix, title, text) [DLS_XPATH_##id] = {fix, text},
#define DLS_ADVICE_KIND(kind, fix, title, text)
#include "advice.def"
#undef DLS_ADVICE_PATH
#undef DLS_ADVICE_KIND
};

static const struct {
    dls_race_kind kind;
    row r;
} g_kind[] = {
#define DLS_ADVICE_PATH(id, fix, title, text)
#define DLS_ADVICE_KIND(kind, fix, title, text) {DLS_RACE_##kind, {fix, text}},
#include "advice.def"
#undef DLS_ADVICE_PATH
#undef DLS_ADVICE_KIND
};

static const row *select_row(const dls_race *r)
{
    for (size_t i = 0; i < sizeof g_kind / sizeof *g_kind; i++)
        if (g_kind[i].kind == r->kind)
            return &g_kind[i].r;
    return &g_path[(unsigned)r->path < DLS_XPATH_N_ ? r->path : DLS_XPATH_NATIVE];
}

/* A stream written the way `style` asks: 0 a cudaStream_t expression, 1 a dlsync.h stream value,
 * 2 a Python integer. */
static void stream_value(char *buf, size_t n, const dls_race_stream *s, int style)
{
    static const char *const legacy[] = {"cudaStreamLegacy", "DLSYNC_STREAM_LEGACY", "1"};
    static const char *const per_thread[] = {"cudaStreamPerThread", "DLSYNC_STREAM_PER_THREAD", "2"};
    static const char *const cast[] = {"(cudaStream_t)", "(intptr_t)", ""};
    if (s->host)
        snprintf(buf, n, "the host");
    else if (s->kind && strcmp(s->kind, "legacy") == 0)
        snprintf(buf, n, "%s", legacy[style]);
    else if (s->kind && strcmp(s->kind, "per-thread") == 0)
        snprintf(buf, n, "%s", per_thread[style]);
    else
        snprintf(buf, n, "%s0x%jx", cast[style], (uintmax_t)s->handle);
}

/* A stream as a cudaStream_t expression; when the sides are on different devices it says the
 * stream's device (an event records only with its stream's device current, and a default-stream
 * handle names the current device's stream). */
static void stream_expression(char *buf, size_t n, const dls_race *r, const dls_race_stream *s)
{
    stream_value(buf, n, s, 0);
    size_t k = strlen(buf);
    if (dls_race_across_devices(r) && k < n)
        snprintf(buf + k, n - k, " /* of device %d */", s->device);
}

/* The text of placeholder `name` (len bytes) for r, in buf. */
static const char *placeholder(const dls_race *r, const char *name, size_t len, char *buf, size_t n)
{
#define IS(s) (len == sizeof s - 1 && memcmp(name, s, len) == 0)
    if (IS("fw"))
        return r->framework ? r->framework : "the producer";
    if (IS("symbol"))
        return r->symbol ? r->symbol : "the producer's to_dlpack";
    if (IS("pop"))
        return r->producer.op ? r->producer.op : "the producer's operation";
    if (IS("cop"))
        return r->consumer.op ? r->consumer.op : "the consumer's operation";
    if (IS("ps"))
        stream_expression(buf, n, r, &r->producer.stream);
    else if (IS("cs"))
        stream_expression(buf, n, r, &r->consumer.stream);
    else if (IS("csarg"))
        stream_value(buf, n, &r->consumer.stream, 1);
    else if (IS("cspy"))
        stream_value(buf, n, &r->consumer.stream, 2);
    else
        snprintf(buf, n, "{%.*s}", (int)len, name);
    return buf;
#undef IS
}

const char *dls_advice(const dls_race *r, char *buf, size_t n)
{
    const row *w = select_row(r);
    size_t len = 0;
    if (!n)
        return w->fix;
    for (const char *p = w->text; *p && len + 1 < n;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close) {
            buf[len++] = *p++;
            continue;
        }
        char value[128];
        const char *v = placeholder(r, p + 1, (size_t)(close - p - 1), value, sizeof value);
        size_t k = strlen(v) < n - 1 - len ? strlen(v) : n - 1 - len;
        memcpy(buf + len, v, k);
        len += k;
        p = close + 1;
    }
    buf[len] = '\0';
    return w->fix;
}
