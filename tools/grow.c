/* Growing arrays by doubling (see grow.h). */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>

size_t dlt_doubled(size_t cap, size_t need, size_t first)
{
    size_t c = cap ? cap : first;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return 0;
        c *= 2;
    }
    return c;
}

void *dlt_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return items;
    size_t c = dlt_doubled(*cap, need, first);
    if (!c || c > SIZE_MAX / size)
        return NULL;
    void *grown = realloc(items, c * size);
    if (grown)
        *cap = c;
    return grown;
}
