/* Race reports waiting for their consumer's Python frames (see race_wait.h). */
#include "race_wait.h"
#include "../common/mutex.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WAITING 16

/* A place in the queue: the report and the thread (its pyframes state) it waits for. */
typedef struct {
    int used;
    const void *owner;
    dls_race_waiting w;
} place;

static place g_waiting[WAITING];
static dls_mutex g_waiting_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *keep(char *out, size_t n, const char *s)
{
    if (!s)
        return NULL;
    snprintf(out, n, "%s", s);
    return out;
}

int dls_race_wait(const dls_race *r, uint64_t key, const dls_stack *ps, const dls_stack *cs)
{
    dls_mutex_lock(&g_waiting_lock);
    place *p = NULL;
    for (int i = 0; i < WAITING && !p; i++)
        if (!g_waiting[i].used)
            p = &g_waiting[i];
    if (p) {
        dls_race_waiting *w = &p->w;
        p->used = 1;
        p->owner = &dls_pythread_now;
        w->key = key;
        w->r = *r;
        w->r.dtype = keep(w->dtype, sizeof w->dtype, r->dtype);
        w->r.why = keep(w->why, sizeof w->why, r->why);
        w->r.producer.op = keep(w->pop, sizeof w->pop, r->producer.op);
        w->r.consumer.op = keep(w->cop, sizeof w->cop, r->consumer.op);
        w->r.ndim = r->ndim < 16 ? r->ndim : 16;
        if (r->shape && w->r.ndim > 0)
            memcpy(w->shape, r->shape, (size_t)w->r.ndim * sizeof *w->shape);
        w->r.shape = r->shape ? w->shape : NULL;
        w->pstack = *ps;
        w->cstack = *cs;
    }
    dls_mutex_unlock(&g_waiting_lock);
    return p != NULL;
}

int dls_race_wait_take(int all, dls_race_waiting *out)
{
    int found = 0;
    dls_mutex_lock(&g_waiting_lock);
    for (int i = 0; i < WAITING && !found; i++) {
        place *q = &g_waiting[i];
        if (q->used && (all || (q->owner == &dls_pythread_now && !dls_pyframes_pending_here(q->w.cstack.py)))) {
            *out = q->w;
            q->used = 0;
            found = 1;
        }
    }
    dls_mutex_unlock(&g_waiting_lock);
    if (!found)
        return 0;
    out->r.dtype = out->r.dtype ? out->dtype : NULL;
    out->r.why = out->r.why ? out->why : NULL;
    out->r.producer.op = out->r.producer.op ? out->pop : NULL;
    out->r.consumer.op = out->r.consumer.op ? out->cop : NULL;
    out->r.shape = out->r.shape ? out->shape : NULL;
    return 1;
}
