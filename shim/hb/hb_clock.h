/* Vector clocks of the happens-before engine: entry i is the highest position of stream slot i
 * known complete before the clock's owner. Clocks are reference-counted so that an event record
 * shares its stream's clock instead of copying it (copy-on-write on the next change).
 * Not thread-safe (the engine is single-locked); no global state. */
#ifndef DLS_HB_CLOCK_H
#define DLS_HB_CLOCK_H

#include <stdint.h>

typedef struct {
    uint32_t refs;
    uint32_t len; /* entries [0, len) are stored; later ones are 0 */
    uint32_t cap;
    uint32_t pad;
    uint64_t v[];
} dls_hb_clk;

/* Entry `slot` of c (0 for a NULL clock or beyond its length). */
static inline uint64_t dls_hb_clk_get(const dls_hb_clk *c, uint32_t slot)
{
    return c && slot < c->len ? c->v[slot] : 0;
}

/* Makes *c a clock owned only by the caller with room for `need` entries: allocates an empty
 * one for NULL, copies a shared one, grows a small one. 0, or ENOMEM with *c unchanged. */
int dls_hb_clk_own(dls_hb_clk **c, uint32_t need);

/* Takes one more reference to c (NULL allowed) and returns it. */
dls_hb_clk *dls_hb_clk_share(dls_hb_clk *c);

/* Drops one reference; frees the clock with the last one. NULL is ignored. */
void dls_hb_clk_release(dls_hb_clk *c);

/* dst = max(dst, src) entry by entry. dst must be owned with cap >= src->len. Returns 1 when
 * dst changed. src may be NULL. */
int dls_hb_clk_join(dls_hb_clk *dst, const dls_hb_clk *src);

/* dst[slot] = max(dst[slot], pos). dst must be owned with cap > slot. Returns 1 when changed. */
int dls_hb_clk_raise(dls_hb_clk *dst, uint32_t slot, uint64_t pos);

/* dst = min(dst, src) entry by entry (what both know). dst must be owned; src may be NULL (then
 * dst becomes empty). */
void dls_hb_clk_meet(dls_hb_clk *dst, const dls_hb_clk *src);

#endif
