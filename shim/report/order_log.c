/* The `inject` and `fallback` records (see order_log.h). */
#include "order_log.h"

#include "history.h"
#include "json.h"
#include "log.h"
#include "nvtx.h"
#include "summary.h"

#include <stdio.h>

/* `"key": {"id", "handle", "kind"}` of s, or null. */
static void stream_json(dls_json *j, const char *key, const dls_order_stream *s)
{
    if (!s) {
        dls_json_raw(j, key, "null");
        return;
    }
    dls_json_object(j, key);
    dls_json_u64(j, "id", s->id);
    dls_json_hex(j, "handle", s->handle);
    dls_json_str(j, "kind", s->kind);
    dls_json_close(j, '}');
}

void dls_order_log_inject(uint64_t xid, const char *what, const dls_order_stream *from, const dls_order_stream *to,
                          const char *reason)
{
    dls_summary_add(DLS_COUNT_INJECTED, 1);
    dls_history_inject(xid, what, from ? from->id : 0, to ? to->id : 0, reason);
    if (dls_nvtx_active()) {
        char m[64];
        snprintf(m, sizeof m, "inject %s xid %llu", what, (unsigned long long)xid);
        dls_nvtx_mark(m);
    }
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "inject");
    dls_json_u64(&j, "xid", xid);
    dls_json_str(&j, "what", what);
    stream_json(&j, "from", from);
    stream_json(&j, "to", to);
    dls_json_str(&j, "reason", reason);
    dls_log_write(&j);
}

void dls_order_log_fallback(const char *reason, const char *detail)
{
    dls_summary_add(DLS_COUNT_FALLBACKS, 1);
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "fallback");
    dls_json_str(&j, "reason", reason);
    dls_json_str(&j, "detail", detail);
    dls_log_write(&j);
}
