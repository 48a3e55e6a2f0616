/* Python frames for reports (see pyframes.h). */
#include "pyframes.h"
#include "../common/mutex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PYTHONS 4
#define SLOTS 512
#define FRAMES 16
#define POOL 1536
#define PENDING 8

__thread dls_pythread dls_pythread_now;

static _Atomic(dls_pyframes_arrived_fn) g_arrived;

static dls_py_api g_api[PYTHONS];
static atomic_int g_napi;
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;

int dls_pyframes_add(const dls_py_api *api)
{
    if (!api->is_initialized || !api->gil_check || !api->this_thread_state || !api->get_frame || !api->frame_back ||
        !api->frame_code || !api->frame_line || !api->getattr || !api->utf8 || !api->decref || !api->err_fetch ||
        !api->err_restore || !api->err_clear || !api->gc_disable || !api->gc_enable)
        return -1;
    dls_mutex_lock(&g_lock);
    int n = atomic_load_explicit(&g_napi, memory_order_relaxed), rc = -1;
    for (int i = 0; i < n; i++)
        if (g_api[i].base == api->base)
            rc = 0;
    if (rc && n < PYTHONS) {
        g_api[n] = *api;
        atomic_store_explicit(&g_napi, n + 1, memory_order_release);
        rc = 0;
    }
    dls_mutex_unlock(&g_lock);
    return rc;
}

/* 1 when some libpython is registered. */
static int bound(void)
{
    return atomic_load_explicit(&g_napi, memory_order_acquire) > 0;
}

/* The interpreter whose GIL the calling thread holds, or NULL. */
static const dls_py_api *holding(void)
{
    int n = atomic_load_explicit(&g_napi, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const dls_py_api *py = &g_api[i];
        if (!py->is_initialized() || !py->gil_check())
            continue;
        void *mine = py->this_thread_state();
        if (mine && (!py->current_state || py->current_state() == mine))
            return py;
    }
    return NULL;
}

/* ---- one walk of the frames ---- */

typedef struct {
    int n;
    struct {
        int line;
        uint16_t function, file; /* offsets into text */
    } f[FRAMES];
    size_t used;
    char text[POOL];
} walk;

/* Appends the UTF-8 text of the attribute `name` of code (or of `fallback` when it has none)
 * to w's text; returns its offset. */
static uint16_t put_name(const dls_py_api *py, walk *w, void *code, const char *name, const char *fallback)
{
    void *s = py->getattr(code, name);
    if (!s && fallback) {
        py->err_clear();
        s = py->getattr(code, fallback);
    }
    ssize_t len = 0;
    const char *u = s ? py->utf8(s, &len) : NULL;
    if (!u) {
        py->err_clear();
        u = "?";
        len = 1;
    }
    size_t off = w->used;
    size_t room = sizeof w->text - off;
    if (room == 0) {
        if (s)
            py->decref(s);
        return (uint16_t)(sizeof w->text - 1);
    }
    size_t k = (size_t)len < room - 1 ? (size_t)len : room - 1;
    memcpy(w->text + off, u, k);
    w->text[off + k] = '\0';
    w->used = off + k + 1;
    if (s)
        py->decref(s);
    return (uint16_t)off;
}

/* Reads the calling thread's frames; the thread holds py's GIL. */
static void read_frames(const dls_py_api *py, walk *w)
{
    w->n = 0;
    w->used = 0;
    w->text[sizeof w->text - 1] = '\0';
    void *type, *value, *tb;
    py->err_fetch(&type, &value, &tb);
    int collecting = py->gc_disable();
    void *frame = py->get_frame(); /* borrowed */
    int owned = 0;
    while (frame && w->n < FRAMES && w->used < sizeof w->text - 2) {
        void *code = py->frame_code(frame);
        w->f[w->n].line = py->frame_line(frame);
        if (code) {
            w->f[w->n].function = put_name(py, w, code, "co_qualname", "co_name");
            w->f[w->n].file = put_name(py, w, code, "co_filename", NULL);
            py->decref(code);
            w->n++;
        }
        void *back = py->frame_back(frame);
        if (owned)
            py->decref(frame);
        frame = back;
        owned = 1;
    }
    if (owned && frame)
        py->decref(frame);
    if (collecting)
        py->gc_enable();
    py->err_clear();
    py->err_restore(type, value, tb);
}

/* ---- the ring of captures ---- */

typedef struct {
    uint32_t gen;
    dls_pyframes_state state;
    const void *owner; /* pending: the thread (its dls_pythread) */
    unsigned depth;    /* pending: the hooked GIL release it waits for */
    walk w;
} slot;

static slot *g_slots;
static uint32_t g_next;

static uint32_t handle_of(uint32_t i, uint32_t gen)
{
    return gen * SLOTS + i;
}

/* The slot of handle h when it is still h's, else NULL. */
static slot *slot_of(uint32_t h) DLS_REQUIRES(g_lock)
{
    if (!h || !g_slots)
        return NULL;
    slot *s = &g_slots[h % SLOTS];
    return s->gen == h / SLOTS ? s : NULL;
}

/* Takes the next slot in state st (w copied into it when given); 0 when memory is short. */
static uint32_t take(dls_pyframes_state st, const walk *w, unsigned depth)
{
    uint32_t h = 0;
    dls_mutex_lock(&g_lock);
    if (!g_slots)
        g_slots = calloc(SLOTS, sizeof *g_slots);
    if (g_slots) {
        uint32_t i = g_next++ % SLOTS;
        slot *s = &g_slots[i];
        s->gen = s->gen + 1 < UINT32_MAX / SLOTS ? s->gen + 1 : 1;
        s->state = st;
        s->owner = &dls_pythread_now;
        s->depth = depth;
        if (w)
            s->w = *w;
        h = handle_of(i, s->gen);
    }
    dls_mutex_unlock(&g_lock);
    return h;
}

static __thread uint32_t t_pending[PENDING];

uint32_t dls_pyframes_capture(void)
{
    if (!bound())
        return 0;
    const dls_py_api *py = holding();
    if (py) {
        walk w;
        read_frames(py, &w);
        return w.n ? take(DLS_PYFRAMES_READY, &w, 0) : 0;
    }
    dls_pythread *t = &dls_pythread_now;
    if (!t->depth || t->npending == PENDING)
        return 0;
    uint32_t h = take(DLS_PYFRAMES_PENDING, NULL, t->depth);
    if (h)
        t_pending[t->npending++] = h;
    return h;
}

void dls_pyframes_restored(void)
{
    dls_pythread *t = &dls_pythread_now;
    const dls_py_api *py = holding();
    walk w = {.n = 0};
    if (py)
        read_frames(py, &w);
    unsigned keep = 0;
    dls_mutex_lock(&g_lock);
    for (unsigned i = 0; i < t->npending; i++) {
        slot *s = slot_of(t_pending[i]);
        if (s && s->state == DLS_PYFRAMES_PENDING && s->depth < t->depth) {
            t_pending[keep++] = t_pending[i]; /* made inside a release nested deeper: not this one's */
            continue;
        }
        if (s && s->state == DLS_PYFRAMES_PENDING) {
            s->w = w;
            s->state = w.n ? DLS_PYFRAMES_READY : DLS_PYFRAMES_NONE;
        }
    }
    t->npending = keep;
    dls_mutex_unlock(&g_lock);
    dls_pyframes_arrived_fn arrived = atomic_load_explicit(&g_arrived, memory_order_acquire);
    if (arrived)
        arrived();
}

void dls_pyframes_on_arrival(dls_pyframes_arrived_fn fn)
{
    atomic_store_explicit(&g_arrived, fn, memory_order_release);
}

dls_pyframes_state dls_pyframes_get(uint32_t h, dls_pyframe *out, int max, int *n)
{
    *n = 0;
    dls_mutex_lock(&g_lock);
    const slot *s = slot_of(h);
    dls_pyframes_state st = s ? s->state : DLS_PYFRAMES_NONE;
    if (st == DLS_PYFRAMES_READY)
        for (int i = 0; i < s->w.n && i < max; i++, (*n)++) {
            snprintf(out[i].function, sizeof out[i].function, "%s", s->w.text + s->w.f[i].function);
            snprintf(out[i].file, sizeof out[i].file, "%s", s->w.text + s->w.f[i].file);
            out[i].line = s->w.f[i].line;
        }
    dls_mutex_unlock(&g_lock);
    return st;
}

int dls_pyframes_pending_here(uint32_t h)
{
    dls_mutex_lock(&g_lock);
    const slot *s = slot_of(h);
    int here = s && s->state == DLS_PYFRAMES_PENDING && s->owner == &dls_pythread_now;
    dls_mutex_unlock(&g_lock);
    return here;
}

int dls_pyframes_interpreter_object(const void *fbase, const char *path)
{
    int n = atomic_load_explicit(&g_napi, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if ((uintptr_t)fbase == g_api[i].base)
            return 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libffi.so", 9) == 0 || strncmp(base, "_ctypes.", 8) == 0 ||
           strncmp(base, "libpython3", 10) == 0;
}
