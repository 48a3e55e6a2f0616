/* Live-exchange registry and the observer slot (see exchange.h, policy_hooks.h). */
#include "exchange.h"
#include "policy_hooks.h"

#include "../common/compiler.h"
#include "../common/map.h"
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
static dls_map g_table = DLS_MAP_INIT(DLS_MAP_WORDS, dls_exchange);
static removed_entry g_removed[REMOVED_RING];
static unsigned g_removed_next;
_Atomic(const dls_exchange_observer *) dls_exchange_observer_now;

uint64_t dls_exchange_next_id(void)
{
    return dls_summary_new_exchange();
}

/* Makes room for one more entry. Called, and returns, with the lock held, which it drops to
 * allocate and to free the replaced table. Returns 0, or -1 when no memory could be found. Runs
 * once per doubling: cold, as inlined it costs each wrapped export+release 4 instructions more
 * (make bench's hooks-export-release figure, over its budget then). */
static DLS_COLD int make_room(void) DLS_REQUIRES(g_lock)
{
    while (dls_map_full(&g_table)) {
        /* Allocated without the lock; another thread may have grown the table meanwhile. */
        size_t cap = g_table.cap ? g_table.cap * 2 : 64;
        dls_spin_unlock(&g_lock);
        dls_exchange *spare = calloc(cap, sizeof *spare);
        void *old = NULL;
        dls_spin_lock(&g_lock);
        if (!spare)
            return dls_map_full(&g_table) ? -1 : 0;
        if (dls_map_full(&g_table) && cap > g_table.cap) {
            old = dls_map_rehash(&g_table, spare, cap);
            spare = NULL;
        }
        dls_spin_unlock(&g_lock);
        free(spare);
        free(old);
        dls_spin_lock(&g_lock);
    }
    return 0;
}

/* dls_exchange_make with the xid given. */
static inline void make(dls_exchange *x, const dls_exchange_origin *o, uint64_t xid)
{
    const DLTensor *t = o->view.tensor;
    const dls_profile *p = o->at;
    x->tensor = o->tensor;
    x->xid = xid;
    x->versioned = o->view.versioned;
    x->data = t->data;
    x->device = t->device;
    x->dtype = t->dtype;
    x->lo = (uintptr_t)t->data + (uintptr_t)o->extent.lo;
    x->hi = (uintptr_t)t->data + (uintptr_t)o->extent.hi;
    x->flags = o->view.flags;
    x->producer = o->is_export ? p : NULL;
    x->producer_lib = o->is_export ? o->lib : NULL;
    x->consumer = o->is_export ? NULL : p;
    x->seen_at = p;
    x->path = p->path;
    x->deleter = o->view.deleter_slot ? (dls_deleter_fn)*o->view.deleter_slot : NULL;
    x->imports = o->is_export ? 0 : 1;
    x->policy = NULL;
}

void dls_exchange_make(dls_exchange *x, const dls_exchange_origin *o)
{
    make(x, o, dls_exchange_next_id());
}

uint64_t dls_exchange_add(const dls_exchange_origin *o, dls_exchange *out)
{
    uint64_t xid = dls_exchange_next_id();
    dls_spin_lock(&g_lock);
    dls_exchange *slot = dls_map_put(&g_table, (uintptr_t)o->tensor);
    if (!slot && make_room() == 0)
        slot = dls_map_put(&g_table, (uintptr_t)o->tensor);
    if (slot) {
        make(slot, o, xid);
        if (out)
            *out = *slot;
    }
    dls_spin_unlock(&g_lock);
    if (!slot && out)
        make(out, o, xid);
    return slot ? xid : 0;
}

/* The live entry for tensor, or NULL. */
static dls_exchange *live(const void *tensor) DLS_REQUIRES(g_lock)
{
    return dls_map_get(&g_table, (uintptr_t)tensor);
}

int dls_exchange_find_tensor(const void *tensor, dls_exchange *out)
{
    dls_spin_lock(&g_lock);
    const dls_exchange *e = live(tensor);
    if (e && out)
        *out = *e;
    dls_spin_unlock(&g_lock);
    return e ? 0 : -1;
}

long dls_exchange_imports(const void *tensor)
{
    dls_spin_lock(&g_lock);
    const dls_exchange *e = live(tensor);
    long n = e ? (long)e->imports : -1;
    dls_spin_unlock(&g_lock);
    return n;
}

int dls_exchange_note_import(const void *tensor, const dls_profile *consumer, dls_exchange *out)
{
    dls_spin_lock(&g_lock);
    dls_exchange *e = live(tensor);
    if (e) {
        e->consumer = consumer;
        e->imports++;
        if (out)
            *out = *e;
    }
    dls_spin_unlock(&g_lock);
    return e ? 0 : -1;
}

int dls_exchange_keep_policy(const void *tensor, void *policy)
{
    dls_spin_lock(&g_lock);
    dls_exchange *e = live(tensor);
    if (e)
        e->policy = policy;
    dls_spin_unlock(&g_lock);
    return e ? 0 : -1;
}

int dls_exchange_remove(const void *tensor, dls_exchange *out, dls_deleter_fn *deleter)
{
    dls_spin_lock(&g_lock);
    size_t i = g_table.cap ? dls_map_index(&g_table, (uintptr_t)tensor) : 0;
    if (!g_table.cap || !dls_map_key_at(&g_table, i)) {
        dls_spin_unlock(&g_lock);
        return -1;
    }
    const dls_exchange *e = dls_map_at(&g_table, i);
    if (out)
        *out = *e;
    if (deleter)
        *deleter = e->deleter;
    g_removed[g_removed_next++ % REMOVED_RING] = (removed_entry){tensor, e->xid};
    dls_map_remove_at(&g_table, i);
    dls_spin_unlock(&g_lock);
    return 0;
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
    return dls_map_count(&g_table);
}

void dls_exchange_reset_for_tests(void)
{
    free(dls_map_take(&g_table));
    memset(g_removed, 0, sizeof g_removed);
    g_removed_next = 0;
}

void dls_exchange_set_observer(const dls_exchange_observer *obs)
{
    atomic_store_explicit(&dls_exchange_observer_now, obs, memory_order_release);
}
