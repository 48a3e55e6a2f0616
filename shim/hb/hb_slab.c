/* The happens-before engine's allocator of records (see hb_slab.h). */
#include "hb_slab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* dls_hb_grow without zeroing the new elements. */
static int reserve(void **p, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 4)
            return ENOMEM;
        ncap *= 2;
    }
    void *n = realloc(*p, (size_t)ncap * size);
    if (!n)
        return ENOMEM;
    *p = n;
    *cap = ncap;
    return 0;
}

int dls_hb_grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
    uint32_t old = *cap;
    int rc = reserve(p, cap, need, size);
    if (rc == 0 && *cap > old)
        memset((char *)*p + (size_t)old * size, 0, (size_t)(*cap - old) * size);
    return rc;
}

int dls_hb_slab_grow(dls_hb_slab *s, void **items, size_t size)
{
    uint32_t cap = s->cap, capfree = s->cap;
    if (dls_hb_grow(items, &cap, s->n + 1, size) != 0 ||
        reserve((void **)&s->free, &capfree, cap, sizeof *s->free) != 0)
        return ENOMEM; /* a grown array keeps its old count: the next reserve grows it again */
    s->cap = cap;
    return 0;
}

void dls_hb_slab_free(dls_hb_slab *s)
{
    free(s->free);
    memset(s, 0, sizeof *s);
}
