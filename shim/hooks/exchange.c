/* Live-exchange registry and the observer slot (see exchange.h, policy_hooks.h). An
 * open-addressing hash table keyed by tensor pointer, linear probing, backward-shift deletion,
 * under a spin lock (each operation is one short critical section that calls nothing; the table
 * is allocated outside it). */
#include "exchange.h"
#include "policy_hooks.h"

#include "../common/spin.h"
#include "../report/summary.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define REMOVED_RING 256

typedef struct {
    const void *tensor;
    uint64_t xid;
} removed_entry;

static dls_spin g_lock = DLS_SPIN_INIT;
static dls_exchange *g_table; /* slots with tensor == NULL are empty */
static size_t g_cap;
static atomic_size_t g_live; /* written under the lock (dls_spin_count_add), read without it */
static removed_entry g_removed[REMOVED_RING];
static unsigned g_removed_next;
_Atomic(const dls_exchange_observer *) dls_exchange_observer_now;

uint64_t dls_exchange_next_id(void)
{
    return dls_summary_new_exchange();
}

static size_t hash_ptr(const void *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* Index of tensor's slot, or of the empty slot where it would go. Requires g_cap > 0. */
static size_t probe(const void *tensor)
{
    size_t i = hash_ptr(tensor, g_cap);
    while (g_table[i].tensor && g_table[i].tensor != tensor)
        i = (i + 1) & (g_cap - 1);
    return i;
}

/* Moves the entries into t (cap slots, zeroed) and returns the old table. Lock held. */
static dls_exchange *rehash(dls_exchange *t, size_t cap)
{
    dls_exchange *old = g_table;
    size_t oldcap = g_cap;
    g_table = t;
    g_cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].tensor)
            g_table[probe(old[i].tensor)] = old[i];
    return old;
}

/* 1 when one more entry needs a larger table. Lock held. */
static int full(void)
{
    return (atomic_load_explicit(&g_live, memory_order_relaxed) + 1) * 2 > g_cap;
}

/* Makes room for one more entry. Called, and returns, with the lock held, which it drops to
 * allocate and to free the replaced table. Returns 0, or -1 when no memory could be found. */
static __attribute__((noinline, cold)) int make_room(void)
{
    while (full()) {
        /* Allocated without the lock; another thread may have grown the table meanwhile. */
        size_t cap = g_cap ? g_cap * 2 : 64;
        dls_spin_unlock(&g_lock);
        dls_exchange *spare = calloc(cap, sizeof *spare), *old = NULL;
        dls_spin_lock(&g_lock);
        if (!spare)
            return full() ? -1 : 0;
        if (full() && cap > g_cap) {
            old = rehash(spare, cap);
            spare = NULL;
        }
        dls_spin_unlock(&g_lock);
        free(spare);
        free(old);
        dls_spin_lock(&g_lock);
    }
    return 0;
}

/* Takes the lock and returns the slot for tensor, or NULL (lock still held) when there is no
 * room. */
static inline __attribute__((always_inline)) dls_exchange *claim_slot(const void *tensor)
{
    dls_spin_lock(&g_lock);
    if (__builtin_expect(full(), 0) && make_room() != 0)
        return NULL;
    size_t i = probe(tensor);
    if (!g_table[i].tensor)
        dls_spin_count_add(&g_live, 1);
    return &g_table[i];
}

int dls_exchange_add(const dls_exchange *x)
{
    dls_exchange *slot = claim_slot(x->tensor);
    if (slot)
        *slot = *x;
    dls_spin_unlock(&g_lock);
    return slot ? 0 : -1;
}

/* dls_exchange_make with the xid given. */
static inline __attribute__((always_inline)) void make(dls_exchange *x, const dls_exchange_origin *o, uint64_t xid)
{
    const DLTensor *t = o->view->tensor;
    const dls_profile *p = o->at;
    x->xid = xid;
    x->tensor = o->tensor;
    x->versioned = o->view->versioned;
    x->data = t->data;
    x->device = t->device;
    x->dtype = t->dtype;
    x->lo = (uintptr_t)t->data + (uintptr_t)o->extent->lo;
    x->hi = (uintptr_t)t->data + (uintptr_t)o->extent->hi;
    x->flags = o->view->flags;
    x->producer = o->is_export ? p : NULL;
    x->producer_lib = o->is_export ? o->lib : NULL;
    x->consumer = o->is_export ? NULL : p;
    x->seen_at = p;
    x->path = p->path;
    x->deleter = o->view->deleter_slot ? (dls_deleter_fn)*o->view->deleter_slot : NULL;
    x->imports = o->is_export ? 0 : 1;
    x->policy = NULL;
}

void dls_exchange_make(dls_exchange *x, const dls_exchange_origin *o)
{
    make(x, o, dls_exchange_next_id());
}

/* dls_exchange_add_made when there was no room: fills *out only. */
__attribute__((noinline, cold)) static uint64_t not_added(const dls_exchange_origin *o, dls_exchange *out, uint64_t xid)
{
    make(out, o, xid);
    return 0;
}

/* dls_exchange_add_made, inline so that a caller with a constant origin kind and out loses the
 * tests of both. */
static inline __attribute__((always_inline)) uint64_t add_made(const dls_exchange_origin *o, dls_exchange *out)
{
    uint64_t xid = dls_exchange_next_id();
    dls_exchange *slot = claim_slot(o->tensor);
    if (__builtin_expect(!slot, 0)) {
        dls_spin_unlock(&g_lock);
        return out ? not_added(o, out, xid) : 0;
    }
    make(slot, o, xid);
    if (out)
        *out = *slot;
    dls_spin_unlock(&g_lock);
    return xid;
}

uint64_t dls_exchange_add_made(const dls_exchange_origin *o, dls_exchange *out)
{
    return add_made(o, out);
}

/* dls_exchange_add_export once the lock is held (and released here). With may_grow 0 it leaves a
 * full table to add_export_slow (a tail call, so the common path saves no registers). */
static inline __attribute__((always_inline)) uint64_t add_export_held(const dls_profile *p, const char *lib, void *mt,
                                                                      int64_t lo, int64_t hi, dls_deleter_fn deleter,
                                                                      int may_grow);

__attribute__((noinline, cold)) static uint64_t add_export_slow(const dls_profile *p, const char *lib, void *mt,
                                                                int64_t lo, int64_t hi, dls_deleter_fn deleter)
{
    dls_spin_lock(&g_lock);
    return add_export_held(p, lib, mt, lo, hi, deleter, 1);
}

static inline __attribute__((always_inline)) uint64_t add_export_held(const dls_profile *p, const char *lib, void *mt,
                                                                      int64_t lo, int64_t hi, dls_deleter_fn deleter,
                                                                      int may_grow)
{
    dls_managed_view v = {0};
    dls_managed_view_of(mt, p->versioned, &v); /* accepted by the caller */
    if (g_cap && *v.deleter_slot == (void *)deleter) {
        dls_exchange *e = &g_table[probe(mt)];
        if (e->tensor) { /* handed out again as it is: the same exchange */
            uint64_t xid = e->xid;
            dls_spin_unlock(&g_lock);
            return xid;
        }
    }
    if (__builtin_expect(full(), 0)) {
        if (!may_grow) {
            dls_spin_unlock(&g_lock);
            return add_export_slow(p, lib, mt, lo, hi, deleter);
        }
        if (make_room() != 0) {
            dls_spin_unlock(&g_lock);
            dls_exchange_next_id(); /* counted all the same */
            return 0;
        }
    }
    dls_exchange *e = &g_table[probe(mt)];
    if (!e->tensor)
        dls_spin_count_add(&g_live, 1);
    uint64_t xid = dls_exchange_next_id();
    dls_extent ext = {lo, hi};
    make(e, &(dls_exchange_origin){p, lib, mt, &v, &ext, 1}, xid);
    dls_spin_unlock(&g_lock);
    *v.deleter_slot = (void *)deleter;
    return xid;
}

uint64_t dls_exchange_add_export(const dls_profile *p, const char *lib, void *mt, int64_t lo, int64_t hi,
                                 dls_deleter_fn deleter)
{
    void **slot =
        p->versioned ? (void **)&((DLManagedTensorVersioned *)mt)->deleter : (void **)&((DLManagedTensor *)mt)->deleter;
    if (!*slot) {               /* not registered: nothing would release it */
        dls_exchange_next_id(); /* counted all the same */
        return 0;
    }
    if (__builtin_expect(!dls_spin_trylock(&g_lock), 0))
        return add_export_slow(p, lib, mt, lo, hi, deleter);
    return add_export_held(p, lib, mt, lo, hi, deleter, 0);
}

/* Slot index of the live tensor, or -1. Caller holds the lock. */
static inline __attribute__((always_inline)) long find_locked(const void *tensor)
{
    if (!g_cap || !tensor)
        return -1;
    size_t i = probe(tensor);
    return g_table[i].tensor ? (long)i : -1;
}

int dls_exchange_find_tensor(const void *tensor, dls_exchange *out)
{
    dls_spin_lock(&g_lock);
    long i = find_locked(tensor);
    if (i >= 0 && out)
        *out = g_table[i];
    dls_spin_unlock(&g_lock);
    return i >= 0 ? 0 : -1;
}

long dls_exchange_imports(const void *tensor)
{
    dls_spin_lock(&g_lock);
    long i = find_locked(tensor);
    long n = i >= 0 ? (long)g_table[i].imports : -1;
    dls_spin_unlock(&g_lock);
    return n;
}

int dls_exchange_note_import(const void *tensor, const dls_profile *consumer, dls_exchange *out)
{
    dls_spin_lock(&g_lock);
    long i = find_locked(tensor);
    if (i >= 0) {
        g_table[i].consumer = consumer;
        g_table[i].imports++;
        if (out)
            *out = g_table[i];
    }
    dls_spin_unlock(&g_lock);
    return i >= 0 ? 0 : -1;
}

int dls_exchange_set_policy(const void *tensor, void *policy)
{
    dls_spin_lock(&g_lock);
    long i = find_locked(tensor);
    if (i >= 0)
        g_table[i].policy = policy;
    dls_spin_unlock(&g_lock);
    return i >= 0 ? 0 : -1;
}

/* Before slot i is emptied: moves back the entries after it whose probe chains pass through it
 * (backward-shift deletion keeps every chain unbroken) and returns the slot to empty instead.
 * Lock held; slot i + 1 is taken. */
__attribute__((noinline)) static size_t close_gap(size_t i)
{
    for (size_t j = i;;) {
        j = (j + 1) & (g_cap - 1);
        if (!g_table[j].tensor)
            return i;
        size_t home = hash_ptr(g_table[j].tensor, g_cap);
        if (((j - home) & (g_cap - 1)) >= ((j - i) & (g_cap - 1))) {
            g_table[i] = g_table[j];
            i = j;
        }
    }
}

int dls_exchange_remove(const void *tensor, dls_exchange *out, dls_deleter_fn *deleter)
{
    dls_spin_lock(&g_lock);
    long found = find_locked(tensor);
    if (found < 0) {
        dls_spin_unlock(&g_lock);
        return -1;
    }
    size_t i = (size_t)found;
    if (out)
        *out = g_table[i];
    if (deleter)
        *deleter = g_table[i].deleter;
    g_removed[g_removed_next++ % REMOVED_RING] = (removed_entry){tensor, g_table[i].xid};
    if (g_table[(i + 1) & (g_cap - 1)].tensor)
        i = close_gap(i);
    g_table[i].tensor = NULL; /* empty: the other fields are written whole by the next add */
    dls_spin_count_add(&g_live, (size_t)-1);
    dls_spin_unlock(&g_lock);
    return 0;
}

/* dls_exchange_remove_owned once slot i (found, next slot taken) is to be emptied: the shift,
 * out of line so that the common path saves no registers. Lock held; released here. */
__attribute__((noinline)) static dls_deleter_fn remove_shifting(size_t i, dls_deleter_fn deleter)
{
    g_table[close_gap(i)].tensor = NULL;
    dls_spin_count_add(&g_live, (size_t)-1);
    dls_spin_unlock(&g_lock);
    return deleter;
}

/* dls_exchange_remove_owned when the lock was held: waits for it. */
__attribute__((noinline, cold)) static dls_deleter_fn remove_owned_waiting(const void *tensor)
{
    dls_deleter_fn deleter;
    return dls_exchange_remove(tensor, NULL, &deleter) == 0 ? deleter : NULL;
}

dls_deleter_fn dls_exchange_remove_owned(const void *tensor)
{
    if (__builtin_expect(!dls_spin_trylock(&g_lock), 0))
        return remove_owned_waiting(tensor);
    long found = find_locked(tensor);
    if (found < 0) {
        dls_spin_unlock(&g_lock);
        return NULL;
    }
    size_t i = (size_t)found;
    dls_deleter_fn deleter = g_table[i].deleter;
    g_removed[g_removed_next++ % REMOVED_RING] = (removed_entry){tensor, g_table[i].xid};
    if (g_table[(i + 1) & (g_cap - 1)].tensor)
        return remove_shifting(i, deleter);
    g_table[i].tensor = NULL; /* empty: the other fields are written whole by the next add */
    dls_spin_count_add(&g_live, (size_t)-1);
    dls_spin_unlock(&g_lock);
    return deleter;
}

uint64_t dls_exchange_removed_xid(const void *tensor)
{
    uint64_t xid = 0;
    dls_spin_lock(&g_lock);
    for (unsigned k = 1; k <= REMOVED_RING && k <= g_removed_next; k++) {
        const removed_entry *e = &g_removed[(g_removed_next - k) % REMOVED_RING];
        if (e->tensor == tensor) {
            xid = e->xid;
            break;
        }
    }
    dls_spin_unlock(&g_lock);
    return xid;
}

size_t dls_exchange_live(void)
{
    return atomic_load_explicit(&g_live, memory_order_relaxed);
}

void dls_exchange_reset_for_tests(void)
{
    free(g_table);
    g_table = NULL;
    g_cap = 0;
    atomic_store(&g_live, 0);
    memset(g_removed, 0, sizeof g_removed);
    g_removed_next = 0;
}

void dls_exchange_set_observer(const dls_exchange_observer *obs)
{
    atomic_store_explicit(&dls_exchange_observer_now, obs, memory_order_release);
}
