/* Open-addressing string hash table with counters (see tally.h). */
#include "tally.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static dlt_tally_entry *probe(dlt_tally_entry *slots, size_t cap, const char *key)
{
    size_t i = (size_t)hash(key) & (cap - 1);
    while (slots[i].key && strcmp(slots[i].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static int grow(dlt_tally *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    dlt_tally_entry *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].key)
            *probe(slots, cap, t->slots[i].key) = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

dlt_tally_entry *dlt_tally_add(dlt_tally *t, const char *key, int *is_new)
{
    if (is_new)
        *is_new = 0;
    if ((t->n + 1) * 2 > t->cap && grow(t) != 0)
        return NULL;
    dlt_tally_entry *e = probe(t->slots, t->cap, key);
    if (!e->key) {
        e->key = strdup(key);
        if (!e->key)
            return NULL;
        t->n++;
        if (is_new)
            *is_new = 1;
    }
    return e;
}

dlt_tally_entry *dlt_tally_find(const dlt_tally *t, const char *key)
{
    if (!t->cap)
        return NULL;
    dlt_tally_entry *e = probe(t->slots, t->cap, key);
    return e->key ? e : NULL;
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
