/* The binding engine (see engine.h). */
#include "engine.h"

#include "../common/mutex.h"
#include "../common/config.h"
#include "../common/map.h"
#include "../report/warn.h"
#include "bindings.h"
#include "caller.h"
#include "got.h"
#include "libdl.h"
#include "objects.h"
#include "profile_file.h"
#include "resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- wrapped names: a map filled once, read lock-free ---- */

typedef struct {
    const char *name;            /* the key */
    const dls_profile *row;      /* a profile row, or */
    const dls_engine_hook *hook; /* a hook */
} wanted;

static wanted g_name_slots[512]; /* the built-in rows, 64 DLSYNC_PROFILES rows and the providers' hooks */
static dls_map g_names = DLS_MAP_OVER(DLS_MAP_STRINGS, g_name_slots);
static atomic_int g_names_ready;
static pthread_once_t g_names_once = PTHREAD_ONCE_INIT;

/* Adds name (the first row or hook of a name wins). */
static void add_name(const char *name, const dls_profile *row, const dls_engine_hook *hook)
{
    size_t i = dls_map_index(&g_names, (uintptr_t)name);
    if (!dls_map_key_at(&g_names, i) && !dls_map_full(&g_names))
        *(wanted *)dls_map_claim(&g_names, i, (uintptr_t)name) = (wanted){name, row, hook};
}

/* The hook providers start-up registered (dls_engine_add_hooks), in their order. */
static struct {
    const dls_engine_hook *hooks;
    size_t n;
} g_providers[4];
static size_t g_nproviders;

void dls_engine_add_hooks(const dls_engine_hook *hooks, size_t n)
{
    if (g_nproviders < sizeof g_providers / sizeof *g_providers)
        g_providers[g_nproviders++] = (typeof(*g_providers)){hooks, n};
}

static void fill_names(void)
{
    size_t n;
    const dls_profile *rows = dls_profiles_builtin(&n);
    for (size_t i = 0; i < n; i++)
        add_name(rows[i].symbol, &rows[i], NULL);
    rows = dls_file_rows(&n);
    for (size_t i = 0; i < n; i++)
        add_name(rows[i].symbol, &rows[i], NULL);
    for (size_t p = 0; p < g_nproviders; p++)
        for (size_t i = 0; i < g_providers[p].n; i++)
            add_name(g_providers[p].hooks[i].name, NULL, &g_providers[p].hooks[i]);
    atomic_store_explicit(&g_names_ready, 1, memory_order_release);
}

static const wanted *find_name(const char *name)
{
    if (!atomic_load_explicit(&g_names_ready, memory_order_acquire))
        return NULL;
    return dls_map_get(&g_names, (uintptr_t)name);
}

int dls_engine_wants(const char *name)
{
    const wanted *w = find_name(name);
    return w && (w->row || w->hook->by_dlsym);
}

/* The value a slot referring to w gets when its function is `real` (NULL: leave it). */
static void *target_of(const wanted *w, void *real)
{
    if (w->row)
        return dls_binding_stub(w->row, real);
    if (!w->hook->entry_for)
        return w->hook->entry;
    void *t = w->hook->entry_for(real);
    if (!t)
        dls_warn_once("hook-declined",
                      "%s of %s: more objects define it than dlsync has hooks for (a libpython per dlmopen "
                      "namespace, a second CUPTI library?); calls to it there pass dlsync by",
                      w->name, dls_object_path(real));
    return t;
}

void *dls_engine_wrap(const char *name, void *real)
{
    const wanted *w = find_name(name);
    if (!w || (!w->row && !w->hook->by_dlsym) || dls_addr_in_shim(real))
        return real;
    void *t = target_of(w, real);
    return t ? t : real;
}

/* ---- objects already finished, keyed by load bias and program headers ---- */

/* Each finished object is keyed by its program headers (no two loaded objects share them) and
 * keeps its load bias, which must match too. */
typedef struct {
    uintptr_t phdr, base;
} finished;

static finished g_done_slots[8192];
static dls_map g_done = DLS_MAP_OVER(DLS_MAP_WORDS, g_done_slots);
static dls_mutex g_done_lock = PTHREAD_MUTEX_INITIALIZER;

/* When the set is valid: dlpi_subs, and the unloads counted below, as the scans that filled it
 * saw them. dlpi_subs alone does not do: while an object sits in another dlmopen namespace,
 * glibc's dl_iterate_phdr miscounts (it adds a namespace's object count once per object of it),
 * so the value after an unload can equal one seen before. */
static unsigned long long g_subs, g_seen_unloads;
static atomic_ullong g_unloads; /* dlcloses made through the shim, finished */
static atomic_uint g_unloading; /* dlcloses made through the shim, in progress */

/* What a scan saw when it listed the objects. */
typedef struct {
    unsigned long long subs, unloads;
} scan_epoch;

void dls_engine_unload_begin(void)
{
    atomic_fetch_add(&g_unloading, 1);
}

void dls_engine_unload_end(int unloaded)
{
    if (unloaded)
        atomic_fetch_add(&g_unloads, 1);
    atomic_fetch_sub(&g_unloading, 1);
}

/* 1 when (base, phdr) is finished; with `mark` (the epoch of the scan that read it), marks it,
 * unless an unload began or ended since that scan listed the objects. */
static int done(uintptr_t base, uintptr_t phdr, const scan_epoch *mark)
{
    dls_mutex_lock(&g_done_lock);
    if (mark && (atomic_load(&g_unloading) || atomic_load(&g_unloads) != mark->unloads ||
                 g_seen_unloads != mark->unloads || g_subs != mark->subs))
        mark = NULL;
    finished *f = dls_map_get(&g_done, phdr);
    int found = f && f->base == base;
    if (!found && mark && phdr && (f = dls_map_put(&g_done, phdr)) != NULL)
        f->base = base;
    dls_mutex_unlock(&g_done_lock);
    return found;
}

/* Forgets every finished object when an object may have been unloaded since the set was
 * filled (another may now sit at the same address), or while an unload is in progress. */
static void note_unloads(const scan_epoch *e)
{
    dls_mutex_lock(&g_done_lock);
    if (e->subs != g_subs || e->unloads != g_seen_unloads || atomic_load(&g_unloading)) {
        dls_map_clear(&g_done);
        g_subs = e->subs;
        g_seen_unloads = e->unloads;
    }
    dls_mutex_unlock(&g_done_lock);
}

/* ---- one scan ---- */

typedef struct {
    void **slot;
    const wanted *w;
    void *target; /* what the slot was given; NULL: left as it is */
} candidate;

typedef struct {
    candidate *v;
    size_t n, cap;
    int failed;
    int other_namespace; /* the object is not in the base namespace: no dlvsym hook */
} candidate_list;

static void note_slot(void **slot, const char *name, void *arg)
{
    candidate_list *c = arg;
    const wanted *w = find_name(name);
    if (!w || c->failed || (c->other_namespace && w->hook && w->hook->base_namespace_only))
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        candidate *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->failed = 1;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (candidate){slot, w, NULL};
}

/* 1 when `addr` lies in one of o's loaded segments. */
static int defines(const dls_object *o, const void *addr)
{
    for (ElfW(Half) i = 0; i < o->phnum; i++) {
        uintptr_t lo = o->base + o->phdr[i].p_vaddr;
        if (o->phdr[i].p_type == PT_LOAD && (uintptr_t)addr >= lo && (uintptr_t)addr < lo + o->phdr[i].p_memsz)
            return 1;
    }
    return 0;
}

/* Patches the candidates of one held object; returns 1 when every one was resolved. */
static int patch(const dls_object *o, const ElfW(Dyn) * dyn, candidate_list *c, uintptr_t relro_lo, uintptr_t relro_hi)
{
    const void *gadget = dls_gadget_of_object(o->base, dyn);
    void *(*real_dlsym)(void *, const char *) = dls_real_dlsym_fn();
    int complete = 1;
    for (size_t i = 0; i < c->n; i++) {
        void *real = dls_call_as(gadget, (void *)real_dlsym, (uintptr_t)RTLD_DEFAULT, (uintptr_t)c->v[i].w->name, 0, 0);
        if (!real || dls_addr_in_shim(real)) {
            complete &= real != NULL;
            continue;
        }
        if (c->v[i].w->hook && c->v[i].w->hook->skip_definer && defines(o, real))
            continue;
        void *t = target_of(c->v[i].w, real);
        c->v[i].target = t;
        if (!t || __atomic_load_n(c->v[i].slot, __ATOMIC_ACQUIRE) == t)
            continue;
        if (dls_got_write(c->v[i].slot, t, relro_lo, relro_hi) != 0)
            dls_warn_once("got-write", "cannot make the GOT of %s writable; %s called from it is not traced",
                          o->name[0] ? o->name : "the program", c->v[i].w->name);
    }
    /* A lazy binding in flight when a slot was written may store the real function after it:
     * look once more after letting it finish. */
    sched_yield();
    for (size_t i = 0; i < c->n; i++) {
        void *v = __atomic_load_n(c->v[i].slot, __ATOMIC_ACQUIRE);
        if (c->v[i].target && v != c->v[i].target)
            complete = 0;
    }
    return complete;
}

/* Reads and patches one object while it is held loaded (lmid: its namespace); marks it finished
 * when e (the scan's epoch) is given and every slot was patched. */
static void scan_object(const dls_object *o, Lmid_t lmid, const scan_epoch *e)
{
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (ElfW(Half) i = 0; i < o->phnum; i++) {
        if (o->phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(o->base + o->phdr[i].p_vaddr);
        else if (o->phdr[i].p_type == PT_GNU_RELRO) {
            relro_lo = o->base + o->phdr[i].p_vaddr;
            relro_hi = relro_lo + o->phdr[i].p_memsz;
        }
    }
    candidate_list c = {.other_namespace = lmid != LM_ID_BASE};
    if (dyn)
        dls_got_each(o->base, dyn, note_slot, &c);
    int complete = !c.failed && (c.n == 0 || patch(o, dyn, &c, relro_lo, relro_hi));
    free(c.v);
    if (complete && e)
        done(o->base, (uintptr_t)o->phdr, e);
}

/* Holds o loaded (NULL when it is gone or is another object by now: the object at o's program
 * headers must be the one held). Only link map pointers are compared, never read: the object at
 * o's program headers may be another one that another thread is unloading, whose name would be
 * freed under a reader (TSan saw exactly that with a name comparison). */
static void *hold(const dls_object *o, Lmid_t lmid) DLS_UNLOCKED
{
    if (!o->name[0] && lmid == LM_ID_BASE)
        return dls_real_dlopen(NULL, RTLD_LAZY);
    if (!o->name[0])
        return NULL;
    void *h = lmid == LM_ID_BASE ? dls_real_dlopen(o->name, RTLD_LAZY | RTLD_NOLOAD)
                                 : dls_real_dlmopen(lmid, o->name, RTLD_LAZY | RTLD_NOLOAD);
    struct link_map *held = NULL, *at = NULL;
    Dl_info di;
    if (h && (dlinfo(h, RTLD_DI_LINKMAP, &held) != 0 || !dladdr1(o->phdr, &di, (void **)&at, RTLD_DL_LINKMAP) ||
              !held || at != held)) {
        dls_release(h, o->phdr);
        h = NULL;
    }
    return h;
}

/* Patches the objects of list l (namespace lmid): those not finished yet when e (the epoch the
 * list was made in) is given, every one otherwise. */
static void scan_list(const dls_object_list *l, Lmid_t lmid, int hold_objects, const scan_epoch *e)
{
    if (e)
        note_unloads(e);
    for (size_t i = 0; i < l->n; i++) {
        const dls_object *o = &l->v[i];
        if (!e || !done(o->base, (uintptr_t)o->phdr, NULL)) {
            void *h = hold_objects ? hold(o, lmid) : NULL;
            if (h || !hold_objects)
                scan_object(o, lmid, e);
            if (h)
                dls_release(h, o->phdr);
        }
    }
}

void dls_engine_scan(int hold_objects)
{
    if (dls_config_get()->mode == DLS_MODE_OFF)
        return;
    pthread_once(&g_names_once, fill_names);
    scan_epoch e = {.unloads = atomic_load(&g_unloads)}; /* before listing: an unload after it clears */
    dls_object_list l;
    dls_objects_list(&l, dls_shim_base());
    e.subs = l.subs;
    scan_list(&l, LM_ID_BASE, hold_objects, &e);
    dls_objects_free(&l);
}

void dls_engine_scan_namespace(void *handle)
{
    Lmid_t lmid = LM_ID_BASE;
    struct link_map *map = NULL;
    if (dls_config_get()->mode == DLS_MODE_OFF || dlinfo(handle, RTLD_DI_LMID, &lmid) != 0 || lmid == LM_ID_BASE ||
        dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
        return;
    /* dl_iterate_phdr called from the shim would list the base namespace. */
    const void *gadget = dls_gadget_of_object(map->l_addr, map->l_ld);
    if (!gadget) {
        dls_warn_once("namespace-gadget",
                      "cannot list the dlmopen namespace of %s (no _fini epilogue found); "
                      "its objects are not traced",
                      map->l_name);
        return;
    }
    pthread_once(&g_names_once, fill_names);
    dls_object_list l;
    dls_objects_list_as(&l, dls_shim_base(), gadget);
    /* Every object of the namespace, every time: its own dlclose (not the shim's) may have
     * unloaded one and put another at its address unseen. The writes are idempotent. */
    scan_list(&l, lmid, 1, NULL);
    dls_objects_free(&l);
}

int dls_release(void *handle, const void *inside)
{
    dls_dlclose_fn f = dls_real_dlclose_fn();
    struct link_map *held = NULL, *at = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &held) != 0)
        held = NULL;
    dls_engine_unload_begin();
    int rc = f ? f(handle) : -1;
    /* Still loaded when the address inside it still belongs to the same link map (pointers are
     * compared, never read: the loader's writes to a link map are not ordered with this). */
    Dl_info di;
    dls_engine_unload_end(!held || !dladdr1(inside, &di, (void **)&at, RTLD_DL_LINKMAP) || at != held);
    return rc;
}
