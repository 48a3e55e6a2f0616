/* The rings of the query API (see history.h). */
#include "history.h"
#include "../common/mutex.h"
#include "../common/text.h"

#include <pthread.h>
#include <stdlib.h>

#define EXCHANGES 4096
#define INJECTIONS 1024

static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_history_exchange *g_exchanges; /* allocated at the first exchange kept */
static dls_history_injection g_injections[INJECTIONS];
static uint64_t g_seq;

void dls_history_put_exchange(const dls_history_exchange *e)
{
    dls_mutex_lock(&g_lock);
    if (!g_exchanges)
        g_exchanges = calloc(EXCHANGES, sizeof *g_exchanges);
    if (g_exchanges)
        g_exchanges[e->xid % EXCHANGES] = *e;
    dls_mutex_unlock(&g_lock);
}

int dls_history_get_exchange(uint64_t xid, dls_history_exchange *out)
{
    int rc = -1;
    dls_mutex_lock(&g_lock);
    if (xid && g_exchanges && g_exchanges[xid % EXCHANGES].xid == xid) {
        *out = g_exchanges[xid % EXCHANGES];
        rc = 0;
    }
    dls_mutex_unlock(&g_lock);
    return rc;
}

void dls_history_inject(uint64_t xid, const char *what, uint64_t from_stream, uint64_t to_stream, const char *reason)
{
    dls_mutex_lock(&g_lock);
    dls_history_injection *e = &g_injections[g_seq % INJECTIONS];
    e->seq = ++g_seq;
    e->xid = xid;
    dls_text_copy(e->what, sizeof e->what, what);
    e->from_stream = from_stream;
    e->to_stream = to_stream;
    dls_text_copy(e->reason, sizeof e->reason, reason);
    dls_mutex_unlock(&g_lock);
}

uint64_t dls_history_injections(void)
{
    dls_mutex_lock(&g_lock);
    uint64_t n = g_seq;
    dls_mutex_unlock(&g_lock);
    return n;
}

int dls_history_get_injection(uint64_t seq, dls_history_injection *out)
{
    int rc = -1;
    dls_mutex_lock(&g_lock);
    if (seq && seq <= g_seq && g_seq - seq < INJECTIONS) {
        *out = g_injections[(seq - 1) % INJECTIONS];
        rc = 0;
    }
    dls_mutex_unlock(&g_lock);
    return rc;
}
