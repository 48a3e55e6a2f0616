/* Capsules made but not taken apart yet (see capsule_pending.h). */
#include "capsule_pending.h"

#include "../common/map.h"
#include "../common/spin.h"

#include <stdint.h>

#define PENDING_MAX 256

typedef struct {
    const void *mt; /* the key */
    const dls_profile *row;
    const char *lib;
    uint64_t seq; /* order of creation */
} pending;

static pending g_slots[2 * PENDING_MAX];
static dls_map g_pending = DLS_MAP_OVER(DLS_MAP_WORDS, g_slots);
static uint64_t g_seq;
static dls_spin g_lock = DLS_SPIN_INIT;

/* Empties the slot of the oldest entry; the table is not empty. */
static void evict_oldest(void) DLS_REQUIRES(g_lock)
{
    size_t oldest = g_pending.cap;
    for (size_t i = 0; i < g_pending.cap; i++)
        if (g_slots[i].mt && (oldest == g_pending.cap || g_slots[i].seq < g_slots[oldest].seq))
            oldest = i;
    dls_map_remove_at(&g_pending, oldest);
}

void dls_capsule_pending_add(void *mt, const dls_profile *row, const char *lib)
{
    dls_spin_lock(&g_lock);
    size_t i = dls_map_index(&g_pending, (uintptr_t)mt);
    if (!g_slots[i].mt && dls_map_count(&g_pending) == PENDING_MAX) {
        evict_oldest();
        i = dls_map_index(&g_pending, (uintptr_t)mt);
    }
    pending *p = g_slots[i].mt ? &g_slots[i] : dls_map_claim(&g_pending, i, (uintptr_t)mt);
    *p = (pending){mt, row, lib, g_seq++};
    dls_spin_unlock(&g_lock);
}

int dls_capsule_pending_take(const void *mt, const dls_profile **row, const char **lib)
{
    if (!dls_map_count(&g_pending))
        return 0;
    int found = 0;
    dls_spin_lock(&g_lock);
    size_t i = dls_map_index(&g_pending, (uintptr_t)mt);
    if (g_slots[i].mt) {
        *row = g_slots[i].row;
        *lib = g_slots[i].lib;
        dls_map_remove_at(&g_pending, i);
        found = 1;
    }
    dls_spin_unlock(&g_lock);
    return found;
}
