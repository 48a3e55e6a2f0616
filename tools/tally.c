/* String-keyed counters (see tally.h), on the shim's hash map (common/map.h). */
#include "tally.h"
#include "grow.h"

#include "common/map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The map over t's slots: a view that lives for one call, whose count is copied back. */
static dls_map map_of(const dlt_tally *t)
{
    return (dls_map){t->slots, t->cap, sizeof *t->slots, DLS_MAP_STRINGS, t->n};
}

/* Room for one more key, doubling the slots from 64 and moving every entry. */
static int make_room(dlt_tally *t)
{
    dls_map m = map_of(t);
    if (!dls_map_full(&m))
        return 0;
    size_t cap = dlt_doubled(t->cap, (t->n + 1) * 2, 64);
    dlt_tally_entry *slots = cap ? calloc(cap, sizeof *slots) : NULL;
    if (!slots)
        return -1;
    free(dls_map_rehash(&m, slots, cap));
    t->slots = slots;
    t->cap = cap;
    return 0;
}

dlt_tally_entry *dlt_tally_add(dlt_tally *t, const char *key, int *is_new)
{
    if (is_new)
        *is_new = 0;
    if (make_room(t) != 0)
        return NULL;
    dls_map m = map_of(t);
    size_t i = dls_map_index(&m, (uintptr_t)key);
    if (dls_map_key_at(&m, i))
        return &t->slots[i];
    char *copy = strdup(key);
    if (!copy)
        return NULL;
    dlt_tally_entry *e = dls_map_claim(&m, i, (uintptr_t)copy);
    *e = (dlt_tally_entry){.key = copy};
    t->n = dls_map_count(&m);
    if (is_new)
        *is_new = 1;
    return e;
}

dlt_tally_entry *dlt_tally_find(const dlt_tally *t, const char *key)
{
    dls_map m = map_of(t);
    return dls_map_get(&m, (uintptr_t)key);
}

static int by_count(const void *a, const void *b)
{
    const dlt_tally_entry *x = *(dlt_tally_entry *const *)a, *y = *(dlt_tally_entry *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

dlt_tally_entry **dlt_tally_sorted(const dlt_tally *t)
{
    if (!t->n)
        return NULL;
    dlt_tally_entry **v = malloc(t->n * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].key)
            v[k++] = &t->slots[i];
    qsort(v, k, sizeof *v, by_count);
    return v;
}

void dlt_tally_free(dlt_tally *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].key);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
