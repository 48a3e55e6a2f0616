/* Growing arrays by doubling: the one rule the command's growing arrays and tables follow. */
#ifndef DLT_GROW_H
#define DLT_GROW_H

#include <stddef.h>

/* The capacity that holds need: cap doubled (from first when cap is 0, first > 0) until it is at
 * least need; cap itself when it already holds need; 0 when doubling would overflow. */
size_t dlt_doubled(size_t cap, size_t need, size_t first);

/* Makes the array items (NULL, or malloc'd with room for *cap elements of size bytes) hold at
 * least need > 0 elements: reallocated to dlt_doubled(*cap, need, first) elements when it does not
 * already. Returns the array, moved or not, with *cap its new capacity; NULL when memory runs out
 * or the size overflows, items and *cap then unchanged (the caller still owns items). */
void *dlt_grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

#endif
