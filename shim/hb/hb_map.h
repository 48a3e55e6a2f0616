/* A hash map from 64-bit ids to 32-bit indices (open addressing, linear probing,
 * backward-shift deletion), used by the happens-before engine to find its records by the
 * caller's ids. Not thread-safe; no global state. Not common/map.h: hb includes nothing outside
 * hb/. */
#ifndef DLS_HB_MAP_H
#define DLS_HB_MAP_H

#include <stdint.h>

#define DLS_HB_NONE UINT32_MAX

typedef struct {
    uint64_t key;
    uint32_t val; /* DLS_HB_NONE: empty slot */
} dls_hb_map_ent;

typedef struct {
    dls_hb_map_ent *t;
    uint32_t cap; /* 0 or a power of two */
    uint32_t n;
} dls_hb_map;

/* Returns the index stored for key, or DLS_HB_NONE. A zeroed map is a valid empty map. */
uint32_t dls_hb_map_get(const dls_hb_map *m, uint64_t key);

/* Stores key -> val (val != DLS_HB_NONE), replacing any previous value. 0 or ENOMEM (the map is
 * then unchanged). */
int dls_hb_map_put(dls_hb_map *m, uint64_t key, uint32_t val);

/* Removes key if present. */
void dls_hb_map_del(dls_hb_map *m, uint64_t key);

/* Frees the table; the map is empty and usable afterwards. */
void dls_hb_map_free(dls_hb_map *m);

#endif
