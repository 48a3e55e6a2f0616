/* The race reports kept for the query API (see race_entries.h). */
#include "race_entries.h"
#include "../common/mutex.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TABLE 256

static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static dls_race_entry *g_entries[TABLE];
static size_t g_n;

/* A copy of s in the block at *at (advanced past it); NULL for NULL. */
static const char *stash(char **at, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    memcpy(*at, s, n);
    const char *out = *at;
    *at += n;
    return out;
}

void dls_race_entry_keep(const dls_race_entry *e)
{
    const char *const strs[] = {e->kind, e->framework,      e->symbol,         e->producer_op, e->consumer_op,
                                e->fix,  e->producer_stack, e->consumer_stack, e->text};
    size_t need = sizeof *e;
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        need += strs[i] ? strlen(strs[i]) + 1 : 0;
    dls_race_entry *kept = malloc(need);
    if (!kept)
        return;
    char *at = (char *)(kept + 1);
    kept->key = e->key;
    kept->xid = e->xid;
    kept->kind = stash(&at, e->kind);
    kept->framework = stash(&at, e->framework);
    kept->symbol = stash(&at, e->symbol);
    kept->producer_op = stash(&at, e->producer_op);
    kept->consumer_op = stash(&at, e->consumer_op);
    kept->fix = stash(&at, e->fix);
    kept->producer_stack = stash(&at, e->producer_stack);
    kept->consumer_stack = stash(&at, e->consumer_stack);
    kept->text = stash(&at, e->text);
    int placed = 0;
    dls_mutex_lock(&g_lock);
    if (g_n < TABLE) {
        g_entries[g_n++] = kept;
        placed = 1;
    }
    dls_mutex_unlock(&g_lock);
    if (!placed)
        free(kept);
}

size_t dls_race_entries(void)
{
    dls_mutex_lock(&g_lock);
    size_t n = g_n;
    dls_mutex_unlock(&g_lock);
    return n;
}

int dls_race_entry_at(size_t i, dls_race_entry *out)
{
    int rc = -1;
    dls_mutex_lock(&g_lock);
    if (i < g_n) {
        *out = *g_entries[i];
        rc = 0;
    }
    dls_mutex_unlock(&g_lock);
    return rc;
}
