/* The `inject` and `fallback` records (see order_log.h). */
#include "order_log.h"

#include "history.h"
#include "json.h"
#include "log.h"
#include "nvtx.h"
#include "summary.h"

#include <stdio.h>

/* `"key": {"id", "handle", "kind"}` of s, or null. */
static void stream_rec(dls_rec *j, const char *key, const dls_order_stream *s)
{
    if (!s) {
        dls_rec_raw(j, key, "null");
        return;
    }
    dls_rec_object(j, key);
    dls_rec_u64(j, "id", s->id);
    dls_rec_hex(j, "handle", s->handle);
    dls_rec_str(j, "kind", s->kind);
    dls_rec_close(j, '}');
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
    dls_rec j;
    dls_log_begin(&j, "inject");
    dls_rec_u64(&j, "xid", xid);
    dls_rec_str(&j, "what", what);
    stream_rec(&j, "from", from);
    stream_rec(&j, "to", to);
    dls_rec_str(&j, "reason", reason);
    dls_log_write(&j);
}

void dls_order_log_fallback(const char *reason, const char *detail)
{
    dls_summary_add(DLS_COUNT_FALLBACKS, 1);
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "fallback");
    dls_rec_str(&j, "reason", reason);
    dls_rec_str(&j, "detail", detail);
    dls_log_write(&j);
}
